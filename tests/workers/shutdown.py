"""Shutdown with passive rounds pending: rank 1 stops calling after round 0 while the
others keep running group rounds that rank 1's engine joins passively. Every process
must then exit cleanly and promptly."""
import time

import torch

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.common import engine_lib

hvd.init(group_size=2, sync_period=50)
rank = hvd.rank()
x = torch.full((10,), float(rank))
x = hvd.group_allreduce(x, name="s")  # round 0: global, everyone
if rank != 1:
    for _ in range(6):
        x = hvd.group_allreduce(x, name="s")
else:
    time.sleep(2.0)  # the others' rounds reach rank 1's engine meanwhile
emit(rank, stats=engine_lib.stats())
# No explicit shutdown: the atexit handler must finish the passive rounds and stop.
