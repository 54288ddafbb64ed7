"""DistributedWagmaOptimizer: a drop-in for ``hvd.DistributedOptimizer`` that replaces
the per-step gradient allreduce with WAGMA model averaging.

Each ``step()``:
  1. runs the wrapped optimizer's step on the local gradients (no gradient allreduce);
  2. averages the parameters, fused into one buffer per dtype, with the wait-avoiding
     group allreduce: w_i <- mean of w_j over this step's group G (docs/design.md §2;
     a member whose engine contributed a stale value gets its fresh one back in);
  3. every ``sync_period`` steps that round is global instead: w_i <- mean over all
     ranks (bit-identical everywhere with blocking global rounds or in lockstep; a
     rank whose engine served a wait-avoiding one folds its own progress in by the
     averaging rule). Floating-point ``named_buffers`` (BatchNorm statistics) and,
     with ``average_optimizer_state="on_sync"``, optimizer state are averaged then too.

With ``average_optimizer_state="quasi_global"`` (torch.optim.SGD with momentum) no
state is sent: after the averaging each momentum buffer is rebuilt from the
parameter's change across the whole step (quasi_global_momentum.py).

What this shares with the Keras optimizer (knobs, stream names, served rounds, the
fp16 rule, join, the fusion plan) lives in horovod_wagma/common/.
"""
import dataclasses

import horovod.torch as _hvd
import torch

from horovod_wagma.common.optimizer import averaging_policy, checkpoint
from horovod_wagma.common.optimizer.fp16_rule import fp16_result, python_cond
from horovod_wagma.common.optimizer.fusion_plan import FusionPlan
from horovod_wagma.common.optimizer.horovod_arguments import (check_backward_passes,
                                                    check_horovod_arguments)
from horovod_wagma.common.optimizer.optimizer_core import OptimizerCore
from horovod_wagma.common.optimizer.optimizer_knobs import OptimizerKnobs
from horovod_wagma.common.optimizer.wrapped_class import wrapped_class
from horovod_wagma.torch import ops
from horovod_wagma.torch.fusion import fuse_by_dtype
from horovod_wagma.torch.drift_correction import DriftCorrection, resolve_alpha
from horovod_wagma.torch import group_second_moment
from horovod_wagma.torch.named_parameters import check_named_parameters
from horovod_wagma.torch.quasi_global_momentum import QuasiGlobalMomentum


class _WagmaTorchMixin:
    def __init__(self, params, core, named_parameters, fp16, backward_passes_per_step,
                 named_buffers):
        super(self.__class__, self).__init__(params)
        check_named_parameters(named_parameters, self._params())
        self._core = core
        self._fp16_wire = fp16
        self.backward_passes_per_step = backward_passes_per_step
        self._named_buffers = [b for _, b in named_buffers or []
                               if torch.is_floating_point(b)]
        self._state_averaging = core.knobs.average_optimizer_state
        self._qgm = QuasiGlobalMomentum(self) \
            if self._state_averaging == "quasi_global" else None
        alpha = core.knobs.drift_correction
        self._drift = DriftCorrection(self, alpha) if alpha else None
        self._second_moment = group_second_moment.GroupSecondMoment(self) \
            if core.knobs.second_moment == "group" else None
        self._round = 0  # this rank's own steps
        self._round_base = 0  # steps taken before the engine (re)started
        self._served = -1  # the round that served the last step
        self._model_buffers = None  # built at the first step, once state exists
        self._sync_buffers = None
        self._forced_layouts = {}  # sync()'s tensor layouts -> their stream's number
        self._gathered = None  # (steps, every rank's drift variates) from sync(checkpoint=True)

    # -- what gets averaged -----------------------------------------------------------
    def _params(self):
        return [p for g in self.param_groups for p in g["params"]]

    def _state_tensors(self, param):
        state = self.state.get(param, {})
        # The step counter is equal on every rank and not a model quantity.
        return [state[k] for k in sorted(state) if k != "step"
                and torch.is_tensor(state[k]) and torch.is_floating_point(state[k])]

    def _bucketed(self, with_state):
        return [[p.data for p in bucket]
                + ([s for p in bucket for s in self._state_tensors(p)] if with_state else [])
                for bucket in self._core.fusion_plan.buckets(self._params())]

    def _build(self):
        always = self._state_averaging == "always"
        self._model_buffers = fuse_by_dtype(None, self._bucketed(with_state=always))
        if self._second_moment:
            self._second_moment.build(self._model_buffers)
        on_sync = list(self._named_buffers)
        # quasi_global: the rebuilt buffers are averaged at global rounds too, so
        # each rank's share of a global round's pull does not live on in its own
        # momentum, which held the mlp task's accuracy well below its plateau
        # (docs/benchmarks-history.md, "How the optimizers' defaults were chosen").
        if self._state_averaging in ("on_sync", "quasi_global"):
            on_sync += [s for p in self._params() for s in self._state_tensors(p)]
        if self._drift:
            self._drift.create_variates()
        self._sync_buffers = fuse_by_dtype(on_sync) if on_sync else []

    # -- the step ---------------------------------------------------------------------
    def step(self, closure=None):
        before = self._qgm.snapshot() if self._qgm else None
        if self._drift:
            self._drift.correct_gradients()
        loss = super(self.__class__, self).step(closure)
        duties_due = self._average()
        if self._qgm:
            self._qgm.rebuild(before)
        if duties_due and self._sync_buffers:
            moments = self._drift.before_average() if self._drift else None
            self._average_globally(self._sync_buffers, "sync")
            if self._drift:
                self._drift.after_average(moments)
        return loss

    def _average(self):
        """Averages the model; returns whether this step runs global-round duties."""
        if self._model_buffers is None:
            self._build()
        # Rounds are numbered from the engine's start: under Horovod elastic it restarts
        # for each member set while the step count goes on (rebase_rounds).
        core, step = self._core, self._round - self._round_base
        self._round += 1
        pending = []
        second = self._second_moment
        for i, fb in enumerate(self._model_buffers):
            flat = fb.pack()
            if second:
                flat = second.attach(i, flat)
            wire = flat.half() if self._fp16_wire and flat.dtype == torch.float32 else flat
            sent = wire.clone() if wire is not flat else None
            pending.append((i, fb, flat, wire, sent, ops.group_allreduce_async_(
                wire, name=core.names.stream("model", i), **core.stream_knobs)))
        for i, fb, flat, wire, sent, handle in pending:
            ops.synchronize(handle)
            if sent is not None:
                flat.copy_(fp16_result(flat, sent.float(), wire.float(),
                                       core.served_global(step, handle.round), python_cond))
            if second:
                second.detach(i, flat, fb.flat)
            fb.unpack()
        if second:
            second.correct()
        served = core.served_round(step, pending[0][-1].round)
        duties_due = core.duties_due(step, self._served, served)
        self._served = served
        return duties_due

    def _average_globally(self, buffers, role, blocking=False):
        knobs = self._core.global_stream_knobs(blocking)
        handles = [(fb, ops.group_allreduce_async_(
            fb.pack(), name=self._core.names.stream(role, i), **knobs))
            for i, fb in enumerate(buffers)]
        for fb, handle in handles:
            ops.synchronize(handle)
            fb.unpack()

    def sync(self, checkpoint=False):
        """Averages the model (and buffers, and state unless "never"; "quasi_global"
        momentum too) over all ranks now, e.g. before evaluation or a checkpoint: an
        exact average through blocking global rounds. Every rank must call it.

        ``checkpoint=True``: before saving. Drift correction's variates, one per rank
        and never averaged, are gathered too (an allgather of every rank's), so that
        ``state_dict()`` on any rank until the next step carries them all and a
        resumed job gives each rank its own (common/optimizer/checkpoint.py)."""
        tensors = [t for bucket in self._bucketed(self._state_averaging != "never")
                   for t in bucket] + list(self._named_buffers)
        # Packed afresh each call: the state's tensors appear at the first step and
        # load_state_dict() replaces them. A stream's layout is fixed at its round 0,
        # so each layout met (before state exists, after) has its own stream, numbered
        # in the order met, which is the same on every rank.
        layout = tuple((t.shape, t.dtype, t.device) for t in tensors)
        number = self._forced_layouts.setdefault(layout, len(self._forced_layouts))
        role = "forced" if number == 0 else f"forced.layout{number}."
        self._average_globally(fuse_by_dtype(tensors), role, blocking=True)
        self._gathered = None
        if checkpoint and self._drift:
            self._gathered = (self._round, self._drift.gather(
                self._params(), self._core.process_set, self._core.names.stream("checkpoint", 0)))

    def state_dict(self):
        """The wrapped optimizer's state dict, plus WAGMA's record under "wagma": the
        step count, the knobs and world size it needs back, and every rank's drift
        variates when taken after ``sync(checkpoint=True)`` with no step since."""
        state_dict = super(self.__class__, self).state_dict()
        gathered = self._gathered
        variates = gathered[1] if gathered and gathered[0] == self._round else None
        state_dict[checkpoint.RECORD_KEY] = checkpoint.make_record(
            self._core, self._core.num_ranks(), self._round, variates)
        return state_dict

    def load_state_dict(self, state_dict):
        """The wrapped optimizer's, then WAGMA's record where there is one (a plain
        optimizer's state dict loads as before): every rank must load the same one.
        A record from another world size or other knobs is a CheckpointMismatch
        (a ValueError naming the difference), raised before anything is loaded. The
        step count becomes the record's; drift variates come back per rank, or start
        from zero when the record has none (saved without sync(checkpoint=True)).
        The step's fused buffers are built again at the next step: they pack the
        state tensors that load_state_dict() replaced."""
        record = state_dict.get(checkpoint.RECORD_KEY)
        if record is not None:
            checkpoint.check_record(record, self._core, self._core.num_ranks())
            state_dict = {k: v for k, v in state_dict.items() if k != checkpoint.RECORD_KEY}
        super(self.__class__, self).load_state_dict(state_dict)
        self._model_buffers = None
        self._sync_buffers = None
        if record is not None:
            self._resume(record)

    def _resume(self, record):
        self._round_base = checkpoint.rebased_round_base(
            self._round, self._round_base, record["steps"])
        self._round = record["steps"]
        self._served = -1
        self._gathered = None
        if self._drift:
            variates = record["variates"]
            self._drift.restore(self._params(), variates[self._core.rank_in_set()]
                                if variates else {})

    def join(self):
        """Call when this rank runs out of data: its model keeps serving the other
        ranks' averaging until every rank has joined. Returns the last rank to join.
        With blocking global rounds every rank's step count is then the furthest any
        rank reached, so training may continue in step; with wait-avoiding ones (the
        default) each keeps its own count and the rounds go on from the newest."""
        last, self._round = self._core.join(self._round, lambda steps, name: int(
            _hvd.allreduce(torch.tensor(steps), op=_hvd.Max, name=name)))
        return last

    def rebase_rounds(self):
        """Horovod elastic: the engine restarted over a new member set, whose rounds
        start at 0 again; this rank's step count goes on (WagmaState.reset)."""
        self._round_base = self._round
        self._served = -1

    def wagma_status(self):
        """A read-only WagmaStatus: stream prefix, tau, global-round mode, this rank's
        step count and the round that served its last step."""
        return self._core.status(self._round, self._served)

    # -- Horovod compatibility --------------------------------------------------------
    def synchronize(self):
        """No-op: gradients stay local (Horovod's gradient-clipping recipe still runs)."""

    def skip_synchronize(self):
        """Context manager kept for Horovod scripts; a no-op here."""
        return _NullContext()

    def set_backward_passes_per_step(self, passes):
        check_backward_passes(passes)
        self.backward_passes_per_step = passes


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def DistributedWagmaOptimizer(optimizer, named_parameters=None,
                              compression=_hvd.Compression.none,
                              backward_passes_per_step=1,
                              op=_hvd.Average,
                              gradient_predivide_factor=1.0,
                              num_groups=0, groups=None,
                              sparse_as_dense=False,
                              process_set=_hvd.global_process_set, *,
                              group_size=OptimizerKnobs.group_size,
                              sync_period=OptimizerKnobs.sync_period,
                              averaging=OptimizerKnobs.averaging,
                              wait_avoiding=OptimizerKnobs.wait_avoiding,
                              named_buffers=None,
                              average_optimizer_state=OptimizerKnobs.average_optimizer_state,
                              global_rounds=OptimizerKnobs.global_rounds,
                              max_staleness=OptimizerKnobs.max_staleness,
                              drift_correction=OptimizerKnobs.drift_correction,
                              second_moment=OptimizerKnobs.second_moment):
    """Wraps ``optimizer`` like ``hvd.DistributedOptimizer`` (same arguments, same
    order), but averages models with WAGMA instead of allreducing gradients.

    WAGMA arguments (keyword-only; defaults and validation: OptimizerKnobs):
      group_size: ranks per averaging group S (default: init's if init() was given
        one, else min(P, max(8, smallest power of 2 >= sqrt P)): every rank up to 8;
        schedule.optimizer_group_size).
      sync_period: every this many steps the average is global (tau).
      averaging: "local", "fresh", "follow" or "paper" rule for stale contributions
        (docs/semantics.md). Default: "follow" for Adam, AdamW, NAdam, RAdam, "local"
        otherwise (averaging_policy.py: each won with its optimizer family under
        imbalance); ``wagma_status().averaging`` says which.
      wait_avoiding: False makes group rounds wait for every member (ablation).
      named_buffers: e.g. ``model.named_buffers()``; floating ones are averaged at
        every global round.
      average_optimizer_state: "never" (the paper), "on_sync" (momentum etc. averaged
        at global rounds; the default), "always" (averaged with the parameters every
        step) or "quasi_global" (quasi-global momentum, Lin et al. 2021: after each
        step's averaging the SGD momentum buffer becomes
        m <- beta*m_old + (1-beta)*(x_before_step - x_after_averaging)/lr, per group,
        and the rebuilt buffers are averaged at global rounds as with "on_sync";
        needs torch.optim.SGD with momentum > 0, else ValueError).
      global_rounds: "wait_avoiding" (the default; "blocking" when
        wait_avoiding=False): global rounds wait for nobody either, so a persistently
        slow rank no longer sets everyone's pace; it skips the rounds its engine served
        while it computed, and a global round's duties (buffers, state, the fp16 rule)
        follow the rounds actually served. "blocking" is the paper's: every rank
        enters every global round, which leaves the models bit-identical there.
      max_staleness: with wait-avoiding global rounds, the oldest (in rounds) a value
        an engine contributes for its app may be; an older one is left out of the
        average, and nobody waits for the slower rank (default: sync_period).
      drift_correction: alpha in [0, 1] (0: off; default None: 0.25 where the wrapped
        optimizer keeps a first moment, SGD with momentum or Adam-family, and the
        state is averaged "on_sync"; else off). Non-IID data: at every global
        round that averages the optimizer state ("on_sync"), each rank learns a
        control variate c_i += alpha k (m̄ - m_i) from its first moment m_i, sent
        on a "drift" stream whose moves sum to zero over the ranks, and adds c_i to
        its gradients at every step, so its updates follow the ranks' mean
        gradient instead of its own data's (drift_correction.py). Works with either
        kind of global round; the moments cross the wire a second time at global
        rounds. Needs SGD with momentum or an Adam-family optimizer.
      second_moment: "group" (the default for Adam, AdamW, NAdam, RAdam) or "local"
        (the default otherwise). "group": each rank's gradient rides the model's group
        round (twice the bytes, no extra round) and after it each exp_avg_sq moves by
        (1 - beta2)(g_G^2 - g_i^2), g_G the group's mean gradient, so Adam's second
        moment is the mean gradient's, as in Horovod's Adam, instead of one rank's
        noisier own (group_second_moment.py). "local": each rank's own.

    Horovod arguments: ``process_set`` restricts WAGMA to that set's ranks;
    ``compression=Compression.fp16`` sends fp16 (accumulated in fp32; fp16_rule.py);
    ``num_groups``/``groups`` only split the fusion buffers; ``op`` must be Average;
    ``gradient_predivide_factor`` and ``sparse_as_dense`` concern gradient allreduce,
    which WAGMA does not do, and are ignored; ``backward_passes_per_step`` is kept for
    compatibility: gradients accumulate locally and every ``step()`` averages.
    """
    check_horovod_arguments(_hvd, op, backward_passes_per_step, compression,
                            gradient_predivide_factor)
    knobs = OptimizerKnobs.from_arguments(locals(), "PyTorch")
    if knobs.average_optimizer_state == "quasi_global":
        QuasiGlobalMomentum.check(optimizer)  # before anything is set up
    knobs = dataclasses.replace(knobs, drift_correction=resolve_alpha(
        knobs.drift_correction, optimizer, knobs.average_optimizer_state),
        second_moment=group_second_moment.resolve(knobs.second_moment, optimizer),
        averaging=averaging_policy.resolve(
            knobs.averaging, group_second_moment.keeps_second_moment(optimizer)))
    core = OptimizerCore(knobs, ops._basics, process_set, FusionPlan(groups, num_groups),
                         "wagma.optimizer")
    cls = wrapped_class(optimizer, _WagmaTorchMixin)
    return cls(optimizer.param_groups, core, named_parameters,
               compression is _hvd.Compression.fp16, backward_passes_per_step,
               named_buffers)
