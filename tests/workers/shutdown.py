"""Shutdown with passive rounds pending: rank 1 stops calling after round 0 while the
others keep running group rounds that rank 1's engine joins passively. Every process
must then exit cleanly and promptly.

``shutdown.py give_up SECONDS``: a shutdown that cannot finish. Rank 1 stays up for
SECONDS more after its last round, so rank 0's engine, exiting at once, waits at its
closing barrier for rank 1's engine; it must give up after
HOROVOD_WAGMA_SHUTDOWN_TIMEOUT. Rank 0 records, in an atexit handler that runs after
the engine's (registered before init: atexit runs last-in first-out), how long its
exit took from the end of its script."""
import atexit
import os
import sys
import time

import torch

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

mode = sys.argv[1] if len(sys.argv) > 1 else "pending"
if mode == "give_up":
    ended = {}

    def after_engine_shutdown():
        with open(os.path.join(os.environ["WAGMA_TEST_RESULTS"], "exit_seconds"), "w") as f:
            f.write(str(time.monotonic() - ended["t"]))

    if os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("HOROVOD_RANK")) == "0":
        atexit.register(after_engine_shutdown)

hvd.init(group_size=2, sync_period=50)
rank = hvd.rank()
x = torch.full((10,), float(rank))
x = hvd.group_allreduce(x, name="s")  # round 0: global, everyone
if mode == "give_up":
    emit(rank, stats=engine_lib.stats())
    if rank == 0:
        ended["t"] = time.monotonic()
    else:
        time.sleep(float(sys.argv[2]))  # alive, its engine not shutting down yet
    sys.exit(0)
if rank != 1:
    for _ in range(6):
        x = hvd.group_allreduce(x, name="s")
else:
    time.sleep(2.0)  # the others' rounds reach rank 1's engine meanwhile
emit(rank, stats=engine_lib.stats())
# No explicit shutdown: the atexit handler must finish the passive rounds and stop.
