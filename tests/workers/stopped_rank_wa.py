"""A rank that stops calling a stream with wait-avoiding global rounds: its engine
keeps joining rounds for it, left out of the average once its value is older than
MAX_STALENESS rounds, and the others go on without waiting (0.1 s per round, so that
the stall warning naming the stopped rank comes due). The stopped rank sleeps until
the others are done (results written), then leaves.

Usage: stopped_rank_wa.py MAX_STALENESS"""
import glob
import os
import sys
import time

import frameworks as fw
from common import emit

hvd = fw.hvd
max_staleness = int(sys.argv[1])
hvd.init(group_size=2, sync_period=5, global_rounds="wait_avoiding",
         max_staleness=max_staleness)
rank, size = hvd.rank(), hvd.size()
stopped = size - 1
x = fw.tensor([float(rank)] * 8, "float32")
# The round that served each call: a call may be served by a later round than its
# own (a skip), so the stopped rank's last round is read here, not assumed to be 4.
first_served = []
for r in range(5):
    x, served_round = fw.group_allreduce_with_round(x, name="w")
    first_served.append(served_round)
if rank == stopped:
    results = os.environ["WAGMA_TEST_RESULTS"]
    deadline = time.monotonic() + 120
    while len(glob.glob(os.path.join(results, "rank*.json"))) < size - 1 \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    emit(rank, stream=hvd.stats("w"), served=first_served)
else:
    served, waits, error = [], [], None
    try:
        # Until served the last round: a call may be served by a later round than its
        # own (a skip), so counting calls would leave the ranks at different rounds.
        while not served or served[-1] < 5 + 10 * max_staleness - 1:
            time.sleep(0.1)
            t0 = time.monotonic()
            y, served_round = fw.group_allreduce_with_round(x, name="w")
            x = y
            waits.append(time.monotonic() - t0)
            served.append(served_round)
    except Exception as e:  # noqa: BLE001 - the test checks the text
        error = f"{type(e).__name__}: {e}"
    emit(rank, error=error, served=served, waits=waits, stream=hvd.stats("w"))
