"""EpochShares: what BalancedDistributedSampler and BalancedBatchSampler share.

Per epoch e (``set_epoch(e)``, called by every rank at the same epoch count, as torch
requires for shuffling): common/balance/throughput_exchange.py shares each rank's throughput
over the previous epoch through one Horovod allgather (the process's StepClock, fed by
PyTorch's optimizer step hooks: a step's cycle, waits for other ranks taken out); with
nothing measured (the first epoch) the cuts are equal. The epoch's permutation is
torch's DistributedSampler's (seed + epoch), padded or truncated to a given total
exactly as torch pads or truncates.
"""
import horovod.torch as _hvd
import torch

from horovod_wagma.common.balance.balanced_shares import check_share_options, padded
from horovod_wagma.common.balance.throughput_exchange import ThroughputExchange
from horovod_wagma.torch.step_hooks import step_clock

_instances = [0]  # samplers made in this process: names each one's allgather


class EpochShares:
    def __init__(self, dataset, num_replicas, rank, shuffle, seed, drop_last, min_share,
                 dead_band):
        if num_replicas is None:
            num_replicas = _hvd.size()
        if rank is None:
            rank = _hvd.rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        check_share_options(min_share, dead_band)
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.min_share, self.dead_band = min_share, dead_band
        self.epoch = 0
        name = f"wagma.balanced_sampler.{_instances[0]}"
        _instances[0] += 1
        self._exchange = ThroughputExchange(
            f"{type(self).__name__}.set_epoch", step_clock(),
            lambda row: _hvd.allgather(torch.from_numpy(row), name=name).numpy())

    @property
    def throughputs(self):
        """The last gathered throughputs, samples/s per rank (None before the first
        set_epoch)."""
        return self._exchange.throughputs

    def _gather(self, epoch):
        """Every rank's throughput (one allgather) and whether any rank stepped
        Horovod's gradient-allreduce optimizer; starts the next measurement."""
        out = self._exchange.exchange(epoch)
        self.epoch = epoch
        return out

    def _permutation(self, total):
        """The epoch's indices, torch's order, padded (repeating from the start) or
        truncated to ``total``."""
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        return padded(indices, total)

    def _deal(self, indices):
        for i in indices:
            self._exchange.count(1)
            yield i
