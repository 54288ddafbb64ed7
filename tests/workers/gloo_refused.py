"""Under Horovod on Gloo (horovodrun --gloo; elastic, Ray and Spark run on it too)
the first WAGMA call must raise a clear error on every rank, not hang."""
import torch

from common import capture, emit

import horovod_wagma.torch as hvd

import horovod.torch as plain_hvd

out = {}
capture(out, "init", hvd.init)  # horovod_wagma's init starts the engine
plain_hvd.init()  # a script that started Horovod itself: the first WAGMA call
capture(out, "group_allreduce", lambda: hvd.group_allreduce(torch.ones(4), name="g"))
emit(plain_hvd.rank(), **out)
