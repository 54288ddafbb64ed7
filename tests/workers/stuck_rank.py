"""A stuck rank (SIGSTOP): the inspector (rank 0) names it after
WAGMA_STALL_WARNING_S, and with WAGMA_STALL_TIMEOUT_S the waiting ranks raise; then a
new stream's round 0, which the stopped rank cannot register, times out the same way.
The stopped rank writes its pid; the test resumes it once the others are done."""
import os
import signal
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

hvd.init(group_size=2, sync_period=5)
rank = hvd.rank()
stuck = hvd.size() - 1
x = torch.full((4,), float(rank))
for r in range(4):
    x = hvd.group_allreduce(x, name="w")
if rank == stuck:
    with open(os.path.join(os.environ["WAGMA_TEST_RESULTS"], "stuck.pid"), "w") as f:
        f.write(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)  # the test sends SIGCONT later
    emit(rank, resumed=True)
else:
    t0 = time.monotonic()
    try:
        hvd.group_allreduce(x, name="w")  # round 4: global, the stuck rank never comes
        error = None
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {e}"
    seconds = time.monotonic() - t0
    errors = hvd.stats("w")["errors"]
    # A new stream while the stuck rank is still stopped: its round 0 can never be
    # validated, and WAGMA_STALL_TIMEOUT_S ends that wait too.
    t0 = time.monotonic()
    try:
        hvd.group_allreduce(x, name="late")
        late_error = None
    except Exception as e:  # noqa: BLE001
        late_error = f"{type(e).__name__}: {e}"
    emit(rank, error=error, seconds=seconds, errors=errors, late_error=late_error,
         late_seconds=time.monotonic() - t0)
