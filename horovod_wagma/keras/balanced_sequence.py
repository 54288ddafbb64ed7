"""BalancedSequence: a Keras ``Sequence`` whose per-rank share of each epoch follows
the ranks' measured throughput, for ``model.fit`` with DistributedWagmaOptimizer.

Keras (tf_keras) re-reads ``len(sequence)`` at every epoch's start and calls
``sequence.on_epoch_end()`` after the callbacks' ``on_epoch_end`` (so after
``MetricAverageCallback``): one ``model.fit`` then takes per-rank, per-epoch
``steps_per_epoch`` with no argument to pass.

Per epoch e: the epoch's order is one permutation of the dataset, the same on every
rank (numpy's RandomState(seed + e)), padded or truncated to torch
DistributedSampler's total (common/balance/balanced_shares.py: ``epoch_total``, ``padded``),
and cut into contiguous shares, one per rank, proportional to the throughputs shared
at the last epoch end (ThroughputExchange, one Horovod allgather); epoch 0's shares
are equal. Every sample of the epoch is in exactly one rank's share. A rank's share
is served in batches of ``batch_size`` (the last one may be short).

Throughput: Keras runs the train step in a graph, out of Python's sight, but asks for
the next batch once per step (its prefetch buffer, once full, takes a batch when a
step takes one), so the time between ``__getitem__`` calls is the step's cycle, the
same quantity the PyTorch samplers measure through the optimizer's step hooks. The
median cycle of the epoch keeps the few batches prefetched ahead at its start and the
epoch-end metric allreduce out of it.

Only DistributedWagmaOptimizer takes unequal steps. Horovod's DistributedOptimizer
allreduces gradients at every step, so unequal shares would leave its ranks waiting
in an allreduce that some never call; and its waits are inside the graph's step, so
every rank measures the slowest rank's cycle. If on a rank no DistributedWagmaOptimizer
averaged during the epoch (its engine's stream statistics), the shares stay equal
(torch's DistributedSampler's).
"""
import math

import horovod.tensorflow as _hvd
import numpy as np
import tensorflow as tf

from horovod_wagma.common.balance.balanced_shares import DEFAULT_DEAD_BAND, check_share_options, \
    epoch_total, padded, proportional_shares, share_bounds
from horovod_wagma.common.optimizer.step_clock import StepClock
from horovod_wagma.common.balance.throughput_exchange import ThroughputExchange
from horovod_wagma.common.op.stats import stream_stats
from horovod_wagma.keras.optimizer import OPTIMIZER_NAMES

_instances = [0]  # sequences made in this process: names each one's allgather


class BalancedSequence(tf.keras.utils.Sequence):
    def __init__(self, x, y, batch_size, shuffle=True, seed=0, drop_last=False, *,
                 num_replicas=None, rank=None, min_share=0.25,
                 dead_band=DEFAULT_DEAD_BAND):
        """``x``, ``y``: arrays (or lists of arrays) indexed by sample on their first
        axis; ``shuffle``, ``seed``, ``drop_last``, ``num_replicas``, ``rank`` as torch's
        DistributedSampler (defaults: Horovod's size and rank); ``min_share``: the
        floor, a fraction of an equal share; ``dead_band``: throughputs within this
        fraction of the median count as equal."""
        super().__init__()
        num_replicas = _hvd.size() if num_replicas is None else num_replicas
        rank = _hvd.rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        check_share_options(min_share, dead_band)
        self.x, self.y = x, y
        self.n = _first_axis(x)
        if y is not None and _first_axis(y) != self.n:
            raise ValueError(f"x has {self.n} samples but y has {_first_axis(y)}")
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.num_replicas, self.rank = num_replicas, rank
        self.min_share, self.dead_band = min_share, dead_band
        self.total_size = epoch_total(self.n, num_replicas, drop_last)
        self.shares = [self.total_size // num_replicas] * num_replicas
        self.epoch = 0
        # Whether the last epoch end found a rank trained without WAGMA (shares kept
        # equal); None before the first.
        self.equal_steps_needed = None
        self._clock = StepClock()
        name = f"wagma.balanced_sequence.{_instances[0]}"
        _instances[0] += 1
        self._exchange = ThroughputExchange(
            "BalancedSequence.on_epoch_end", self._clock,
            lambda row: _hvd.allgather(tf.constant(row), name=name).numpy())
        self.indices = self._epoch_indices()  # this rank's share of the epoch
        self._rounds = _optimizer_rounds()

    @property
    def throughputs(self):
        """The last gathered throughputs, samples/s per rank (None before the first
        epoch end)."""
        return self._exchange.throughputs

    def _epoch_indices(self):
        """This rank's share of the epoch's permutation."""
        order = np.random.RandomState(self.seed + self.epoch).permutation(self.n) \
            if self.shuffle else np.arange(self.n)
        start, stop = share_bounds(self.shares, self.rank)
        return np.asarray(padded(order.tolist(), self.total_size)[start:stop],
                          dtype=np.int64)

    def __len__(self):
        return math.ceil(len(self.indices) / self.batch_size)

    def __getitem__(self, i):
        # One batch asked for, one step's cycle: start-to-start intervals.
        self._clock.step_begin()
        self._clock.step_end()
        idx = self.indices[i * self.batch_size:(i + 1) * self.batch_size]
        self._exchange.count(len(idx))
        if self.y is None:
            return _take(self.x, idx)
        return _take(self.x, idx), _take(self.y, idx)

    def on_epoch_end(self):
        """Shares the epoch's throughput (every rank calls it, at each epoch end of
        model.fit) and cuts the next epoch's shares."""
        # The exchange's "needs equal steps" bit: this rank stepped, and no
        # DistributedWagmaOptimizer averaged (so Horovod's optimizer trained).
        rounds = _optimizer_rounds()
        self._clock.synchronous = self._clock.steps() > 0 and rounds == self._rounds
        self._rounds = rounds
        throughputs, synchronous = self._exchange.exchange(self.epoch)
        self.equal_steps_needed = synchronous
        if synchronous:
            shares = [self.total_size // self.num_replicas] * self.num_replicas
        else:
            shares = proportional_shares(self.total_size, throughputs, self.min_share,
                                         self.dead_band)
        self.epoch += 1
        self.shares = shares
        self.indices = self._epoch_indices()


def _optimizer_rounds():
    """Rounds this rank's Keras DistributedWagmaOptimizers entered so far."""
    # By the optimizer's name, not the default prefix: one built with name= counts too.
    return sum(s["rounds"] for stream, s in stream_stats().items()
               if stream.rpartition(".")[0] in OPTIMIZER_NAMES)


def _first_axis(arrays):
    arrays = arrays if isinstance(arrays, (list, tuple)) else [arrays]
    return len(arrays[0])


def _take(arrays, idx):
    if isinstance(arrays, (list, tuple)):
        return type(arrays)(np.asarray(a)[idx] for a in arrays)
    return np.asarray(arrays)[idx]
