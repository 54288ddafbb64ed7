"""Straggler: rank `slow` sleeps DELAY seconds before each call. With wait-avoidance
the other ranks' group rounds must not wait for it; global rounds do.

Usage: straggler.py DELAY ROUNDS SYNC_PERIOD GROUP_SIZE WAIT_AVOIDING"""
import sys
import time

import frameworks as fw
from common import emit

from horovod_wagma.common import engine_lib

hvd = fw.hvd
delay, rounds, tau, S, wa = (float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                             int(sys.argv[4]), sys.argv[5] == "1")
hvd.init(group_size=S, sync_period=tau, wait_avoiding=wa)
rank, size = hvd.rank(), hvd.size()
slow = size - 1
x = fw.tensor([float(rank)] * 1000, "float32")
waits = []
for r in range(rounds):
    if rank == slow:
        time.sleep(delay)
    t0 = time.monotonic()
    x = hvd.group_allreduce(x, name="straggle")
    waits.append(time.monotonic() - t0)
emit(rank, waits=waits, final=fw.numpy(x)[:4].tolist(), stats=engine_lib.stats())
