"""Early exit with its parameters varied (docs/faults.md, "Early exit"): rank LEAVER
(argv[1]) leaves without join() after serving rounds 0-2 of stream 'a' and 0-5 of
stream 'b' (every rank a member of every round, rounds that wait for every member, so
its engine serves exactly the rounds its app called), while the others wait in round 0
of stream 'c', which it never called. Each other rank then calls the round after the
last one the leaver served, of each stream, and a new stream: every call must fail,
naming the leaver, its last round of that stream and the round that needs it. Then
join(): it must not hang (the error it raises is recorded)."""
import glob
import os
import sys
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

leaver = int(sys.argv[1])
hvd.init(sync_period=5)
rank, size = hvd.rank(), hvd.size()
knobs = dict(group_size=size, wait_avoiding=False, global_rounds="blocking")
results = os.environ["WAGMA_TEST_RESULTS"]
x = torch.full((4,), float(rank))
for _ in range(3):
    x = hvd.group_allreduce(x, name="a", **knobs)
for _ in range(6):
    x = hvd.group_allreduce(x, name="b", **knobs)


def attempt(fn):
    t0 = time.monotonic()
    try:
        fn()
        return {"error": None, "seconds": time.monotonic() - t0}
    except Exception as e:  # noqa: BLE001 - the test checks the type and text
        return {"type": type(e).__name__, "error": str(e), "seconds": time.monotonic() - t0}


if rank == leaver:
    # Leave once the others wait in stream 'c' (their marker files), without join().
    deadline = time.monotonic() + 60
    while len(glob.glob(os.path.join(results, "waiting_in_c.*"))) < size - 1 \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    emit(rank, left=True)
    sys.exit(0)
pending = hvd.group_allreduce_async(x, name="c", **knobs)
open(os.path.join(results, f"waiting_in_c.{rank}"), "w").close()
out = {"c": attempt(lambda: hvd.synchronize(pending))}
# api.md: poll() is True once synchronize() will not block, a failed handle included;
# synchronize() again raises the same error.
try:
    out["c_polled"] = hvd.poll(pending)
except Exception as e:  # noqa: BLE001 - the test checks it returned True
    out["c_polled"] = f"{type(e).__name__}: {e}"
out["c_again"] = attempt(lambda: hvd.synchronize(pending))
out["a"] = attempt(lambda: hvd.group_allreduce(x, name="a", **knobs))
out["b"] = attempt(lambda: hvd.group_allreduce(x, name="b", **knobs))
out["late"] = attempt(lambda: hvd.group_allreduce(x, name="late", **knobs))
out["a_again"] = attempt(lambda: hvd.group_allreduce(x, name="a", **knobs))
out["stats"] = {n: hvd.stats(n)["errors"] for n in ("a", "b")}
out["join"] = attempt(hvd.join)
emit(rank, **out)
time.sleep(3)  # leaving now would be news for peers still at work
