"""A scripted straggler for stats(): on 2 ranks (one group), rank 1 sleeps before
each of rounds 1..5 while rank 0 runs them at once, so rank 0 activates all five and
rank 1's engine joins all five passively with its round-0 output. Then a stream of
blocking global rounds ("g") whose round 1 rank 1 enters 0.6 s late: rank 0's app
waits there (global_wait_s), rank 1's does not. Then a stream ("a") whose round 1
completes while rank 0, which called it async, still computes: no wait counted."""
import os
import time

import frameworks as fw
from common import emit

hvd = fw.hvd
hvd.init(group_size=2, sync_period=100)
rank = hvd.rank()
n = 1000
x = fw.tensor([float(rank)] * n, "float32")
x = hvd.group_allreduce(x, name="s")  # round 0, global
if rank == 1:
    time.sleep(1.0)
for r in range(1, 6):
    x = hvd.group_allreduce(x, name="s")
    if rank == 1:
        time.sleep(0.05)
y = hvd.group_allreduce(fw.tensor([1.0, 2.0], "float32"), name="other")
g = fw.tensor([float(rank)] * 8, "float32")
g = hvd.group_allreduce(g, name="g", sync_period=1)  # round 0: both ranks
if rank == 1:
    time.sleep(0.6)
g = hvd.group_allreduce(g, name="g", sync_period=1)  # round 1: rank 0 waits for rank 1
# An async round that completes while the app computes: rank 1 enters round 1 0.3 s
# late, rank 0 synchronizes 1 s after its call. Rank 0 never waited.
a = hvd.group_allreduce(fw.tensor([1.0] * 8, "float32"), name="a", sync_period=1)
if rank == 1:
    time.sleep(0.3)
    a = hvd.group_allreduce(a, name="a", sync_period=1)
else:
    handle = hvd.group_allreduce_async(a, name="a", sync_period=1)
    time.sleep(1.0)
    a = hvd.synchronize(handle)
try:
    hvd.stats("no-such-stream")
    unknown = None
except ValueError as e:
    unknown = str(e)
emit(rank, s=hvd.stats("s"), g=hvd.stats("g"), a=hvd.stats("a"), all=sorted(hvd.stats()), unknown=unknown,
     timeline=os.environ.get("WAGMA_TIMELINE"))
