"""Keras callbacks for WAGMA training: all of Horovod's Keras callbacks, re-exported,
plus WAGMA's. They work beside Horovod's ``BroadcastGlobalVariablesCallback`` and
``LearningRateWarmupCallback``; ``MetricAverageCallback`` replaces Horovod's."""
import time

from horovod.tensorflow.keras.callbacks import *  # noqa: F401,F403
import horovod.tensorflow as _hvd_tf
import numpy as np
import tensorflow as tf

from horovod_wagma.common import engine_lib
from horovod_wagma.keras.optimizer import sync_global


class WagmaGlobalSyncCallback(tf.keras.callbacks.Callback):
    """A global average of all model variables (trainable and not) at every epoch end
    and at train end, so that evaluation and checkpoints see one model."""

    def __init__(self, name="wagma.keras_sync"):
        super().__init__()
        self._name = name

    def _sync(self):
        sync_global(self.model.variables, self._name, {})

    def on_epoch_end(self, epoch, logs=None):
        self._sync()

    def on_train_end(self, logs=None):
        self._sync()


class MetricAverageCallback(tf.keras.callbacks.Callback):
    """Averages the epoch's metrics over all ranks (in place in ``logs``). Put it
    before callbacks that read the logs. Horovod's own fails on TF 2.21 (it reaches
    for Keras 3's backend); this one uses Horovod's TF allreduce directly."""

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        for key in sorted(logs):
            value = logs[key]
            if isinstance(value, (int, float, np.floating, np.integer)) or (
                    tf.is_tensor(value) and value.shape.rank == 0):
                avg = _hvd_tf.allreduce(tf.constant(float(value), tf.float64),
                                        op=_hvd_tf.Average, name=f"metric.{key}")
                logs[key] = float(avg)


class WagmaStatsCallback(tf.keras.callbacks.Callback):
    """Adds this rank's per-epoch WAGMA statistics to the logs:
    ``wagma_rounds``, ``wagma_passive_joins`` (rounds this rank's engine joined for a
    busy app), ``wagma_mean_staleness``/``wagma_max_staleness`` (rounds by which a
    passively contributed model lagged) and ``wagma_wait_s`` (time calls spent between
    enqueue and completion)."""

    def on_epoch_begin(self, epoch, logs=None):
        self._start = engine_lib.stats()
        self._t0 = time.monotonic()

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        now = engine_lib.stats()
        d = {k: now[k] - self._start[k] for k in now}
        logs["wagma_rounds"] = d["rounds_completed"]
        logs["wagma_passive_joins"] = d["passive_joins"]
        logs["wagma_mean_staleness"] = d["staleness_sum"] / max(1, d["passive_joins"])
        logs["wagma_max_staleness"] = now["staleness_max"]
        logs["wagma_wait_s"] = d["call_wait_us"] / 1e6
