"""The engine's hold report (cpp_ops/engine/health/hold_report.h), with WAGMA_HOLD_REPORT_S=1:

- round 2 of stream 'held' (group rounds that wait for every member,
  wait_avoiding=False): rank 1's app comes 2.5 s late, so rank 0's call waits there
  and its engine reports what it waits on, and rank 1's engine its view of the round;
- then rank 1 stops its whole process (SIGSTOP) for 2 s, resumed by a child: its
  engine's loop did not run, which it reports on resuming.

Each rank emits its engine's hold_reports and loop_pauses counters."""
import os
import signal
import subprocess
import time

import torch

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

hvd.init(group_size=2, sync_period=100)
rank = hvd.rank()
knobs = dict(wait_avoiding=False, global_rounds="blocking", averaging="fresh")
x = torch.full((4,), float(rank))
waits = []
for r in range(4):
    if r == 2 and rank == 1:
        time.sleep(2.5)
    t0 = time.monotonic()
    x = hvd.group_allreduce(x, name="held", **knobs)
    waits.append(time.monotonic() - t0)
hvd.allreduce(torch.zeros(1), name="hold_report.sync")
if rank == 1:
    subprocess.Popen(["sh", "-c", f"sleep 2; kill -CONT {os.getpid()}"])
    os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.5)  # the engine's loop runs again and inspects
hvd.allreduce(torch.zeros(1), name="hold_report.end")
stats = engine_lib.stats()
emit(rank, waits=waits, result=x.tolist(), hold_reports=stats["hold_reports"],
     loop_pauses=stats["loop_pauses"])
