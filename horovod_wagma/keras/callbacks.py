"""Keras callbacks for WAGMA training: all of Horovod's Keras callbacks, re-exported,
plus WAGMA's. ``MetricAverageCallback``, ``LearningRateScheduleCallback`` and
``LearningRateWarmupCallback`` replace Horovod's, which fail on TF 2.21: they reach
for Keras 3's ``keras.backend`` (no ``constant``, ``get_value`` or ``set_value``)
while the model is Keras 2 (tf_keras)."""
import time

from horovod._keras import callbacks as _hvd_impl
from horovod.tensorflow.keras.callbacks import *  # noqa: F401,F403
import numpy as np
import tensorflow as tf

from horovod_wagma.common.op import engine_lib
from horovod_wagma.common.optimizer.optimizer_core import BLOCKING_GLOBAL
from horovod_wagma.common.optimizer.stream_names import StreamNames
from horovod_wagma.keras.fusion import average_globally
from horovod_wagma.tensorflow import ops


class WagmaGlobalSyncCallback(tf.keras.callbacks.Callback):
    """A global average of all model variables (trainable and not) at every epoch end
    and at train end, so that evaluation and checkpoints see one model. Each callback
    has streams of its own (``wagma.keras_sync<n>.model<i>``, n its creation order, as
    optimizers are numbered): a stream keeps its round 0's shape, and two models in one
    script (a second fit, a search loop) have different ones."""

    def __init__(self, name=None, checkpoint=False):
        """``checkpoint=True``: for a checkpoint callback after this one
        (``ModelCheckpoint`` writing TensorFlow's format on rank 0): the sync is the
        model's DistributedWagmaOptimizer's ``sync(model.variables, checkpoint=True)``,
        which also averages the optimizer's state and gathers every rank's drift
        variates into its checkpoint record (docs/api.md, "Checkpoints (Keras)")."""
        super().__init__()
        self._names = StreamNames("wagma.keras_sync", name)
        self._checkpoint = checkpoint

    def _sync(self):
        if self._checkpoint:
            optimizer = self.model.optimizer
            if not hasattr(optimizer, "_wagma"):
                raise ValueError("WagmaGlobalSyncCallback(checkpoint=True) needs a model "
                                 "compiled with a DistributedWagmaOptimizer; it has "
                                 f"{type(optimizer).__name__}")
            optimizer.sync(self.model.variables, checkpoint=True)
            return
        average_globally(self.model.variables, lambda i: self._names.stream("model", i),
                         BLOCKING_GLOBAL)

    def on_epoch_end(self, epoch, logs=None):
        self._sync()

    def on_train_end(self, logs=None):
        self._sync()


class MetricAverageCallback(tf.keras.callbacks.Callback):
    """Averages the epoch's metrics over all ranks (in place in ``logs``). Put it
    before callbacks that read the logs. Replaces Horovod's, which fails on TF 2.21
    (it reaches for Keras 3's backend). The average runs through the WAGMA engine (a
    blocking global round), not a Horovod allreduce: a fast rank waiting here then
    still serves a slower rank's last steps with wait-avoiding global rounds, which
    a rank waiting inside Horovod cannot (README, staleness bound)."""

    def __init__(self, name="wagma.keras_metrics"):
        super().__init__()
        self._name = name

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        keys = [k for k in sorted(logs)
                if isinstance(logs[k], (int, float, np.floating, np.integer)) or (
                    tf.is_tensor(logs[k]) and logs[k].shape.rank == 0)]
        if not keys:
            return
        values = tf.constant([float(logs[k]) for k in keys], tf.float64)
        # A stream per set of keys: epochs with and without validation metrics use
        # different streams, and ranks whose metrics differ never mix values (they
        # wait in different streams' round 0, which the stall inspector reports).
        avg = ops.group_allreduce(values, name=f"{self._name}.{','.join(keys)}",
                                  **BLOCKING_GLOBAL)
        for key, value in zip(keys, avg.numpy().tolist()):
            logs[key] = value


class _ScheduleOnModelBackend:
    """Horovod's learning-rate schedules on the model's Keras (tf_keras). Momentum
    correction needs a momentum variable: the legacy optimizers have one; the current
    SGD keeps a Python float baked into the compiled step, so there is nothing to
    correct and the correction is skipped (Horovod would fail on it)."""

    def on_train_begin(self, logs=None):
        momentum = getattr(self.model.optimizer, "momentum", None)
        if self.momentum_correction and not isinstance(momentum, tf.Variable):
            self.momentum_correction = False
        super().on_train_begin(logs)


class LearningRateScheduleCallback(_ScheduleOnModelBackend,
                                   _hvd_impl.LearningRateScheduleCallbackImpl,
                                   tf.keras.callbacks.Callback):
    """Horovod's LearningRateScheduleCallback (same arguments, same schedule)."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super().__init__(tf.keras.backend, initial_lr, multiplier, start_epoch, end_epoch,
                         staircase, momentum_correction, steps_per_epoch)


class LearningRateWarmupCallback(_ScheduleOnModelBackend,
                                 _hvd_impl.LearningRateWarmupCallbackImpl,
                                 tf.keras.callbacks.Callback):
    """Horovod's LearningRateWarmupCallback (lr from initial_lr / size up to
    initial_lr over warmup_epochs)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        super().__init__(tf.keras.backend, initial_lr, warmup_epochs, momentum_correction,
                         steps_per_epoch, verbose)


class WagmaStatsCallback(tf.keras.callbacks.Callback):
    """Adds this rank's per-epoch WAGMA statistics to the logs:
    ``wagma_rounds``, ``wagma_passive_joins`` (rounds this rank's engine joined for a
    busy app), ``wagma_mean_staleness`` (rounds by which the epoch's passively
    contributed models lagged, on average) and ``wagma_wait_s`` (time calls spent
    between enqueue and completion); ``wagma_max_staleness`` is the largest lag since
    the engine started (the engine keeps a running maximum, not one per epoch)."""

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
