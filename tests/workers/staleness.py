"""Staleness: ranks run at random, uneven speeds; each records when it entered and
left every round, on the machine-wide monotonic clock."""
import random
import sys
import time

import torch

from common import emit

import horovod_wagma.torch as hvd

tau, rounds = int(sys.argv[1]), int(sys.argv[2])
hvd.init(group_size=2, sync_period=tau)
rank = hvd.rank()
rng = random.Random(1234 + rank)
x = torch.full((64,), float(rank))
enter, leave = [], []
for r in range(rounds):
    time.sleep(rng.choice([0.0, 0.0, 0.002, 0.03]) * (3 if rank == 0 else 1))
    enter.append(time.monotonic())
    h = hvd.group_allreduce_async(x, name="stale")
    x = hvd.synchronize(h)
    leave.append(time.monotonic())
emit(rank, enter=enter, leave=leave)
