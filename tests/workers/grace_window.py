"""The grace window (docs/design.md, section 2.4a): a passive join of the round a rank's
app calls next waits a little for that app's fresh value.

Usage: grace_window.py SCENARIO... where a scenario is
  "jitter,STEP_MS,LATE_MS,ROUNDS": ranks at equal speed, group size 2, wait-avoiding
      group rounds; in each round a random half of the ranks (the same draw on every
      rank) enters LATE_MS late. Round r's input is rank * 1000 + r, never an
      output, so a stale contribution shows in the result: with every member fresh, a
      pair's mean minus r is a multiple of 500; a stale value (last round's) leaves
      half a unit off. Each rank reports, per round, whether its result was exact;
  "straggler,STEP_MS,ROUNDS": the last rank twice as slow; its app is always far
      behind its peers' activations, so the window must stay shut there.
Each reports the stream's statistics and the wall time per round.
"malformed" alone: rank 0 sets HOROVOD_WAGMA_GRACE_FRACTION=0.3x before init."""
import os
import random
import sys
import time

if sys.argv[1] == "malformed":
    from world import launch_rank
    from common import capture, emit

    rank = launch_rank()
    if rank == 0:
        os.environ["HOROVOD_WAGMA_GRACE_FRACTION"] = "0.3x"
    import horovod_wagma.torch as hvd  # noqa: E402  (after the setting, as a user would)

    out = {}
    capture(out, "init", hvd.init)
    emit(rank, **out)
    sys.exit(0)

import frameworks as fw  # noqa: E402
from common import run_scenarios  # noqa: E402

hvd = fw.hvd
hvd.init()
rank, size = hvd.rank(), hvd.size()
KNOBS = dict(group_size=2, sync_period=1000, wait_avoiding=True)


def jitter(spec):
    _, step_ms, late_ms, rounds = spec.split(",")
    step_s, late_s, rounds = float(step_ms) / 1e3, float(late_ms) / 1e3, int(rounds)
    name = f"grace.{spec}"
    exact = []
    t0 = time.monotonic()
    paced_from = None  # when round 0 (global, blocking: every rank at once) returned
    for r in range(rounds):
        late = random.Random(r).sample(range(size), size // 2)
        delay = step_s + (late_s if rank in late else 0.0)
        # On a common clock, so that lateness stays LATE_MS: relative sleeps let each
        # rank's lateness add up (a random walk, which wait-avoiding rounds never pull
        # back) until a rank was more than the window's cap behind in some rounds
        # (exact share 0.75 on 3 ranks, TensorFlow, one run in three).
        time.sleep(delay if paced_from is None else
                   max(0.0, paced_from + (r - 1) * step_s + delay - time.monotonic()))
        x = fw.tensor([rank * 1000.0 + r] * 16)
        y = fw.numpy(hvd.group_allreduce(x, name=name, **KNOBS))
        if r == 0:
            paced_from = time.monotonic()
        exact.append(any(bool((((y - r) * g) % 1000 == 0).all()) for g in range(1, size + 1)))
    return dict(exact=exact, seconds=time.monotonic() - t0, stream=hvd.stats(name))


def straggler(spec):
    _, step_ms, rounds = spec.split(",")
    step_s, rounds = float(step_ms) / 1e3, int(rounds)
    name = f"grace.{spec}"
    x = fw.tensor([float(rank)] * 16)
    t0 = time.monotonic()
    for _ in range(rounds):
        time.sleep(step_s * (2 if rank == size - 1 else 1))
        x = hvd.group_allreduce(x, name=name, **KNOBS)
    return dict(seconds=time.monotonic() - t0, stream=hvd.stats(name))


run_scenarios({spec: (lambda spec=spec: (jitter if spec.startswith("jitter") else straggler)(spec))
               for spec in sys.argv[1:]}, sys.argv[1:])
