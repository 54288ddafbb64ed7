"""HOROVOD_WAGMA_CALLER_PROGRESS_US (docs/api.md): who drives the engine while an
application thread waits. Rank 0 enters a blocking global round 1.5 s late; the other
ranks wait in it. Over that wait each waiting rank measures the CPU time of its
application thread (the main thread, which waits) and of the engine's thread (named
"wagma-engine"), from /proc, and the engine thread's sleeps (its pacer's, counted in
stats()). With the variable set the waiting thread runs the engine's progress itself
and the engine thread stays parked; with 0 (the default) the waiting thread sleeps and
the engine thread does the work.

Usage: caller_progress.py LABEL (names the stream: the resident launch ran others)."""
import os
import sys
import time

import torch

from common import emit
from world import world

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

LATE_S = 1.5


def thread_cpu_s():
    """(this main thread's, the engine thread's) CPU seconds so far."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        base = f"/proc/self/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
        if int(tid) == os.getpid():
            out["app"] = cpu
        elif comm == "wagma-engine":
            out["engine"] = cpu
    return out["app"], out["engine"]


hvd.init()
rank = hvd.rank()
name = f"caller_progress.{sys.argv[1]}"
x = hvd.group_allreduce(torch.ones(8), name=name, sync_period=1)  # round 0
world().Barrier()
if rank == 0:
    time.sleep(LATE_S)
    hvd.group_allreduce(x, name=name, sync_period=1)
    emit(rank)
else:
    before, (app0, engine0), t0 = engine_lib.stats(), thread_cpu_s(), time.monotonic()
    hvd.group_allreduce(x, name=name, sync_period=1)  # waits for rank 0
    waited = time.monotonic() - t0
    after, (app1, engine1) = engine_lib.stats(), thread_cpu_s()
    emit(rank, waited=waited, app_cpu_s=app1 - app0, engine_cpu_s=engine1 - engine0,
         engine_sleeps=after["sleeps"] - before["sleeps"],
         passes=after["loop_iterations"] - before["loop_iterations"])
world().Barrier()
