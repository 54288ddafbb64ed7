"""A rank that exits early and normally, without join(): its engine says goodbye at
exit, and the others' next round that needs it fails with an error naming it.

argv: the rank that leaves."""
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
