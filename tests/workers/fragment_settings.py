"""HOROVOD_WAGMA_FRAGMENT_* must be alike on every rank (else fragments would match
the wrong receives): set differently (the fragment size, or with "differ_up_to" the
largest message cut, with "differ_scope" the scope: 'all', cutting local messages too),
or malformed, on rank 0 only, starting the engine fails on every rank with an error
naming the setting."""
import os
import sys

from world import launch_rank
from common import capture, emit

mode = sys.argv[1]  # "differ", "differ_up_to", "differ_scope" or "malformed"
rank = launch_rank()
if rank == 0:
    variable, value = {"differ": ("HOROVOD_WAGMA_FRAGMENT_BYTES", "4096"),
                       "differ_up_to": ("HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES", "1048576"),
                       "differ_scope": ("HOROVOD_WAGMA_FRAGMENT_SCOPE", "all"),
                       "malformed": ("HOROVOD_WAGMA_FRAGMENT_BYTES", "64k")}[mode]
    os.environ[variable] = value

import horovod_wagma.torch as hvd  # noqa: E402  (after the setting, as a user would)

out = {}
capture(out, "init", hvd.init)
emit(rank, **out)
