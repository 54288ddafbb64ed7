"""A rank that exits early and normally, without join(): its engine says goodbye at
exit, and the others' next round that needs it fails with an error naming it.

argv: the rank that leaves; then "join": the others call join() (uneven data) and the
leaver exits while they are joining: their join() fails naming it."""
import glob
import os
import sys
import time

import frameworks as fw
from common import capture, emit

hvd = fw.hvd
leaver = int(sys.argv[1])
hvd.init(group_size=2, sync_period=5)
rank = hvd.rank()
x = fw.tensor([float(rank)] * 6, "float32")
for r in range(7):
    x = hvd.group_allreduce(x, name="w")
if sys.argv[2:] == ["join"]:
    results = os.environ["WAGMA_TEST_RESULTS"]
    if rank == leaver:
        # Leave once every other rank is about to call join() (and a moment later, so
        # that their joins are under way).
        deadline = time.monotonic() + 60
        while len(glob.glob(os.path.join(results, "joining.*"))) < hvd.size() - 1:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        time.sleep(1.0)
        emit(rank, left_after=6)
        sys.exit(0)
    open(os.path.join(results, f"joining.{rank}"), "w").close()
    out = {}
    capture(out, "join", hvd.join)
    emit(rank, **out)
    sys.exit(0)
if rank == leaver:
    emit(rank, left_after=6)
    sys.exit(0)  # a normal exit: atexit shuts the engine down
error, seconds, failed_round = None, None, None
for r in range(7, 40):
    t0 = time.monotonic()
    try:
        x = hvd.group_allreduce(x, name="w")
    except Exception as e:  # noqa: BLE001 - the test checks type and text
        error, seconds, failed_round = f"{type(e).__name__}: {e}", time.monotonic() - t0, r
        break
# A stream that starts after the rank left can never run; rank 0 leaving also takes
# the validation of every new stream with it.
late = {}
capture(late, "new_stream", lambda: hvd.group_allreduce(x, name="late"))
emit(rank, error=error, seconds=seconds, failed_round=failed_round, **late)
# Stay a moment: this rank leaving now would be news for peers still at work.
time.sleep(5)
