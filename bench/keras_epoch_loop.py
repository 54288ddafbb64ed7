"""The epoch loop in Keras (bench/epoch_loop.py --framework keras): ``model.fit`` over
a Sequence, the rank's compute injected per batch, and at every epoch end
MetricAverageCallback, where every rank meets the others. The data: torch's
DistributedSampler's equal shards (as a Horovod Keras user shards by rank), or
horovod_wagma.keras.BalancedSequence (``+balanced``). The mlp task only, Keras 2.
"""
import itertools
import time

from adapters import keras_accuracy, keras_flatten, keras_mlp_and_optimizer, keras_sum
from host_load import HostLoad
from measure import Snapshots, run_record

_runs = itertools.count()  # names each run's model (Horovod names collectives by it)


class EqualShards:
    """A Keras Sequence of equal contiguous shards of each epoch's permutation (torch's
    DistributedSampler's cut: numpy's RandomState(seed + epoch), padded to a multiple
    of the ranks)."""

    def __new__(cls, tf, np, x, y, batch, seed, rank, size):
        from horovod_wagma.common.balance.balanced_shares import epoch_total, padded

        class Shards(tf.keras.utils.Sequence):
            def __init__(self):
                super().__init__()
                self.epoch = 0
                self._cut()

            def _cut(self):
                total = epoch_total(len(y), size, False)
                order = padded(np.random.RandomState(seed + self.epoch)
                               .permutation(len(y)).tolist(), total)
                self.indices = np.asarray(order[rank * total // size:(rank + 1) * total // size])

            def __len__(self):
                return -(-len(self.indices) // batch)

            def __getitem__(self, i):
                b = self.indices[i * batch:(i + 1) * batch]
                return x[b], y[b]

            def on_epoch_end(self):
                self.epoch += 1
                self._cut()
        return Shards()


def train(k, comm, spec, sampler_kind, task, seed, args, factor, noise):
    """One method, one seed, as epoch_loop.train; ``factor``: this rank's seconds of
    compute per batch, ``noise``: its extra seconds per step (or None)."""
    tf, np = k.tf, k.np
    rank, size = comm.Get_rank(), comm.Get_size()
    model, (opt, lockstep, _) = keras_mlp_and_optimizer(k, f"e{next(_runs)}_s{seed}", spec,
                                                        task, seed, args.tau)
    model.compile(optimizer=opt,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    pool = np.random.default_rng((seed, 11)).choice(
        len(task.y_train), size=min(args.epoch_samples, len(task.y_train)), replace=False)
    x, y = task.x_train.numpy()[pool], np.asarray(task.y_train)[pool]
    seq = k.hvd.BalancedSequence(x, y, task.batch, seed=seed) if sampler_kind == "balanced" \
        else EqualShards(tf, np, x, y, task.batch, seed, rank, size)
    snaps = Snapshots(*keras_flatten(k, model), args.interval, args.budget + 30.0)
    clock = _EpochLoopClock(tf, comm, k.hvd_tf, snaps, seq, factor, noise, args.budget)
    model.fit(seq, epochs=10 ** 6, shuffle=False, verbose=0,
              callbacks=[clock, k.hvd.callbacks.MetricAverageCallback(), clock.epoch_end])
    busy = clock.load.busy_share()
    if not lockstep:
        opt.join()
    return run_record(comm, snaps, keras_accuracy(k, model, task), clock.steps, clock.wall,
                      clock.epochs, None, args.interval, busy)


class _EpochLoopClock:
    """The run's clock as Keras callbacks: it starts after the first step (Keras traces
    its train function there) and a barrier; per batch the injected compute and the
    snapshots; at the epoch end (``epoch_end``, after MetricAverageCallback) the
    budget, agreed through a Horovod allreduce, and the epoch's record."""

    def __new__(cls, tf, comm, hvd_tf, snaps, seq, factor, noise, budget):
        class Clock(tf.keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.t0, self.steps, self.epochs, self.wall = None, 0, [], 0.0
                self.epoch_end = EpochEnd(self)

            def now(self):
                return time.perf_counter() - self.t0

            def on_epoch_begin(self, epoch, logs=None):
                self.e_start, self.samples, self.batches = None, 0, 0

            def on_train_batch_begin(self, batch, logs=None):
                if self.t0 is not None:
                    snaps.before_step()
                time.sleep(factor + (noise[self.steps % len(noise)]
                                     if noise is not None else 0.0))

            def on_train_batch_end(self, batch, logs=None):
                if self.t0 is None:
                    comm.Barrier()  # the first step (and Keras' tracing) off the clock
                    self.load = HostLoad()
                    self.t0 = time.perf_counter()
                else:
                    snaps.after_step(self.now())
                if self.e_start is None:
                    self.e_start = self.now()
                self.steps += 1
                self.batches += 1
                self.last = self.now()

        class EpochEnd(tf.keras.callbacks.Callback):
            def __init__(self, clock):
                super().__init__()
                self.clock = clock

            def on_epoch_end(self, epoch, logs=None):
                c = self.clock
                past = c.now() >= budget
                total = keras_sum(tf, hvd_tf, [float(past)], "epoch_loop.budget")
                end = c.now()
                c.epochs.append(dict(samples=len(seq.indices),
                                     steps=c.batches, train_s=c.last - c.e_start,
                                     idle_s=end - c.last, end=end,
                                     throughputs=getattr(seq, "throughputs", None)))
                c.wall = end
                if total[0] > 0:
                    self.model.stop_training = True
        return Clock()
