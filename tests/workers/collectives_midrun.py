"""Training loops in Horovod's usual shape, with the optimizer's defaults (for SGD:
averaging "local"; for Adam: "follow" and the group's second moment; wait-avoiding
global rounds), that also call Horovod collectives mid-run,
under stragglers. Each scenario must run to its end (the test's mpirun timeout
catches a hang); each rank reports the model stream's stats.

Usage: collectives_midrun.py PATTERN STEPS SCENARIO [SCENARIO ...]
  PATTERN   random      two ranks per step (drawn from a seed every rank shares)
                        sleep DELAY_S more than the base step;
            persistent  the last rank's steps take SLOW_FACTOR times as long;
            held        one rank (the last) sleeps HELD_S once, at step 5: the old
                        cycle (its partners' engines would have waited for their
                        apps, which wait in a collective for it).
            ahead       the reverse: every rank but the last sleeps HELD_S once, at
                        step 5, while the last runs on alone to the next collective.
                        With group_size = P, so that each of its rounds takes in the
                        sleepers' engines: they serve more rounds than a joined rank
                        remembers, and their apps must skip them all on waking.
            A scenario written PATTERN@SCENARIO runs under that pattern instead.
  OPTIMIZER A scenario written adam+SCENARIO wraps torch.optim.Adam instead of SGD
            with momentum: the Adam family's defaults (averaging "follow", the
            group's second moment, whose own stream runs beside the model's).
  SCENARIO  allreduce:K     hvd.allreduce of a metric every K steps;
            checkpoint:K    every K steps ("epoch end"): hvd.barrier(), then
                            hvd.broadcast_object of a state dict from rank 0;
            join:EXTRA      rank r runs STEPS + r * EXTRA steps, then Horovod's
                            hvd.join();
            wjoin:EXTRA     the same, then horovod_wagma's join() (its engine serves
                            the others' rounds with its final model, and Horovod's
                            join runs beside it);
            sync:K          the optimizer's sync() every K steps, then an
                            hvd.allreduce of the parameter checksum;
            late:K          every K steps a new WAGMA stream (wait-avoiding global
                            rounds) is created at the same step count on every rank
                            and called three times in a row: round 0 registers it,
                            rounds 1 and 2 are activated right after.
Scenarios run one after the other in this launch, each with a fresh optimizer.
"""
import random
import sys
import time

import torch
import torch.nn as nn
import horovod.torch as hvd_plain  # the collectives come from Horovod itself

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib
from horovod_wagma.torch import DistributedWagmaOptimizer

BASE_S, DELAY_S, SLOW_FACTOR, HELD_S, TAU = 0.002, 0.02, 3.0, 1.5, 5

pattern, steps = sys.argv[1], int(sys.argv[2])
scenarios = sys.argv[3:]
hvd.init()
rank, size = hvd.rank(), hvd.size()
torch.set_num_threads(1)


def step_sleep(pattern, step, rng):
    t = BASE_S
    if pattern == "random":
        if rank in rng.sample(range(size), 2):
            t += DELAY_S
    elif pattern == "persistent":
        t *= SLOW_FACTOR if rank == size - 1 else 1.0
        t += 0.004 if rank == size - 1 else 0.0
    elif pattern == "held":
        if rank == size - 1 and step == 5:
            t += HELD_S
    elif pattern == "ahead":
        if rank != size - 1 and step == 5:
            t += HELD_S
    else:
        raise ValueError(pattern)
    time.sleep(t)


def run(index, scenario):
    own_pattern, _, spec = scenario.rpartition("@")
    optimizer, _, spec = spec.rpartition("+")
    kind, arg = spec.split(":")
    k = int(arg)
    torch.manual_seed(index)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    inner = (torch.optim.Adam(model.parameters(), lr=0.005) if optimizer == "adam" else
             torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    opt = DistributedWagmaOptimizer(
        inner,
        named_parameters=model.named_parameters(), sync_period=TAU,
        **({"group_size": size} if own_pattern == "ahead" else {}))
    hvd_plain.broadcast_parameters(model.state_dict(), root_rank=0)
    rng = random.Random(1000 + index)  # the same draws on every rank
    data = torch.Generator().manual_seed(rank)
    my_steps = steps + (rank * k if kind in ("join", "wjoin") else 0)
    collective_s, step_wait_s, collectives = 0.0, [], 0
    for step in range(my_steps):
        step_sleep(own_pattern or pattern, step, rng)
        opt.zero_grad()
        x = torch.randn(16, 32, generator=data)
        loss = model(x).pow(2).mean()
        loss.backward()
        t0 = time.monotonic()
        opt.step()
        step_wait_s.append(time.monotonic() - t0)
        t0 = time.monotonic()
        if kind == "allreduce" and (step + 1) % k == 0:
            hvd_plain.allreduce(loss.detach(), name=f"metric{index}")
            collectives += 1
        elif kind == "checkpoint" and (step + 1) % k == 0:
            hvd_plain.barrier()
            state = hvd_plain.broadcast_object(
                {"step": step, "model": model.state_dict()} if rank == 0 else None,
                root_rank=0, name=f"ckpt{index}")
            assert state["step"] == step
            collectives += 1
        elif kind == "late" and (step + 1) % k == 0:
            v = torch.full((64,), float(rank))
            for _ in range(3):
                # The pattern in the name: a resident launch runs both patterns, and a
                # stream of the same name would go on from the first run's rounds.
                v = hvd.group_allreduce(v, name=f"late.{pattern}{index}.{step}", sync_period=3,
                                        global_rounds="wait_avoiding")
            assert abs(float(v.mean()) - (size - 1) / 2) < 1e-3 * size, float(v.mean())
            collectives += 1
        elif kind == "sync" and (step + 1) % k == 0:
            opt.sync()
            flat = torch.cat([p.detach().flatten() for p in model.parameters()])
            total = hvd_plain.allreduce(flat.sum(), op=hvd_plain.Sum, name=f"sum{index}")
            assert abs(float(total) - size * float(flat.sum())) < 1e-3 * (1 + abs(float(total)))
            collectives += 1
        collective_s += time.monotonic() - t0
    joined_at = time.time()  # wall clock: compared across the ranks of one host
    if kind == "join":
        last = hvd_plain.join()
        collectives += 1
    elif kind == "wjoin":
        last = hvd.join()
        collectives += 1
    else:
        last = None
    status = opt.wagma_status()
    stats = hvd.stats(status.stream())
    print(f"rank {rank}: {scenario} done ({my_steps} steps)", flush=True)
    return dict(scenario=scenario, steps=my_steps, collectives=collectives,
                averaging=status.averaging,
                finite=all(bool(torch.isfinite(p).all()) for p in model.parameters()),
                collective_s=collective_s, step_wait_s=step_wait_s, last_joined=last,
                joined_at=joined_at,
                stream=stats, early_activations=engine_lib.stats()["early_activations"])


results = [run(i, s) for i, s in enumerate(scenarios)]
# A scenario that ends without a collective (held@..., allreduce:K when K does not
# divide the steps) may leave a lagging rank with rounds to run: the others' engines
# serve them until every rank has joined, as a user's script ends.
hvd.join()
emit(rank, pattern=pattern, tau=TAU, results=results)
