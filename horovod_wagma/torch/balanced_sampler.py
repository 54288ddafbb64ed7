"""BalancedDistributedSampler: DistributedSampler's drop-in whose shares follow each
rank's measured throughput, so that fast ranks do more of every epoch and nobody waits
for a slow one at the epoch's end.

Per epoch e (``set_epoch(e)``, called by every rank at the same epoch count, as torch
requires for shuffling):
- one Horovod allgather shares each rank's throughput over the previous epoch,
  samples per second of compute: (samples / steps) / median compute seconds per step
  (StepClock: the time between optimizer steps, never a wait inside one);
- one global permutation (torch's: seed + epoch; padded or truncated exactly as
  DistributedSampler does to ``total_size``) is cut into contiguous shares
  proportional to the throughputs (common/balance/balanced_shares.py: they sum to
  ``total_size``, a floor of ``min_share`` of an equal share each; throughputs
  within ``dead_band`` of their median count as equal, so that same-speed ranks are
  not rebalanced by measurement noise);
- with nothing measured yet (the first epoch) the shares are equal.

So every sample is seen exactly once per epoch across ranks (plus torch's padding when
``drop_last=False``), and a rank that turns slow is rebalanced at the next epoch.
``len(sampler)`` is this rank's share: the DataLoader then gives fast ranks more
steps. DistributedWagmaOptimizer does not need equal steps; Horovod's own
DistributedOptimizer does, and a set_epoch that would give it unequal shares raises a
ValueError on every rank instead of leaving the ranks to hang in an allreduce.
"""
import torch

from horovod_wagma.common.balance.balanced_shares import DEFAULT_DEAD_BAND, epoch_total, \
    proportional_shares, share_bounds
from horovod_wagma.torch.epoch_shares import EpochShares


class BalancedDistributedSampler(EpochShares, torch.utils.data.Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False, *, min_share=0.25,
                 dead_band=DEFAULT_DEAD_BAND):
        """As ``torch.utils.data.distributed.DistributedSampler`` (``num_replicas``
        and ``rank`` default to Horovod's size and rank), plus ``min_share``: the
        floor of a rank's share as a fraction of an equal share, in [0, 1]; and
        ``dead_band``: throughputs within this fraction of their median count as
        the median, in [0, 1)."""
        EpochShares.__init__(self, dataset, num_replicas, rank, shuffle, seed, drop_last,
                             min_share, dead_band)
        # torch's sizes: the same total on every rank, padded or truncated.
        self.total_size = epoch_total(len(dataset), self.num_replicas, drop_last)
        self.shares = [self.total_size // self.num_replicas] * self.num_replicas

    @property
    def num_samples(self):
        """This rank's share of the current epoch."""
        return self.shares[self.rank]

    def set_epoch(self, epoch):
        """Shares the throughput measured since the last call (one Horovod
        allgather: every rank calls it at the same epoch count) and deals epoch
        ``epoch``'s shares."""
        throughputs, synchronous = self._gather(epoch)
        shares = proportional_shares(self.total_size, throughputs, self.min_share,
                                     self.dead_band)
        if len(set(shares)) > 1 and synchronous:
            raise ValueError(
                "BalancedDistributedSampler gives ranks unequal shares (throughputs "
                f"{[round(t, 1) for t in throughputs]} samples/s), so unequal "
                "steps per epoch, but Horovod's DistributedOptimizer allreduces "
                "gradients at every step and needs equal ones: use "
                "horovod_wagma.torch.DistributedWagmaOptimizer, or "
                "horovod_wagma.torch.BalancedBatchSampler (equal steps, batch sizes "
                "proportional to speed)")
        self.shares = shares

    def __iter__(self):
        start, stop = share_bounds(self.shares, self.rank)
        return self._deal(self._permutation(self.total_size)[start:stop])

    def __len__(self):
        return self.num_samples
