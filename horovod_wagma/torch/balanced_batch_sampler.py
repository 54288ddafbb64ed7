"""BalancedBatchSampler: LB-BSP (load-balanced bulk-synchronous training) for
Horovod's own DistributedOptimizer. Every rank takes the same number of steps per
epoch, so a gradient allreduce at every step stays matched, but each step's global
batch of ``num_replicas * batch_size`` samples is split in proportion to the ranks'
measured throughputs: a fast rank computes a larger batch in the time a slow one
computes a smaller one, and nobody waits at the allreduce.

Per epoch (``set_epoch``; the measurement, the gather and the permutation are
epoch_shares.py's): the per-rank batch sizes b_r are common/balance/balanced_shares.py's cut
of the global batch G = num_replicas * batch_size (equal in the first epoch); the
permutation (torch's, padded by repeating its start up to a whole number of global
batches unless ``drop_last``, which drops the last partial one) is taken G samples a
step, and rank r gets its contiguous b_r of each. Every sample is dealt once per
epoch, plus that padding.

Averaging gradients of unequal batches: Horovod's allreduce takes the plain mean of
the ranks' gradients, (1/P) sum_r g_r, where g_r is the mean over rank r's b_r
samples. The mean gradient over all G samples is sum_r (b_r / G) g_r, so each rank
scales its loss by ``loss_weight`` = P b_r / G (1 when the batches are equal):

    loss = loss_fn(model(x), y) * sampler.loss_weight
"""
import math

import torch

from horovod_wagma.common.balance.balanced_shares import DEFAULT_DEAD_BAND, proportional_shares, \
    share_bounds
from horovod_wagma.torch.epoch_shares import EpochShares


class BalancedBatchSampler(EpochShares, torch.utils.data.Sampler):
    def __init__(self, dataset, batch_size, num_replicas=None, rank=None, shuffle=True,
                 seed=0, drop_last=False, *, min_share=0.25,
                 dead_band=DEFAULT_DEAD_BAND):
        """A ``batch_sampler`` for ``DataLoader`` (``DataLoader(dataset,
        batch_sampler=...)``): ``batch_size`` is the mean per-rank batch; the other
        arguments as ``BalancedDistributedSampler``'s."""
        EpochShares.__init__(self, dataset, num_replicas, rank, shuffle, seed, drop_last,
                             min_share, dead_band)
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.global_batch = int(batch_size) * self.num_replicas
        n = len(dataset)
        self.steps = n // self.global_batch if drop_last else math.ceil(n / self.global_batch)
        self.batch_sizes = [int(batch_size)] * self.num_replicas

    @property
    def loss_weight(self):
        """P b_r / G: the factor on this rank's loss that makes Horovod's average of
        the ranks' gradients the mean gradient over the whole global batch."""
        return self.num_replicas * self.batch_sizes[self.rank] / self.global_batch

    def set_epoch(self, epoch):
        """Shares the throughput measured since the last call (one Horovod allgather:
        every rank calls it at the same epoch count) and sets this epoch's per-rank
        batch sizes."""
        throughputs, _ = self._gather(epoch)
        # Every rank needs a sample a step: the floor is at least 1.
        floor = max(self.min_share, 1.0 / (self.global_batch / self.num_replicas))
        self.batch_sizes = proportional_shares(self.global_batch, throughputs,
                                               min(1.0, floor), self.dead_band)

    def __iter__(self):
        order = self._permutation(self.steps * self.global_batch)
        start, stop = share_bounds(self.batch_sizes, self.rank)
        for s in range(self.steps):
            base = s * self.global_batch
            yield list(self._deal(order[base + start:base + stop]))

    def __len__(self):
        return self.steps
