"""A passive join contributes the published value; the late member's own result then
follows the averaging rule (docs/design.md, section 2). Two ranks, one group, one stream per rule:
  round 0 (global): inputs 0 and 1 -> both publish 0.5
  round 1: rank 0 enters at once with 10.5; rank 1 sleeps, so its engine joins with its
           published 0.5; then rank 1's app enters with 100.5 and collects at once.

Usage: stale_join.py AVERAGING... (one scenario per averaging rule)."""
import sys
import time

import frameworks as fw
from common import run_scenarios

hvd = fw.hvd
hvd.init(group_size=2, sync_period=10)
rank = hvd.rank()


def late_member(averaging):
    name = f"s.{averaging}"
    y0 = hvd.group_allreduce(fw.tensor([float(rank)]), name=name, averaging=averaging)
    if rank == 1:
        time.sleep(0.5)
    x1 = y0 + (10.0 if rank == 0 else 100.0)
    t0 = time.monotonic()
    y1 = hvd.group_allreduce(x1, name=name, averaging=averaging)
    return dict(y0=float(fw.numpy(y0)[0]), y1=float(fw.numpy(y1)[0]),
                wait=time.monotonic() - t0)


run_scenarios({a: (lambda a=a: late_member(a)) for a in sys.argv[1:]}, sys.argv[1:])
