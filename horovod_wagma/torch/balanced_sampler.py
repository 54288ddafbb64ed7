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
  proportional to the throughputs (common/balanced_shares.py: they sum to
  ``total_size``, a floor of ``min_share`` of an equal share each);
- with nothing measured yet (the first epoch) the shares are equal.

So every sample is seen exactly once per epoch across ranks (plus torch's padding when
``drop_last=False``), and a rank that turns slow is rebalanced at the next epoch.
``len(sampler)`` is this rank's share: the DataLoader then gives fast ranks more
steps. DistributedWagmaOptimizer does not need equal steps; Horovod's own
DistributedOptimizer does, and a set_epoch that would give it unequal shares raises a
ValueError on every rank instead of leaving the ranks to hang in an allreduce.
"""
import math

import horovod.torch as _hvd
import torch

from horovod_wagma.common.balanced_shares import proportional_shares, share_bounds
from horovod_wagma.torch.step_hooks import step_clock, synchronous_steps_seen

_instances = [0]  # samplers made in this process: names each one's allgather


class BalancedDistributedSampler(torch.utils.data.Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False, *, min_share=0.25):
        """As ``torch.utils.data.distributed.DistributedSampler`` (``num_replicas``
        and ``rank`` default to Horovod's size and rank), plus ``min_share``: the
        floor of a rank's share as a fraction of an equal share, in [0, 1]."""
        if num_replicas is None:
            num_replicas = _hvd.size()
        if rank is None:
            rank = _hvd.rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        if not 0.0 <= min_share <= 1.0:
            raise ValueError(f"min_share must be in [0, 1], got {min_share!r}")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.min_share = min_share
        self.epoch = 0
        n = len(dataset)
        # torch's sizes: the same total on every rank, padded or truncated.
        if drop_last and n % num_replicas != 0:
            equal = math.ceil((n - num_replicas) / num_replicas)
        else:
            equal = math.ceil(n / num_replicas)
        self.total_size = equal * num_replicas
        self.shares = [equal] * num_replicas
        self.throughputs = None  # the last gathered ones, samples/s per rank
        self._clock = step_clock()
        self._name = f"wagma.balanced_sampler.{_instances[0]}"
        _instances[0] += 1
        self._dealt = 0  # samples handed out since the last set_epoch

    @property
    def num_samples(self):
        """This rank's share of the current epoch."""
        return self.shares[self.rank]

    def _throughput(self):
        spp = self._clock.seconds_per_step()
        if spp is None or spp <= 0 or self._dealt == 0:
            return 0.0  # not measured
        return self._dealt / (self._clock.steps() + 1) / spp

    def set_epoch(self, epoch):
        """Shares the throughput measured since the last call (one Horovod
        allgather: every rank calls it at the same epoch count) and deals epoch
        ``epoch``'s shares."""
        mine = torch.tensor([[float(epoch), self._throughput(),
                              float(synchronous_steps_seen())]], dtype=torch.float64)
        gathered = _hvd.allgather(mine, name=self._name)
        epochs = gathered[:, 0].tolist()
        if len(set(epochs)) != 1:
            raise ValueError(f"BalancedDistributedSampler.set_epoch: every rank must "
                             f"call it at the same epoch count; got epochs "
                             f"{[int(e) for e in epochs]} by rank")
        self.throughputs = gathered[:, 1].tolist()
        shares = proportional_shares(self.total_size, self.throughputs, self.min_share)
        if len(set(shares)) > 1 and gathered[:, 2].max() > 0:
            raise ValueError(
                "BalancedDistributedSampler gives ranks unequal shares (throughputs "
                f"{[round(t, 1) for t in self.throughputs]} samples/s), so unequal "
                "steps per epoch, but Horovod's DistributedOptimizer allreduces "
                "gradients at every step and needs equal ones: use "
                "horovod_wagma.torch.DistributedWagmaOptimizer, or "
                "torch.utils.data.distributed.DistributedSampler")
        self.shares = shares
        self.epoch = epoch
        self._clock.reset()
        self._dealt = 0

    def __iter__(self):
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        start, stop = share_bounds(self.shares, self.rank)
        for i in indices[start:stop]:
            self._dealt += 1
            yield i

    def __len__(self):
        return self.num_samples
