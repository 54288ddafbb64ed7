"""A stuck rank (SIGSTOP): the inspector (rank 0) names it after
WAGMA_STALL_WARNING_S, and with WAGMA_STALL_TIMEOUT_S the waiting ranks raise; then a
new stream's round 0, which the stopped rank cannot register, times out the same way.
The stopped rank writes its pid; the test resumes it once the others are done.

A group round stalls beside the global one: stream 'g' has group rounds that wait for
every member (wait_avoiding=False). With 3 ranks in groups of 2 its round 3 is the
group [1, 2] (phase 2; rank 0 is alone), so rank 1, which enters it (async) before
its global round 4 of 'w', waits there for the stopped rank 2 too. That round's
inspector is its first member, rank 1 (not rank 0, which is not in it): rank 1 names
rank 2 as not waiting in it, and its handle fails at the timeout with rank 1's note."""
import os
import signal
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

hvd.init(group_size=2, sync_period=5)
rank = hvd.rank()
stuck = hvd.size() - 1
BLOCKING = dict(wait_avoiding=False, global_rounds="blocking")
x = torch.full((4,), float(rank))
g = torch.full((3,), float(rank))
for r in range(4):
    x = hvd.group_allreduce(x, name="w")
    if r < 3:
        g = hvd.group_allreduce(g, name="g", **BLOCKING)  # rounds 0 (global), 1, 2
if rank == stuck:
    with open(os.path.join(os.environ["WAGMA_TEST_RESULTS"], "stuck.pid"), "w") as f:
        f.write(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)  # the test sends SIGCONT later
    emit(rank, resumed=True)
else:
    # Rank 1: round 3 of 'g', the group [1, 2], waits for the stopped rank beside the
    # global round below.
    held, held_at = None, time.monotonic()
    if rank == 1:
        held = hvd.group_allreduce_async(g, name="g", **BLOCKING)
    t0 = time.monotonic()
    try:
        hvd.group_allreduce(x, name="w")  # round 4: global, the stuck rank never comes
        error = None
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {e}"
    seconds = time.monotonic() - t0
    errors = hvd.stats("w")["errors"]
    group = None
    if held is not None:
        try:
            hvd.synchronize(held)
            group = {"error": None}
        except Exception as e:  # noqa: BLE001
            group = {"error": f"{type(e).__name__}: {e}"}
        group.update(seconds=time.monotonic() - held_at, errors=hvd.stats("g")["errors"])
    # A new stream while the stuck rank is still stopped: its round 0 can never be
    # validated, and WAGMA_STALL_TIMEOUT_S ends that wait too.
    t0 = time.monotonic()
    try:
        hvd.group_allreduce(x, name="late")
        late_error = None
    except Exception as e:  # noqa: BLE001
        late_error = f"{type(e).__name__}: {e}"
    emit(rank, error=error, seconds=seconds, errors=errors, late_error=late_error,
         late_seconds=time.monotonic() - t0, group=group)
