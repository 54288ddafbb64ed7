"""init() under a launch whose transport this Horovod lacks: Horovod's build query is
made to say so (``mpi_built`` or ``gloo_built`` False), and every rank reports the
error init() raised.

Usage: horovod_built_without.py mpi|gloo
"""
import sys

import horovod.torch

from common import emit
import horovod_wagma.torch as hvd

setattr(horovod.torch, f"{sys.argv[1]}_built", lambda: False)
try:
    hvd.init()
    error = None
except Exception as e:  # noqa: BLE001 - the test reads the type and text
    error = f"{type(e).__name__}: {e}"
import os  # noqa: E402
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("HOROVOD_RANK", "0")))
emit(rank, error=error)
