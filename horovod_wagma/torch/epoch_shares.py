"""EpochShares: what BalancedDistributedSampler and BalancedBatchSampler share.

Per epoch e (``set_epoch(e)``, called by every rank at the same epoch count, as torch
requires for shuffling): one Horovod allgather shares each rank's throughput over the
previous epoch, samples per second of compute, (samples / steps) / the median compute
seconds per step (common/step_clock.py: the time between optimizer steps, never a
wait inside one); with nothing measured (the first epoch) the throughputs are unknown
and the cuts equal. The epoch's permutation is torch's DistributedSampler's (seed +
epoch), padded or truncated to a given total exactly as torch pads or truncates.
"""
import math

import horovod.torch as _hvd
import torch

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
        if not 0.0 <= min_share <= 1.0:
            raise ValueError(f"min_share must be in [0, 1], got {min_share!r}")
        if not 0.0 <= dead_band < 1.0:
            raise ValueError(f"dead_band must be in [0, 1), got {dead_band!r}")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.min_share, self.dead_band = min_share, dead_band
        self.epoch = 0
        self.throughputs = None  # the last gathered ones, samples/s per rank
        self._clock = step_clock()
        self._name = f"wagma.balanced_sampler.{_instances[0]}"
        _instances[0] += 1
        self._dealt = 0  # samples handed out since the last set_epoch

    def _throughput(self):
        spp = self._clock.seconds_per_step()
        if spp is None or spp <= 0 or self._dealt == 0:
            return 0.0  # not measured
        return self._dealt / (self._clock.steps() + 1) / spp

    def _gather(self, epoch):
        """Every rank's throughput (one allgather) and whether any rank stepped
        Horovod's gradient-allreduce optimizer; starts the next measurement."""
        mine = torch.tensor([[float(epoch), self._throughput(),
                              float(self._clock.synchronous)]], dtype=torch.float64)
        gathered = _hvd.allgather(mine, name=self._name)
        epochs = gathered[:, 0].tolist()
        if len(set(epochs)) != 1:
            raise ValueError(f"{type(self).__name__}.set_epoch: every rank must call it "
                             f"at the same epoch count; got epochs "
                             f"{[int(e) for e in epochs]} by rank")
        self.epoch = epoch
        self._clock.reset()
        self._dealt = 0
        self.throughputs = gathered[:, 1].tolist()
        return self.throughputs, bool(gathered[:, 2].max() > 0)

    def _permutation(self, total):
        """The epoch's indices, torch's order, padded (repeating from the start) or
        truncated to ``total``."""
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if total <= len(indices):
            return indices[:total]
        padding = total - len(indices)
        if padding <= len(indices):
            return indices + indices[:padding]
        return indices + (indices * math.ceil(padding / len(indices)))[:padding]

    def _deal(self, indices):
        for i in indices:
            self._dealt += 1
            yield i
