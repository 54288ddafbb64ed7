"""Every phase's group is a usable Horovod process set (init registers them) on MPI.
On Gloo (horovodrun --gloo) init() registers none without dynamic process sets:
group_process_set() raises there, and Horovod holds only its global set.

Usage: process_sets.py S. Each rank reports Horovod's process-set table (the ranks of
every registered set, its global set included) and, per phase, the sum of a Horovod
allreduce over its group_process_set(), or (Gloo) the error that raised."""
import sys

import torch

from common import emit, horovod_process_set_table
from world import on_gloo

import horovod_wagma.torch as hvd

S = int(sys.argv[1])
hvd.init(group_size=S)
rank, size = hvd.rank(), hvd.size()
table = horovod_process_set_table()
sums, expected, errors = [], [], []
for p, phase in enumerate(hvd.groups(size, S)):
    try:
        ps = hvd.group_process_set(p)
    except Exception as e:  # noqa: BLE001 - the test checks the type and text
        if not on_gloo():
            raise  # test_init reads the sums: on MPI every group must have its set
        errors.append(f"{type(e).__name__}: {e}")
        continue
    sums.append(float(hvd.allreduce(torch.tensor([float(rank)]), op=hvd.Sum, process_set=ps)))
    expected.append(float(sum(next(g for g in phase if rank in g))))
emit(rank, sums=sums, expected=expected, errors=errors, table=table)
