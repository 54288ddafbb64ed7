"""DistributedWagmaOptimizer: a drop-in for ``hvd.DistributedOptimizer`` that replaces
the per-step gradient allreduce with WAGMA model averaging.

Each ``step()``:
  1. runs the wrapped optimizer's step on the local gradients (no gradient allreduce);
  2. averages the parameters, fused into one buffer per dtype, with the wait-avoiding
     group allreduce: w_i <- mean of w_j over this step's group G (DESIGN.md §3; a
     member whose engine contributed a stale value gets its fresh one back in);
  3. every ``sync_period`` steps that round is global instead: w_i <- mean over all
     ranks (bit-identical everywhere with blocking global rounds or in lockstep; a
     rank whose engine served a wait-avoiding one folds its own progress in by the
     averaging rule). Floating-point ``named_buffers`` (BatchNorm
     statistics) and, with ``average_optimizer_state="on_sync"``, optimizer state are
     averaged then too.

With ``average_optimizer_state="quasi_global"`` (torch.optim.SGD with momentum) no
state is sent: after the averaging each momentum buffer is rebuilt from the
parameter's change across the whole step (quasi_global_momentum.py).

With ``global_rounds="wait_avoiding"`` global rounds do not wait for slow ranks
either: a slow rank's engine serves rounds with its published model while it
computes, and its next step is served by the newest such round (skipping the
others). Its step counter still counts its own steps; the duties of global rounds
(buffers and state "on_sync", the fp16 rule) follow the rounds actually served: they
run when a served or skipped round was global.
"""
import itertools

import horovod.torch as _hvd
import torch

from horovod_wagma.common.optimizer_args import (OPTIMIZER_AVERAGING,
                                                 buckets_from_groups,
                                                 check_horovod_arguments,
                                                 optimizer_global_rounds,
                                                 fp16_correction_rule)
from horovod_wagma.common.rounds import global_round_between, is_global_round
from horovod_wagma.torch import ops
from horovod_wagma.torch.fusion import fuse_by_dtype
from horovod_wagma.torch.quasi_global_momentum import QuasiGlobalMomentum

_instances = itertools.count()


class _DistributedWagmaOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression, backward_passes_per_step,
                 process_set, knobs, named_buffers, average_optimizer_state, buckets):
        super(self.__class__, self).__init__(params)
        self._check_named_parameters(named_parameters)
        self.backward_passes_per_step = backward_passes_per_step
        self._fp16_wire = compression is _hvd.Compression.fp16
        self._process_set = process_set
        self._config, _, _ = ops._basics.stream_config(process_set, **knobs)
        self._knobs = dict(self._config.knobs(), process_set=process_set)
        self._wait_avoiding_global = self._config.global_rounds == "wait_avoiding"
        self._named_buffers = [b for _, b in named_buffers or []
                               if torch.is_floating_point(b)]
        self._state_averaging = average_optimizer_state
        self._qgm = QuasiGlobalMomentum(self) \
            if average_optimizer_state == "quasi_global" else None
        self._buckets = buckets
        # Streams are named by creation order, which every rank shares.
        self._name = f"wagma.optimizer{next(_instances)}"
        self._round = 0  # this rank's own steps
        self._served = -1  # wait-avoiding global rounds: the round that served the last step
        self._model_buffers = None  # built at the first step, once state exists
        self._sync_buffers = None
        self._forced_buffers = None

    # -- what gets averaged -----------------------------------------------------------
    def _check_named_parameters(self, named_parameters):
        if named_parameters is None:
            return
        named = list(named_parameters)
        if any(not isinstance(p, tuple) or len(p) != 2 for p in named):
            raise ValueError("named_parameters should be a sequence of (name, parameter) "
                             "tuples, usually model.named_parameters()")
        names = [k for k, _ in named]
        dups = sorted({k for k in names if names.count(k) > 1})
        if dups:
            raise ValueError(f"parameter names in named_parameters must be unique; "
                             f"duplicates: {', '.join(dups)}")
        named_ids = {id(v) for _, v in named}
        if any(id(p) not in named_ids for g in self.param_groups for p in g["params"]):
            raise ValueError("named_parameters was given, but some optimizer parameters "
                             "are not in it")

    def _params(self):
        return [p for g in self.param_groups for p in g["params"]]

    def _state_tensors(self, param):
        state = self.state.get(param, {})
        # The step counter is equal on every rank and not a model quantity.
        return [state[k] for k in sorted(state) if k != "step"
                and torch.is_tensor(state[k]) and torch.is_floating_point(state[k])]

    def _bucketed(self, with_state):
        buckets = self._buckets(self._params()) if self._buckets else [self._params()]
        out = []
        for bucket in buckets:
            tensors = [p.data for p in bucket]
            if with_state:
                tensors += [s for p in bucket for s in self._state_tensors(p)]
            out.append(tensors)
        return out

    def _build(self):
        always = self._state_averaging == "always"
        self._model_buffers = fuse_by_dtype(None, self._bucketed(with_state=always))
        on_sync = list(self._named_buffers)
        # quasi_global: the rebuilt buffers are averaged at global rounds too, so
        # each rank's share of a global round's pull does not live on in its own
        # momentum (measured: without it, 73-75% instead of 86% on bench's mlp task).
        if self._state_averaging in ("on_sync", "quasi_global"):
            on_sync += [s for p in self._params() for s in self._state_tensors(p)]
        self._sync_buffers = fuse_by_dtype(on_sync) if on_sync else []

    # -- the step ---------------------------------------------------------------------
    def step(self, closure=None):
        before = self._qgm.snapshot() if self._qgm else None
        loss = super(self.__class__, self).step(closure)
        global_round = self._average()
        if self._qgm:
            self._qgm.rebuild(before)
        if global_round and self._sync_buffers:
            self._average_globally(self._sync_buffers, "sync")
        return loss

    def _average(self):
        if self._model_buffers is None:
            self._build()
        tau = self._config.sync_period
        # Blocking global rounds serve each step by its own round number.
        global_round = is_global_round(self._round, tau)
        self._round += 1
        pending = []
        for i, fb in enumerate(self._model_buffers):
            flat = fb.pack()
            wire = flat.half() if self._fp16_wire and flat.dtype == torch.float32 else flat
            sent = wire.clone() if wire is not flat else None
            pending.append((fb, flat, wire, sent, ops.group_allreduce_async_(
                wire, name=f"{self._name}.model{i}", **self._knobs)))
        for fb, flat, wire, sent, handle in pending:
            ops.synchronize(handle)
            if sent is not None:
                # Wait-avoiding global rounds may serve a stream by a later round.
                served_global = is_global_round(handle.round, tau) \
                    if self._wait_avoiding_global else global_round
                if fp16_correction_rule(served_global) == "replace":
                    flat.copy_(wire)
                else:
                    flat.add_(wire.float() - sent.float())
            fb.unpack()
        if self._wait_avoiding_global:
            served = pending[0][-1].round
            # The global rounds served, or skipped (served by the engine) since the
            # last step: the other ranks ran their duties there.
            global_round = global_round_between(self._served, served, tau)
            self._served = served
        return global_round

    def _average_globally(self, buffers, tag, blocking=False):
        """Global average through the engine (every round of these streams is global:
        sync_period=1). Blocking (or lockstep) rounds are exact and bit-identical on
        every rank. With wait-avoiding global rounds (unless ``blocking``) they wait
        for nobody: a rank that skipped its model's global rounds contributes its
        published state there, left out of the average when older than max_staleness
        of these rounds (at most one per global model round)."""
        knobs = dict(self._knobs, sync_period=1)
        if blocking:
            knobs["global_rounds"] = "blocking"
        elif self._wait_avoiding_global:
            knobs["max_staleness"] = self._config.resolved_max_staleness
        handles = [(fb, ops.group_allreduce_async_(fb.pack(), name=f"{self._name}.{tag}{i}",
                                                   **knobs))
                   for i, fb in enumerate(buffers)]
        for fb, handle in handles:
            ops.synchronize(handle)
            fb.unpack()

    def sync(self):
        """Averages the model (and buffers, and state unless "never"; "quasi_global"
        momentum too) over all ranks now, e.g. before evaluation or a checkpoint. Every
        rank must call it."""
        if self._model_buffers is None:
            self._build()
        if self._forced_buffers is None:
            tensors = [t for bucket in self._bucketed(self._state_averaging != "never")
                       for t in bucket] + list(self._named_buffers)
            self._forced_buffers = fuse_by_dtype(tensors)
        self._average_globally(self._forced_buffers, "forced", blocking=True)

    def join(self):
        """Call when this rank runs out of data: its model keeps serving the other
        ranks' averaging until every rank has joined. Returns the last rank to join.
        With blocking global rounds every rank's step count is then the furthest any
        rank reached, so training may continue in step; with wait-avoiding ones (the
        default) each keeps its own count and the rounds go on from the newest."""
        last = ops.join()
        if not self._wait_avoiding_global:
            # Blocking rounds: step numbers are round numbers, so they must agree.
            self._round = int(_hvd.allreduce(torch.tensor(self._round), op=_hvd.Max,
                                             name=f"{self._name}.join"))
        return last

    # -- Horovod compatibility --------------------------------------------------------
    def synchronize(self):
        """No-op: gradients stay local (Horovod's gradient-clipping recipe still runs)."""

    def skip_synchronize(self):
        """Context manager kept for Horovod scripts; a no-op here."""
        return _NullContext()

    def set_backward_passes_per_step(self, passes):
        if passes <= 0:
            raise ValueError("backward_passes_per_step must be > 0")
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
                              group_size=None, sync_period=10,
                              averaging=OPTIMIZER_AVERAGING,
                              wait_avoiding=True, named_buffers=None,
                              average_optimizer_state="on_sync", global_rounds=None,
                              max_staleness=None):
    """Wraps ``optimizer`` like ``hvd.DistributedOptimizer`` (same arguments, same
    order), but averages models with WAGMA instead of allreducing gradients.

    WAGMA arguments (keyword-only):
      group_size: ranks per averaging group S (default: smallest power of 2 >= sqrt P).
      sync_period: every this many steps the average is global (tau).
      averaging: "local" (the default), "fresh" or "paper" rule for stale
        contributions (DESIGN.md §3; chosen by the time-to-accuracy matrix, README).
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
        while it computed. "blocking" is the paper's: every rank enters every global
        round, which leaves the models bit-identical there.
      max_staleness: with wait-avoiding global rounds, the oldest (in rounds) a value
        an engine contributes for its app may be; an older one is left out of the
        average, and nobody waits for the slower rank (default: sync_period).

    Horovod arguments: ``process_set`` restricts WAGMA to that set's ranks;
    ``compression=Compression.fp16`` sends fp16 (accumulated in fp32);
    ``num_groups``/``groups`` only split the fusion buffers; ``op`` must be Average;
    ``gradient_predivide_factor`` and ``sparse_as_dense`` concern gradient allreduce,
    which WAGMA does not do, and are ignored; ``backward_passes_per_step`` is kept for
    compatibility: gradients accumulate locally and every ``step()`` averages.
    """
    check_horovod_arguments(_hvd, op, backward_passes_per_step, compression,
                            gradient_predivide_factor, average_optimizer_state)
    if average_optimizer_state == "quasi_global":
        QuasiGlobalMomentum.check(optimizer)  # before anything is set up
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,),
               dict(_DistributedWagmaOptimizer.__dict__))
    knobs = dict(group_size=group_size, sync_period=sync_period, averaging=averaging,
                 wait_avoiding=wait_avoiding,
                 global_rounds=optimizer_global_rounds(global_rounds, wait_avoiding),
                 max_staleness=max_staleness)
    return cls(optimizer.param_groups, named_parameters, compression,
               backward_passes_per_step, process_set, knobs, named_buffers,
               average_optimizer_state, buckets_from_groups(groups, num_groups))
