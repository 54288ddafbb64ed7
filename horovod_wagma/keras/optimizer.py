"""DistributedWagmaOptimizer for Keras: a drop-in for Horovod's Keras
``DistributedOptimizer`` that replaces the gradient allreduce with WAGMA model
averaging (the same algorithm as horovod_wagma.torch's, DESIGN.md §3).

``apply_gradients`` applies the local gradients, then averages the updated variables,
fused per dtype, with the wait-avoiding group allreduce op; every ``sync_period``-th
call the round is global (exact average, identical everywhere). It runs in
``model.fit`` (graph mode) and in eager ``GradientTape`` loops.

With ``global_rounds="wait_avoiding"`` global rounds wait for nobody: a slow rank is
served by the newest round its engine served while it computed, and the fp16 rule
follows the round actually served (the op returns it). The step counter still counts
this rank's own steps.

With ``average_optimizer_state="quasi_global"`` (SGD with momentum) each variable's
velocity is rebuilt after the averaging from the variable's change across the whole
step (quasi_global_momentum.py); nothing extra is sent. The default, "never", keeps
the velocity local, as in the paper.
"""
import itertools

import horovod.tensorflow as _hvd_tf
import tensorflow as tf
from horovod.tensorflow.keras import Compression

from horovod_wagma.common.optimizer_args import (OPTIMIZER_AVERAGING,
                                                 buckets_from_groups,
                                                 check_horovod_arguments,
                                                 optimizer_global_rounds)
from horovod_wagma.keras.fusion import dtype_buckets, pack, unpack_assign
from horovod_wagma.keras.quasi_global_momentum import QuasiGlobalMomentum
from horovod_wagma.tensorflow import ops

_instances = itertools.count()


class _WagmaKerasMixin:
    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        grads_and_vars = list(grads_and_vars)
        variables = [v for g, v in grads_and_vars if g is not None]
        qgm = self._wagma["qgm"]
        before = qgm.snapshot(self, [v for _, v in grads_and_vars], variables) if qgm \
            else None
        result = super(self.__class__, self).apply_gradients(grads_and_vars, *args, **kwargs)
        self._wagma_average(variables)
        if qgm:
            qgm.rebuild(self, before)
        return result

    def _wagma_average(self, variables):
        w = self._wagma
        round_index = w["round"].assign_add(1) - 1
        for i, bucket in enumerate(dtype_buckets(variables, w["plan"])):
            flat = pack(bucket)
            if w["fp16"] and flat.dtype == tf.float32:
                sent = tf.cast(flat, tf.float16)
                avg, served = ops.group_allreduce(sent, name=f"{w['name']}.model{i}",
                                                  return_round=True, **w["knobs"])
                # Blocking global rounds serve each call by its own round; wait-avoiding
                # ones may serve a lagging rank by a later one.
                is_global = _is_global(served if w["wait_avoiding_global"] else round_index,
                                       w["sync_period"])
                # Global rounds: the fp16 average itself, identical everywhere; group
                # rounds: a correction keeping this rank's full-precision residual.
                flat = tf.where(is_global, tf.cast(avg, tf.float32),
                                flat + tf.cast(avg, tf.float32) - tf.cast(sent, tf.float32))
            else:
                flat = ops.group_allreduce(flat, name=f"{w['name']}.model{i}", **w["knobs"])
            unpack_assign(bucket, flat)

    def join(self):
        """Call when this rank runs out of data (uneven data): its model keeps
        serving the other ranks' averaging until every rank has joined. Returns the
        last rank to join. With blocking global rounds every rank's step count is
        then the furthest any rank reached; with wait-avoiding ones (the default)
        each keeps its own count and the rounds go on from the newest."""
        last = ops.join()
        w = self._wagma
        if not w["wait_avoiding_global"]:
            # Blocking rounds: step numbers are round numbers, so they must agree.
            w["round"].assign(_hvd_tf.allreduce(w["round"].read_value(), op=_hvd_tf.Max,
                                                name=w["name"] + ".join"))
        return last

    def sync(self, variables):
        """Averages ``variables`` (e.g. ``model.variables``) over all ranks now."""
        sync_global(variables, self._wagma["name"] + ".sync", self._wagma["knobs"])


def _is_global(round_index, sync_period):
    return tf.logical_or(tf.equal(round_index, 0),
                         tf.equal((round_index + 1) % sync_period, 0))


def sync_global(variables, name, knobs):
    """Exact global average of ``variables`` through the engine (a stream whose every
    round is global and blocking), identical on every rank."""
    knobs = dict(knobs, sync_period=1, global_rounds="blocking")
    for i, bucket in enumerate(dtype_buckets([v for v in variables
                                              if v.dtype.is_floating])):
        unpack_assign(bucket, ops.group_allreduce(pack(bucket), name=f"{name}{i}", **knobs))


def DistributedWagmaOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                              compression=Compression.none, sparse_as_dense=False,
                              gradient_predivide_factor=1.0, op=_hvd_tf.Average,
                              backward_passes_per_step=1,
                              average_aggregated_gradients=False, num_groups=0,
                              groups=None, process_set=_hvd_tf.global_process_set,
                              scale_local_gradients=True, *, group_size=None,
                              sync_period=10, averaging=OPTIMIZER_AVERAGING,
                              wait_avoiding=True,
                              global_rounds=None, max_staleness=None,
                              average_optimizer_state="never"):
    """Wraps a Keras optimizer like ``hvd.DistributedOptimizer`` (same arguments, same
    order) but averages models with WAGMA instead of allreducing gradients.

    WAGMA arguments (keyword-only): ``group_size``, ``sync_period``, ``averaging``
    (default "local"), ``wait_avoiding``, ``global_rounds`` (default "wait_avoiding";
    "blocking" when wait_avoiding=False), ``max_staleness``, as for the torch
    optimizer, and ``average_optimizer_state``: "never" (the default here: optimizer
    state such as momentum stays local, as in the paper) or "quasi_global"
    (quasi-global momentum, Lin et al. 2021: nothing extra is sent; after each step's
    averaging the velocity becomes v <- beta*v_old + (1-beta)*(x_after_averaging -
    x_before_step), without the torch optimizer's averaging of the buffers at global
    rounds; needs tf.keras.optimizers.SGD with momentum > 0, else
    ValueError). "on_sync" and "always" are PyTorch-only (ValueError). Of Horovod's:
    ``process_set``
    restricts WAGMA to that set; ``compression=Compression.fp16`` sends fp16;
    ``num_groups``/``groups`` only split the fusion buffers; ``op`` must be Average;
    ``device_*``, ``sparse_as_dense``, ``gradient_predivide_factor``,
    ``average_aggregated_gradients``, ``scale_local_gradients`` and
    ``backward_passes_per_step`` concern gradient allreduce and have no effect.
    """
    check_horovod_arguments(_hvd_tf, op, backward_passes_per_step, compression,
                            gradient_predivide_factor, average_optimizer_state)
    if average_optimizer_state in ("on_sync", "always"):
        raise ValueError(f"average_optimizer_state={average_optimizer_state!r} is supported "
                         f"by the PyTorch DistributedWagmaOptimizer only; the Keras one "
                         f"takes 'never' or 'quasi_global'")
    if average_optimizer_state == "quasi_global":
        QuasiGlobalMomentum.check(optimizer)
    knobs = dict(group_size=group_size, sync_period=sync_period, averaging=averaging,
                 wait_avoiding=wait_avoiding,
                 global_rounds=optimizer_global_rounds(global_rounds, wait_avoiding),
                 max_staleness=max_staleness)
    config, _, _ = ops._basics.stream_config(process_set, **knobs)
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,),
               {k: v for k, v in _WagmaKerasMixin.__dict__.items()
                if k not in ("__dict__", "__weakref__")})
    wrapped = cls.from_config(optimizer.get_config())
    with tf.init_scope():
        round_var = tf.Variable(0, dtype=tf.int64, trainable=False,
                                name="wagma_round")
    wrapped._wagma = dict(
        name=name or f"wagma.keras_optimizer{next(_instances)}",
        round=round_var, sync_period=config.sync_period,
        wait_avoiding_global=config.global_rounds == "wait_avoiding",
        fp16=compression is Compression.fp16,
        plan=buckets_from_groups(groups, num_groups),
        qgm=QuasiGlobalMomentum() if average_optimizer_state == "quasi_global" else None,
        knobs=dict(config.knobs(), process_set=process_set))
    return wrapped
