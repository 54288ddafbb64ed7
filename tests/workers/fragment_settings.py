"""HOROVOD_WAGMA_FRAGMENT_* must be alike on every rank (else fragments would match
the wrong receives): set differently, or malformed, on rank 0 only, starting the engine
fails on every rank with an error naming the setting."""
import os
import sys

from world import launch_rank
from common import capture, emit

mode = sys.argv[1]  # "differ" or "malformed"
rank = launch_rank()
if rank == 0:
    os.environ["HOROVOD_WAGMA_FRAGMENT_BYTES"] = "4096" if mode == "differ" else "64k"

import horovod_wagma.torch as hvd  # noqa: E402  (after the setting, as a user would)

out = {}
capture(out, "init", hvd.init)
emit(rank, **out)
