"""Uneven data: rank r runs 3 + 2r rounds, then calls join(). Its engine must keep
serving every round with its final value until all have joined, with no hang and no
error. Without wait-avoidance the results are deterministic, so every rank reports
its inputs and outputs and the test replays the exact expected values.

Usage: uneven.py SCENARIO... with scenarios "op", "optimizer", "repeated_joins" and
"horovod_collectives" (own streams each)."""
import random
import sys
import time

import numpy as np
import torch

from common import run_scenarios

import horovod_wagma.torch as hvd

hvd.init(group_size=2, sync_period=4, wait_avoiding=False)
rank, size = hvd.rank(), hvd.size()


def op():
    steps = 3 + 2 * rank
    x = torch.tensor([float(rank), 10.0 * rank + 1.0], dtype=torch.float64)
    inputs, outputs = [], []
    for k in range(steps):
        x = x + (k + 1) * (rank + 1)  # a local "update", known to the test
        inputs.append(x.tolist())
        x = hvd.group_allreduce(x, name="uneven")
        outputs.append(x.tolist())
    last = hvd.join()
    stats = hvd.stats("uneven")
    # Training goes on after join() (faults.md): every rank continues from the round
    # after the furthest any rank reached (round 9 here), whatever its own count.
    after_input = (x + 100.0 * (rank + 1)).tolist()
    after_output = hvd.group_allreduce(torch.tensor(after_input, dtype=torch.float64),
                                       name="uneven").tolist()
    return dict(steps=steps, inputs=inputs, outputs=outputs, last=last, stats=stats,
                phases=hvd.groups(size, 2), after_input=after_input,
                after_output=after_output)


def optimizer():
    """Uneven batches (20 + 7 r), SGD with momentum (on_sync state), blocking global
    rounds every 5th step; join(), sync(), then training goes on (faults.md: with
    blocking global rounds every rank continues from the furthest step any rank
    reached, 41): 4 more steps, rounds 41-43 (group rounds) and 44 (global), whose
    duties average the momentum. Returns the served rounds of those steps, the
    momentum after round 43 and the model and momentum after round 44."""
    torch.manual_seed(rank)
    model = torch.nn.Linear(4, 1)
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.05,
                                                        momentum=0.9),
                                        named_parameters=model.named_parameters(),
                                        group_size=2, sync_period=5, wait_avoiding=True,
                                        global_rounds="blocking")  # aligned steps
    gen = torch.Generator().manual_seed(100 + rank)
    batches = 20 + 7 * rank  # uneven data

    def step():
        xb = torch.randn(8, 4, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), xb.sum(1, keepdim=True)).backward()
        opt.step()

    def momentum():
        return torch.cat([opt.state[p]["momentum_buffer"].view(-1)
                          for p in model.parameters()]).double().tolist()
    for _ in range(batches):
        step()
    last = opt.join()
    opt.sync()  # every rank again in step: a global average, identical everywhere
    flat = torch.cat([p.data.view(-1) for p in model.parameters()]).double()
    out = dict(last=last, round=opt.wagma_status().steps, model=flat.tolist(),
               finite=bool(np.isfinite(flat.numpy()).all()))
    served_after = []
    for k in range(4):
        step()
        served_after.append(opt.wagma_status().served_round)
        if k == 2:
            out["momentum_43"] = momentum()
    out.update(served_after=served_after, steps_after=opt.wagma_status().steps,
               momentum_44=momentum(),
               model_44=torch.cat([p.data.view(-1) for p in model.parameters()])
               .double().tolist())
    return out


def repeated_joins(cycles=150):
    """A join() after every few blocking global rounds, each cycle on a new stream (as a
    new optimizer after each epoch's join), with random jitter of up to 2 ms so that
    the notices of one join and the end of the last one cross. Every round is exact
    and no rank's engine joins a blocking round in its app's place. Returns the cycles
    whose average was wrong and the passive joins per cycle where any."""
    rng = random.Random(rank)
    expected = torch.full((16,), (size - 1) / 2, dtype=torch.float64)
    wrong, passive = [], {}
    for c in range(cycles):
        x = torch.full((16,), float(rank), dtype=torch.float64)
        for _ in range(3):
            time.sleep(rng.uniform(0, 0.002))
            y = hvd.group_allreduce(x, name=f"cycle{c}", sync_period=1,
                                    global_rounds="blocking")
            if not torch.equal(y, expected):
                wrong.append(c)
        joined_for_me = hvd.stats(f"cycle{c}")["passive_joins"]
        if joined_for_me:
            passive[c] = joined_for_me
        time.sleep(rng.uniform(0, 0.001))
        hvd.join()
    return dict(wrong=wrong, passive=passive)


def horovod_collectives():
    """Horovod's own collectives served during join() (docs/faults.md: it calls
    hvd.join() underneath): rank 0 runs out of data after one WAGMA round and sits in
    join() while the others run three more WAGMA rounds, each followed by a Horovod
    allreduce (Sum; a joined rank contributes zeros), then join, rank 3 last."""
    x = torch.full((4,), float(rank), dtype=torch.float64)
    x = hvd.group_allreduce(x, name="f4")  # round 0, every rank
    sums = []
    if rank != 0:
        for k in range(3):
            x = hvd.group_allreduce(x, name="f4")
            total = hvd.allreduce(torch.tensor([float(rank + 10 * k)]), op=hvd.Sum,
                                  name=f"f4.metric{k}")
            sums.append(float(total))
        if rank == size - 1:
            time.sleep(0.3)  # the last to join, by far more than Horovod's cycles
    t0 = time.monotonic()
    last = hvd.join()
    return dict(sums=sums, last=last, join_s=time.monotonic() - t0,
                stats=hvd.stats("f4"))


run_scenarios({"op": op, "optimizer": optimizer, "repeated_joins": repeated_joins,
               "horovod_collectives": horovod_collectives}, sys.argv[1:])
