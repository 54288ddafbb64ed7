"""A member lost while the others wait in join(), under Horovod elastic (docs/faults.md:
a lost member raises WagmaMembershipChanged, a HorovodInternalError that elastic.run
resets on), on 3 ranks over Gloo with HOROVOD_ELASTIC=1 (the engine's elastic
settings; no elastic driver).

After round 0, ranks 0 and 1 run out of data and call join(); rank 2 dies half a
second later without a goodbye (os._exit: its connections close). The joiners' join()
must end with the membership verdict (2 of 3 remain: a majority goes on), not a plain
WagmaError, which elastic.run would not reset on. Each joiner reports the error's type
and text and how long join() took, then leaves without shutting down (its Horovod
would wait for the dead rank), 3 s later: a survivor whose connections closed at once
would be counted lost by a survivor still settling its verdict (a reset keeps them
open)."""
import os
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

hvd.init()
rank = hvd.rank()
hvd.group_allreduce(torch.ones(4), name="w", sync_period=1)  # round 0: all up
if rank == 2:
    time.sleep(0.5)  # the others are in join() by then
    os._exit(0)
t0 = time.monotonic()
try:
    hvd.join()
    joined = {"error": None}
except Exception as e:  # noqa: BLE001 - the test checks the type and text
    joined = {"type": type(e).__name__, "error": str(e),
              "mro": [c.__name__ for c in type(e).__mro__]}
joined["seconds"] = time.monotonic() - t0
emit(rank, joined=joined)
time.sleep(3)
os._exit(0)
