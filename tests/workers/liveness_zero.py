"""HOROVOD_WAGMA_LIVENESS_S=0 under Horovod elastic (docs/faults.md: "0: only closed
connections"), on 2 ranks over Gloo with HOROVOD_ELASTIC=1 (the engine's elastic
settings; no elastic driver) and WAGMA_STALL_TIMEOUT_S=3.

Rank 1 stops itself (SIGSTOP) after round 0: no connection closes. Rank 0's global
round 1 waits for it; with liveness 0 silence must not make rank 1 lost (with a
liveness window, its heartbeat would have after about 2 s), so the round ends in the
stall timeout. Rank 0 then resumes rank 1; both run round 0 of a second stream, and
rank 1 dies at once without a goodbye (os._exit: its connections close): rank 0's
next round must fail with a membership change naming it lost.
Rank 0 reports each call's error and how long it took."""
import os
import signal
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

hvd.init()
rank = hvd.rank()
pid_file = os.path.join(os.environ["WAGMA_TEST_RESULTS"], "stopped.pid")
x = hvd.group_allreduce(torch.ones(4), name="w", sync_period=1)  # round 0: both up
if rank == 1:
    with open(pid_file + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    os.kill(os.getpid(), signal.SIGSTOP)  # rank 0 sends SIGCONT after its stall error
    try:
        hvd.group_allreduce(x, name="k", sync_period=1)  # round 0 of the second stream
        error = None
    except Exception as e:  # noqa: BLE001 - reported; rank 0's checks decide
        error = str(e)
    emit(rank, resumed=True, error=error)
    os._exit(0)  # no goodbye, no engine shutdown: a process that died


def call(name, value):
    t0 = time.monotonic()
    try:
        hvd.group_allreduce(value, name=name, sync_period=1)
        out = {"error": None}
    except Exception as e:  # noqa: BLE001 - the test checks the type and text
        out = {"type": type(e).__name__, "error": str(e),
               "mro": [c.__name__ for c in type(e).__mro__]}
    out["seconds"] = time.monotonic() - t0
    return out


stopped = call("w", x)  # round 1: rank 1 never enters it while stopped
while not os.path.exists(pid_file):
    time.sleep(0.05)
with open(pid_file) as f:
    os.kill(int(f.read()), signal.SIGCONT)
again = call("k", x)  # round 0, with the resumed rank 1
killed = call("k", x) if again["error"] is None else None  # round 1: rank 1 died
emit(rank, stopped=stopped, again=again, killed=killed)
