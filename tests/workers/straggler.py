"""Straggler: rank `slow` sleeps DELAY seconds before each call. With wait-avoidance
the other ranks' group rounds must not wait for it; global rounds do.

Usage: straggler.py SCENARIO... where a scenario is
"DELAY,ROUNDS,SYNC_PERIOD,GROUP_SIZE,WAIT_AVOIDING" (one stream each, its own name)."""
import sys
import time

import frameworks as fw
from common import run_scenarios

hvd = fw.hvd
hvd.init()
rank, size = hvd.rank(), hvd.size()
slow = size - 1


def straggler(spec):
    delay, rounds, tau, S, wa = spec.split(",")
    delay, rounds, tau, S, wa = float(delay), int(rounds), int(tau), int(S), wa == "1"
    name = f"straggle.{spec}"
    x = fw.tensor([float(rank)] * 1000, "float32")
    waits = []
    for r in range(rounds):
        if rank == slow:
            time.sleep(delay)
        t0 = time.monotonic()
        x = hvd.group_allreduce(x, name=name, group_size=S, sync_period=tau,
                                wait_avoiding=wa)
        waits.append(time.monotonic() - t0)
    return dict(waits=waits, final=fw.numpy(x)[:4].tolist(), stats=hvd.stats(name))


run_scenarios({spec: (lambda spec=spec: straggler(spec)) for spec in sys.argv[1:]},
              sys.argv[1:])
