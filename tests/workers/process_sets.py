"""Every phase's group is a usable Horovod process set (init registers them)."""
import sys

import torch

from common import emit

import horovod_wagma.torch as hvd

S = int(sys.argv[1])
hvd.init(group_size=S)
rank, size = hvd.rank(), hvd.size()
sums, expected = [], []
for p, phase in enumerate(hvd.groups(size, S)):
    ps = hvd.group_process_set(p)
    sums.append(float(hvd.allreduce(torch.tensor([float(rank)]), op=hvd.Sum, process_set=ps)))
    expected.append(float(sum(next(g for g in phase if rank in g))))
emit(rank, sums=sums, expected=expected)
