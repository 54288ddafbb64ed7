"""Mid-run mismatches: a rank changes a stream's shape (or a knob) at a later round.
Every rank must get an error naming that rank, within seconds, never a hang."""
import frameworks as fw
from common import capture, emit

hvd = fw.hvd
hvd.init(group_size=2, sync_period=4)
rank = hvd.rank()
out = {}


def attempt(key, fn):
    capture(out, key, fn)


x = fw.tensor([float(rank)] * 4, "float32")
for r in range(4):
    x = hvd.group_allreduce(x, name="mismatch.shape")
# Round 4 is a group round: rank 1 finishes it at once (wait-avoiding) and fails
# round 5 while the others have not called round 4 yet. They must still get it.
if rank != 1:
    import time
    time.sleep(1.0)
attempt("before", lambda: hvd.group_allreduce(x, name="mismatch.shape"))
bad = fw.tensor([1.0] * (5 if rank == 1 else 4), "float32")
attempt("shape", lambda: [hvd.group_allreduce(bad, name="mismatch.shape") for _ in range(6)])
# Once failed, the stream fails fast on every rank.
attempt("shape_again",
        lambda: hvd.group_allreduce(fw.tensor([1.0] * 4, "float32"), name="mismatch.shape"))

y = fw.tensor([float(rank)] * 3, "float32")
for r in range(2):
    y = hvd.group_allreduce(y, name="mismatch.knob", sync_period=4)
period = 6 if rank == 2 else 4
attempt("knob", lambda: [hvd.group_allreduce(y, name="mismatch.knob", sync_period=period)
                         for _ in range(6)])
attempt("good", lambda: hvd.group_allreduce(fw.tensor([1.0] * 2, "float32"), name="mismatch.good"))
emit(rank, **out)
