"""DistributedWagmaOptimizer for Keras: a drop-in for Horovod's Keras
``DistributedOptimizer`` that replaces the gradient allreduce with WAGMA model
averaging (the same algorithm as horovod_wagma.torch's, docs/design.md §3).

``apply_gradients`` applies the local gradients, then averages the updated variables,
fused per dtype, with the wait-avoiding group allreduce op; every ``sync_period``-th
call the round is global. It runs in ``model.fit`` (graph mode) and in eager
``GradientTape`` loops: the step counter is a variable, and which round served a
call, and so the fp16 rule, is decided on tensors.

With ``average_optimizer_state="on_sync"`` the optimizer's state is averaged at
global rounds (state_averaging.py), and drift correction (drift_correction.py) learns
each rank's non-IID bias there. With "quasi_global" (SGD with momentum) each
variable's velocity is rebuilt after the averaging from the variable's change across
the whole step (quasi_global_momentum.py); nothing extra is sent.

What this shares with the PyTorch optimizer (knobs, stream names, served rounds, the
fp16 rule, join, the fusion plan) lives in horovod_wagma/common/.
"""
import dataclasses

import horovod.tensorflow as _hvd_tf
import tensorflow as tf
from horovod.tensorflow.keras import Compression

from horovod_wagma.common.optimizer import averaging_policy, drift_policy
from horovod_wagma.common.optimizer.fp16_rule import fp16_result
from horovod_wagma.common.optimizer.fusion_plan import FusionPlan
from horovod_wagma.common.optimizer.horovod_arguments import check_horovod_arguments
from horovod_wagma.common.optimizer.optimizer_core import OptimizerCore
from horovod_wagma.common.optimizer.optimizer_knobs import OptimizerKnobs
from horovod_wagma.common.optimizer.wrapped_class import wrapped_class
from horovod_wagma.keras.checkpoint_record import KerasCheckpointRecord
from horovod_wagma.keras.drift_correction import DriftCorrection, check_moment, is_adam_family
from horovod_wagma.keras.fusion import average_globally, dtype_buckets, pack, unpack_assign
from horovod_wagma.keras import group_second_moment
from horovod_wagma.keras.quasi_global_momentum import QuasiGlobalMomentum
from horovod_wagma.keras.state_averaging import StateAveraging
from horovod_wagma.tensorflow import ops

# "always" (state averaged with the model every step) is the PyTorch optimizer's only.
STATE_MODES = ("never", "on_sync", "quasi_global")
# Every Keras DistributedWagmaOptimizer's streams start with this (its engine stats
# tell BalancedSequence whether WAGMA trains this rank's model).
STREAM_PREFIX = "wagma.keras_optimizer"
# The names of this process's Keras DistributedWagmaOptimizers (default or the user's
# name=), whose streams are "<name>.<role><i>": BalancedSequence counts their rounds to
# tell a WAGMA optimizer from Horovod's.
OPTIMIZER_NAMES = set()


class _WagmaKerasMixin:
    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        grads_and_vars = list(grads_and_vars)
        variables = [v for g, v in grads_and_vars if g is not None]
        qgm, state = self._wagma["qgm"], self._wagma["state"]
        if state:
            state.build(self, [v for _, v in grads_and_vars], variables)
            if state.drift:
                grads_and_vars = state.drift.correct_gradients(grads_and_vars)
        before = qgm.snapshot(self, [v for _, v in grads_and_vars], variables) if qgm \
            else None
        result = super(self.__class__, self).apply_gradients(grads_and_vars, *args, **kwargs)
        step, reported = self._wagma_average(
            variables, {v.ref(): g for g, v in grads_and_vars if g is not None})
        if qgm:
            qgm.rebuild(self, before)
        if state:
            state.run_due(self, variables, step, reported)
        return result

    def _wagma_average(self, variables, grads):
        """Averages ``variables`` (with second_moment="group", their gradients
        ``grads``, by variable ref, ride along); returns (this step's round number,
        the round the op reported for the first bucket)."""
        w = self._wagma
        core = w["core"]
        # Rounds are numbered from the engine's start: under Horovod elastic it restarts
        # for each member set while the step count goes on (rebase_rounds).
        step = w["round"].assign_add(1) - 1 - w["round_base"]
        first_reported = None
        for i, bucket in enumerate(dtype_buckets(variables, core.fusion_plan)):
            flat, name = pack(bucket), core.names.stream("model", i)
            second = core.knobs.second_moment == "group"
            if second:
                flat, own = group_second_moment.attach(flat, [grads[v.ref()] for v in bucket])
            if w["fp16"] and flat.dtype == tf.float32:
                sent = tf.cast(flat, tf.float16)
                avg, reported = ops.group_allreduce(sent, name=name, return_round=True,
                                                    **core.stream_knobs)
                flat = fp16_result(flat, tf.cast(sent, tf.float32), tf.cast(avg, tf.float32),
                                   core.served_global(step, reported), tf.cond)
            else:
                flat, reported = ops.group_allreduce(flat, name=name, return_round=True,
                                                     **core.stream_knobs)
            if second:
                flat = group_second_moment.detach_and_correct(self, bucket, flat, own)
            unpack_assign(bucket, flat)
            first_reported = reported if first_reported is None else first_reported
        return step, first_reported

    def join(self):
        """Call when this rank runs out of data (uneven data): its model keeps
        serving the other ranks' averaging until every rank has joined. Returns the
        last rank to join. With blocking global rounds every rank's step count is
        then the furthest any rank reached; with wait-avoiding ones (the default)
        each keeps its own count and the rounds go on from the newest."""
        steps = self._wagma["round"]
        last, agreed = self._wagma["core"].join(steps.read_value(), lambda s, name: (
            _hvd_tf.allreduce(s, op=_hvd_tf.Max, name=name)))
        steps.assign(agreed)
        return last

    def rebase_rounds(self):
        """Horovod elastic: the engine restarted over a new member set, whose rounds
        start at 0 again; this rank's step count goes on (WagmaState.reset)."""
        self._wagma["round_base"].assign(self._wagma["round"])
        if self._wagma["state"]:
            self._wagma["state"].rebase()

    def wagma_status(self):
        """A read-only WagmaStatus (call outside a tf.function): stream prefix, tau,
        global-round mode and this rank's step count. ``served_round`` is None: the
        round the op reports stays inside the train function's graph."""
        return self._wagma["core"].status(self._wagma["round"].numpy(), None)

    def sync(self, variables, checkpoint=False):
        """Averages ``variables`` (e.g. ``model.variables``), and the optimizer's state
        with "on_sync", over all ranks now: an exact average through blocking global
        rounds. Every rank must call it. ``checkpoint=True`` also gathers every rank's
        drift variates into the optimizer's checkpoint record (one allgather), for a
        checkpoint saved before the next step (checkpoint_record.py)."""
        core = self._wagma["core"]
        if self._wagma["state"]:
            variables = list(variables) + StateAveraging.state_variables(self)
        average_globally(variables, lambda i: core.names.stream("forced", i),
                         core.global_stream_knobs(blocking=True))
        if checkpoint:
            self._wagma["record"].gather(lambda t: _hvd_tf.allgather(
                t, name=core.names.stream("checkpoint", 0), process_set=core.process_set))


def DistributedWagmaOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                              compression=Compression.none, sparse_as_dense=False,
                              gradient_predivide_factor=1.0, op=_hvd_tf.Average,
                              backward_passes_per_step=1,
                              average_aggregated_gradients=False, num_groups=0,
                              groups=None, process_set=_hvd_tf.global_process_set,
                              scale_local_gradients=True, *,
                              group_size=OptimizerKnobs.group_size,
                              sync_period=OptimizerKnobs.sync_period,
                              averaging=OptimizerKnobs.averaging,
                              wait_avoiding=OptimizerKnobs.wait_avoiding,
                              global_rounds=OptimizerKnobs.global_rounds,
                              max_staleness=OptimizerKnobs.max_staleness,
                              average_optimizer_state=OptimizerKnobs.average_optimizer_state,
                              drift_correction=OptimizerKnobs.drift_correction,
                              second_moment=OptimizerKnobs.second_moment):
    """Wraps a Keras optimizer like ``hvd.DistributedOptimizer`` (same arguments, same
    order) but averages models with WAGMA instead of allreducing gradients.

    WAGMA arguments (keyword-only): ``group_size``, ``sync_period``, ``averaging``,
    ``wait_avoiding``, ``global_rounds``, ``max_staleness``, with the same meaning,
    defaults and checks as for the PyTorch optimizer (OptimizerKnobs; ``averaging``
    by default "follow" for Adam, AdamW, Nadam and "local" otherwise), and
    ``average_optimizer_state``: "on_sync" (the default, as in PyTorch: the
    optimizer's state is averaged at global rounds, state_averaging.py), "never"
    (optimizer state such as momentum stays local, as in the paper) or "quasi_global" (quasi-global momentum, Lin et al.
    2021: nothing extra is sent; after each step's averaging the velocity becomes
    v <- beta*v_old + (1-beta)*(x_after_averaging - x_before_step); needs
    tf.keras.optimizers.SGD with momentum > 0, else ValueError). "always" is
    PyTorch-only (ValueError). ``drift_correction``: alpha in [0, 1] of the
    non-IID control variates learnt at "on_sync" rounds (drift_correction.py; it
    needs SGD with momentum, Adam, AdamW or Nadam). None: off in Keras
    (drift_policy.KERAS_DEFAULT_ALPHA: with a persistent straggler 7 of 13 long runs
    with 0.25 fell, and it won only non-IID random, within the spread), where PyTorch
    takes 0.25. ``second_moment``: as in PyTorch, "group" (the default for Adam,
    AdamW, Nadam: Adam's second moment from the group's mean gradient, which rides the
    model's round) or "local" (group_second_moment.py).

    Why "on_sync" by default (docs/benchmarks.md, Keras): mlp under random
    stragglers, 6 seeds in two runs, time to target x Horovod's, "never" against
    "on_sync" (then with drift correction 0.25): non-IID 0.74-0.76x against 0.67x, IID
    0.54-0.56x against 0.60x; only "on_sync" met the 0.7x target in both.

    Of Horovod's arguments: ``process_set`` restricts WAGMA to that set;
    ``compression=Compression.fp16`` sends fp16 (common/optimizer/fp16_rule.py);
    ``num_groups``/``groups`` only split the fusion buffers; ``op`` must be Average;
    ``device_*``, ``sparse_as_dense``, ``gradient_predivide_factor``,
    ``average_aggregated_gradients``, ``scale_local_gradients`` and
    ``backward_passes_per_step`` concern gradient allreduce and have no effect.
    """
    check_horovod_arguments(_hvd_tf, op, backward_passes_per_step, compression,
                            gradient_predivide_factor)
    knobs = OptimizerKnobs.from_arguments(locals(), "Keras", STATE_MODES)
    if knobs.average_optimizer_state == "quasi_global":
        QuasiGlobalMomentum.check(optimizer)
    knobs = dataclasses.replace(knobs, drift_correction=drift_policy.resolve_alpha(
        knobs.drift_correction, lambda: check_moment(optimizer),
        knobs.average_optimizer_state, drift_policy.KERAS_DEFAULT_ALPHA))
    knobs = dataclasses.replace(knobs, second_moment=group_second_moment.resolve(
        knobs.second_moment, optimizer), averaging=averaging_policy.resolve(
        knobs.averaging, is_adam_family(optimizer)))
    core = OptimizerCore(knobs, ops._basics, process_set, FusionPlan(groups, num_groups),
                         STREAM_PREFIX, name)
    OPTIMIZER_NAMES.add(core.names.name)
    wrapped = wrapped_class(optimizer, _WagmaKerasMixin).from_config(optimizer.get_config())
    with tf.init_scope():
        round_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="wagma_round")
        round_base = tf.Variable(0, dtype=tf.int64, trainable=False, name="wagma_round_base")
    drift = DriftCorrection(knobs.drift_correction, core) if knobs.drift_correction and \
        knobs.average_optimizer_state == "on_sync" else None
    # Not tracked by TensorFlow's checkpoints (object.__setattr__ bypasses the
    # optimizer's tracking): the round base is this process's, and the step count is
    # saved and restored, checked, through the record below.
    object.__setattr__(wrapped, "_wagma", dict(
        core=core, round=round_var, round_base=round_base, fp16=compression is Compression.fp16,
        qgm=QuasiGlobalMomentum() if knobs.average_optimizer_state == "quasi_global"
        else None,
        state=StateAveraging(core, drift)
        if knobs.average_optimizer_state == "on_sync" else None,
        record=KerasCheckpointRecord(core, round_var, round_base, drift)))
    wrapped.wagma_record = wrapped._wagma["record"]  # a child in the checkpoint's graph
    return wrapped
