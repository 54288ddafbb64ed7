"""Staleness: ranks run at random, uneven speeds; each records when it entered and
left every round, on the machine-wide monotonic clock.

Usage: staleness.py SCENARIO... where a scenario is "SYNC_PERIOD,ROUNDS" (a stream
each, with that sync period)."""
import random
import sys
import time

import torch

from common import run_scenarios

import horovod_wagma.torch as hvd

hvd.init(group_size=2)
rank = hvd.rank()


def uneven_speeds(spec):
    tau, rounds = (int(v) for v in spec.split(","))
    rng = random.Random(1234 + rank)
    x = torch.full((64,), float(rank))
    enter, leave = [], []
    for r in range(rounds):
        time.sleep(rng.choice([0.0, 0.0, 0.002, 0.03]) * (3 if rank == 0 else 1))
        enter.append(time.monotonic())
        h = hvd.group_allreduce_async(x, name=f"stale.{spec}", sync_period=tau)
        x = hvd.synchronize(h)
        leave.append(time.monotonic())
    return dict(enter=enter, leave=leave)


run_scenarios({spec: (lambda spec=spec: uneven_speeds(spec)) for spec in sys.argv[1:]},
              sys.argv[1:])
