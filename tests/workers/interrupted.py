"""Signals: every rank waits in a global round that the slow ranks will not enter
for minutes; the test signals one rank, and every rank must end within 30 s."""
import os
import time

import torch

import horovod_wagma.torch as hvd

hvd.init(group_size=2, sync_period=3)
rank = hvd.rank()
x = torch.ones(8)
x = hvd.group_allreduce(x, name="w")  # round 0: everyone is up
open(os.path.join(os.environ["WAGMA_TEST_RESULTS"], f"ready.{rank}.{os.getpid()}"),
     "w").close()
if rank == 1:
    for _ in range(5):
        x = hvd.group_allreduce(x, name="w")  # round 2 is global: waits for the rest
else:
    time.sleep(600)  # stuck in application code
