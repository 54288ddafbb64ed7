"""horovod_wagma.torch: the whole horovod.torch API plus WAGMA's group allreduce.

    import horovod_wagma.torch as hvd
    hvd.init(group_size=4, sync_period=10)
    h = hvd.group_allreduce_async(tensor, name="w")
    avg = hvd.synchronize(h)        # WAGMA handles; Horovod handles work as before
"""
from horovod.torch import *  # noqa: F401,F403  (re-export: a drop-in superset)
from horovod.torch import poll as _hvd_poll, synchronize as _hvd_synchronize

from horovod_wagma.common.op.config import WagmaConfig
from horovod_wagma.common.op.errors import WagmaError, WagmaFenced, WagmaMembershipChanged
from horovod_wagma.common.elastic.membership import membership_changes  # noqa: F401
from horovod_wagma.common.op.schedule import default_group_size, optimizer_group_size
from horovod_wagma.common.op.schedule import groups as _groups
from horovod_wagma.torch import ops as _ops
from horovod_wagma.torch.balanced_batch_sampler import BalancedBatchSampler
from horovod_wagma.torch.balanced_sampler import BalancedDistributedSampler
from horovod_wagma.torch.optimizer import DistributedWagmaOptimizer
from horovod_wagma.common.optimizer.checkpoint import CheckpointMismatch  # noqa: F401
from horovod_wagma.torch.ops import (GroupAllreduceHandle, group_allreduce,
                                     group_allreduce_, group_allreduce_async,
                                     group_allreduce_async_, group_process_set, init,
                                     join, stats)


def groups(size, group_size=None):
    """Phases -> groups -> ranks of the WAGMA schedule for ``size`` ranks."""
    return _groups(size, group_size)


def poll(handle):
    """Polls a WAGMA handle or a Horovod handle."""
    if isinstance(handle, GroupAllreduceHandle):
        return _ops.poll(handle)
    return _hvd_poll(handle)


def synchronize(handle):
    """Synchronizes a WAGMA handle or a Horovod handle."""
    if isinstance(handle, GroupAllreduceHandle):
        return _ops.synchronize(handle)
    return _hvd_synchronize(handle)
