"""What each rank runs in the multi-host checks (multihost/checks.py), one scenario per
argv[1]; each rank writes its result as JSON (tests/workers/common.emit).

  gossip            exactness across hosts, blocking and wait-avoiding global rounds
                    (tests/workers/gossip.py's run_config against tests/reference.py)
  straggler SLOW_HOST_RANKS STEP_S ROUNDS MODE:FACTOR [MODE:FACTOR ...]
                    per configuration, in turn in one launch: the ranks of one host take
                    FACTOR times longer per step; each rank reports how long it waited
                    in synchronize per round
  train_forever     optimizer steps until the job is killed or a round fails; reports
                    the error text and how long after the fault it came
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "workers"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from mpi4py import MPI  # noqa: E402

from common import emit  # noqa: E402

import horovod_wagma.torch as hvd  # noqa: E402
from horovod_wagma.common.op import engine_lib  # noqa: E402


def gossip(rank, size):
    import itertools
    from gossip import run_config
    comm = MPI.COMM_WORLD
    errors = {}
    for S, tau, dtype, mode in itertools.product([2, 3], [1, 3], ["float64", "float32"],
                                                 ["blocking", "wait_avoiding"]):
        name, err = run_config(comm, rank, size, S, tau, dtype, True, "fresh", 33, mode)
        errors[name] = err
    # Large tensors: the reduce-scatter/allgather path, across hosts.
    name, err = run_config(comm, rank, size, 3, 4, "float32", True, "fresh", 50001)
    errors[name] = err
    emit(rank, errors=errors, stats=engine_lib.stats())


def straggler(rank, slow_ranks, step_s, rounds, configs):
    """Each MODE:FACTOR configuration on its own stream, one after the other; a barrier
    starts each one on every rank together, as a launch of its own would."""
    out = {}
    for config in configs:
        mode, factor = config.split(":")
        MPI.COMM_WORLD.Barrier()
        out[config] = straggler_run(rank, mode, slow_ranks, step_s, float(factor), rounds)
    emit(rank, configs=out)


def straggler_run(rank, mode, slow_ranks, step_s, factor, rounds):
    import torch
    slow = rank in {int(r) for r in slow_ranks.split(",")}
    name = f"straggler.{mode}.{factor:g}"
    x = torch.full((4096,), float(rank))
    waits, served, called_at = [], [], []
    t_start = time.monotonic()
    # Until served the last round: a slow rank skips rounds with wait-avoiding ones.
    while not served or served[-1] < rounds - 1:
        time.sleep(step_s * (factor if slow else 1.0))
        h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=5,
                                      global_rounds=mode)
        t0 = time.monotonic()
        called_at.append(time.time())  # one clock for every host here: a diagnosis aid
        x = hvd.synchronize(h)
        waits.append(time.monotonic() - t0)
        served.append(h.round)
    return dict(slow=slow, waits=waits, served=served, called_at=called_at,
                seconds=time.monotonic() - t_start, stream=hvd.stats(name))


def train_forever(rank, size):
    """A few optimizer steps, then steps until something fails; the check cuts a
    host's link or kills its processes meanwhile (it reads 'ready.RANK')."""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 8)
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                        named_parameters=model.named_parameters())
    results = os.environ["WAGMA_TEST_RESULTS"]
    steps, error = 0, None
    try:
        while True:
            opt.zero_grad()
            model(torch.randn(16, 64)).pow(2).mean().backward()
            opt.step()
            steps += 1
            if steps == 20:
                with open(os.path.join(results, f"ready.{rank}"), "w") as f:
                    f.write(str(os.getpid()))  # a killed host's check matches MPI's report
            time.sleep(0.01)
    except Exception as e:  # noqa: BLE001 - the check inspects the text
        error = f"{type(e).__name__}: {e}"
    emit(rank, error=error, steps=steps, at=time.time())
    _await_survivors(results, size, error)
    # A survivor leaves without MPI_Finalize, which would wait for the lost ranks.
    # mpirun then ends the job.
    os._exit(1)


def _await_survivors(results, size, error, cap_s=30.0):
    """Waits (at most cap_s) until every rank the error does not name as lost has
    written its result. The first survivor to exit non-zero makes mpirun abort the
    rest, and a survivor whose own stall deadline came a moment later would be killed
    before it could report (a CI run: rank 3 raised, rank 1 was killed still waiting)."""
    import re
    m = re.search(r"ranks not responding: \[([0-9, ]*)\]", error or "")
    lost = {int(x) for x in m.group(1).split(",") if x.strip()} if m else set()
    deadline = time.monotonic() + cap_s
    while time.monotonic() < deadline:
        if all(os.path.exists(os.path.join(results, f"rank{r}.json"))
               for r in range(size) if r not in lost):
            return
        time.sleep(0.1)


def main():
    scenario = sys.argv[1]
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    if scenario == "gossip":
        gossip(rank, size)
    elif scenario == "straggler":
        straggler(rank, sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
    elif scenario == "train_forever":
        train_forever(rank, size)
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    main()
