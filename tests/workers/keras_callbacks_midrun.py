"""Keras model.fit (graph mode) with the WAGMA optimizer's defaults over many epochs,
under stragglers, with the callbacks a Horovod Keras script uses: the broadcast, the
metric average, the learning-rate warmup, a Horovod allreduce of a metric at each
epoch end, validation every epoch and a rank-0 checkpoint. It must run to its end.
Each rank also reports its own epoch loss and validation loss, read before the average.

Usage: keras_callbacks_midrun.py PATTERN [PATTERN ...]; rank 0's checkpoints go to the
run's results directory (WAGMA_TEST_RESULTS).
  PATTERN: random (two ranks per batch, from a shared seed, sleep 20 ms more) or
           persistent (the last rank's batches take 3x as long, plus 4 ms);
           PATTERN+adam wraps Keras's Adam instead of SGD with momentum (the Adam
           family's defaults: averaging "follow", the group's second moment).
"""
import os
import random
import sys
import time

import horovod_wagma.keras as hvd  # imports TensorFlow with Keras 2
import horovod.tensorflow as hvd_tf
import numpy as np
import tensorflow as tf

from common import emit

EPOCHS, BATCH, SAMPLES, BASE_S, DELAY_S = 10, 16, 256, 0.002, 0.02

checkpoint_dir, patterns = os.environ["WAGMA_TEST_RESULTS"], sys.argv[1:]
hvd.init()
rank, size = hvd.rank(), hvd.size()
if tf.config.threading.get_intra_op_parallelism_threads() != 1:  # a resident launch set it
    tf.config.threading.set_intra_op_parallelism_threads(1)


class Straggler(tf.keras.callbacks.Callback):
    def __init__(self, pattern, seed):
        super().__init__()
        self.pattern, self.rng = pattern, random.Random(seed)

    def on_train_batch_begin(self, batch, logs=None):
        t = BASE_S
        if self.pattern == "random" and rank in self.rng.sample(range(size), 2):
            t += DELAY_S
        elif self.pattern == "persistent" and rank == size - 1:
            t = 3 * BASE_S + 0.004
        time.sleep(t)


class HorovodMetricAllreduce(tf.keras.callbacks.Callback):
    """A Horovod collective at each epoch end, as scripts write by hand."""

    def __init__(self, tag):
        super().__init__()
        self.tag, self.values = tag, []

    def on_epoch_end(self, epoch, logs=None):
        v = hvd_tf.allreduce(tf.constant(float(logs["loss"])), name=f"{self.tag}.loss")
        self.values.append(float(v))


class OwnMetrics(tf.keras.callbacks.Callback):
    """This rank's own epoch loss and validation loss, read before the metric average
    (it runs before MetricAverageCallback)."""

    def __init__(self):
        super().__init__()
        self.loss, self.val_loss = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.loss.append(float(logs["loss"]))
        self.val_loss.append(float(logs["val_loss"]))


def run(index, pattern_arg):
    pattern, _, optimizer = pattern_arg.partition("+")
    rng = np.random.default_rng(rank + 10 * index)
    x = rng.standard_normal((SAMPLES, 16)).astype("float32")
    y = (x[:, :4].sum(1) > 0).astype("int64")
    model = tf.keras.Sequential([tf.keras.layers.Input((16,)),
                                 tf.keras.layers.Dense(32, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    inner = (tf.keras.optimizers.Adam(0.05) if optimizer == "adam" else
             tf.keras.optimizers.SGD(0.05, momentum=0.9))
    opt = hvd.DistributedWagmaOptimizer(inner)
    model.compile(opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    allreduce_cb, own = HorovodMetricAllreduce(f"run{index}"), OwnMetrics()
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), own,
                 hvd.callbacks.MetricAverageCallback(),
                 hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.05, warmup_epochs=3),
                 allreduce_cb, Straggler(pattern, seed=index)]
    if rank == 0:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(
            os.path.join(checkpoint_dir, f"run{index}-{{epoch}}.weights.h5"),
            save_weights_only=True))
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0,
                        validation_data=(x[:64], y[:64]), callbacks=callbacks)
    status = opt.wagma_status()
    stats = hvd.stats(status.stream())
    print(f"rank {rank}: {pattern_arg} done", flush=True)
    h = {k: [float(v) for v in vs] for k, vs in history.history.items()}
    return dict(pattern=pattern_arg, averaging=status.averaging,
                finite=all(bool(np.isfinite(w).all()) for w in model.get_weights()), loss=h["loss"], val_loss=h["val_loss"], lr=h["lr"],
                own_loss=own.loss, own_val_loss=own.val_loss,
                allreduced=allreduce_cb.values, stream=stats,
                sync_period=status.sync_period)


emit(rank, results=[run(i, p) for i, p in enumerate(patterns)])
