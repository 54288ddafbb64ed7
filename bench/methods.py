"""The one method syntax and registry of every benchmark: ``NAME[:key=value,...]``.

* ``horovod``: Horovod's ``DistributedOptimizer`` (a gradient allreduce every step).
* ``localsgd[:tau=T]``: local SGD, PyTorch's ``PeriodicModelAverager(period=T)``
  (an exact global average at its calls 0, T, 2T, ...).
* ``hier[:S=G,tau=T]``: PyTorch's ``HierarchicalModelAverager`` with periods
  {1: G, T: P}: blocking averages in fixed subgroups of G consecutive ranks every step,
  a global one every T steps (WAGMA without wait-avoidance or butterfly). G defaults
  to WAGMA's default group size.
* ``diloco[:tau=T,outer=LR]``: local SGD whose periodic global average becomes an
  outer gradient, DiLoCo style (``OuterNesterov``, lr LR); LR = 1 without momentum
  would be local SGD.
* ``wagma[:key=value,...]``: ``DistributedWagmaOptimizer`` with the library's defaults
  (wait-avoiding global rounds) unless a key overrides them: ``rule`` (averaging),
  ``state`` (average_optimizer_state), ``rounds`` (global_rounds: ``blocking`` | ``wa``),
  ``S`` (group_size), ``tau`` (sync_period), ``stale`` (max_staleness), ``drift``
  (drift_correction), ``v`` (second_moment: ``group`` | ``local``), ``wa``
  (wait_avoiding group rounds, 1 | 0), ``fp16=1`` (fp16 compression), ``outer=LR``
  (beyond the paper: the DiLoCo outer step at every global round; blocking global
  rounds only, which leave every rank with the same x̄).

* ``torchft_localsgd[:tau=T]``, ``torchft_diloco[:tau=T,outer=LR]``,
  ``hivemind[:tau=T,mm=S,local=0|1]``: the real peers from their own packages
  (bench/peers.py; ``make bench-peers``). torchft's DiLoCo keeps its own outer
  optimizer's lr (0.7) unless ``outer`` is given.

The paper's WAGMA is ``wagma:rounds=blocking``. A benchmark names the families and
keys it supports (``check``); a value missing from a spec falls back to the
benchmark's default for that key (e.g. its ``--sync-period``), then the library's.
The methods' interface and its base class ``Horovod``: bench/method_base.py.
"""
from method_base import Horovod

WAGMA_KEYS = {"rule": "averaging", "state": "average_optimizer_state",
              "rounds": "global_rounds", "S": "group_size", "tau": "sync_period",
              "stale": "max_staleness", "wa": "wait_avoiding",
              "drift": "drift_correction", "v": "second_moment"}
# The real peers' keys (bench/peers.py): tau: torchft's sync_every, and hivemind's
# target_batch_size in global batches (tau x ranks x batch samples); outer: DiLoCo's
# outer learning rate; mm: hivemind's matchmaking_time (s); local: hivemind's
# use_local_updates (0 | 1).
PEER_KEYS = {"torchft_localsgd": {"tau"}, "torchft_diloco": {"tau", "outer"},
             "hivemind": {"tau", "mm", "local"}}
ROUNDS = {"blocking": "blocking", "wa": "wait_avoiding", "wait_avoiding": "wait_avoiding"}
KEYS = {"horovod": set(), "localsgd": {"tau"}, "hier": {"S", "tau"},
        "diloco": {"tau", "outer"}, "wagma": set(WAGMA_KEYS) | {"fp16", "outer"},
        **PEER_KEYS}
BASELINES = ("localsgd", "hier", "diloco")   # the local-SGD family
PEERS = tuple(PEER_KEYS)


def parse_spec(spec):
    """'wagma:rule=local,S=2' -> ('wagma', {'rule': 'local', 'S': 2})."""
    name, _, rest = spec.partition(":")
    if name not in KEYS:
        raise ValueError(f"unknown method {name!r} in {spec!r}; choose from {tuple(KEYS)}")
    opts = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"{spec!r}: expected key=value, got {item!r}")
        opts[key] = _value(value)
    unknown = set(opts) - KEYS[name]
    if unknown:
        raise ValueError(f"{spec!r}: unknown options {sorted(unknown)} for {name} "
                         f"(allowed: {sorted(KEYS[name])})")
    if opts.get("rounds", "blocking") not in ROUNDS:
        raise ValueError(f"{spec!r}: rounds is one of blocking, wa")
    return name, opts


def _value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def family(spec):
    return parse_spec(spec)[0]


def check(spec, supported, unsupported_keys=()):
    """Raises ValueError unless ``spec`` parses, its family is in ``supported`` and it
    uses none of ``unsupported_keys`` (a benchmark's limits)."""
    name, opts = parse_spec(spec)
    if name not in supported:
        raise ValueError(f"{spec!r}: this benchmark runs {', '.join(supported)}")
    bad = set(opts) & set(unsupported_keys)
    if bad:
        raise ValueError(f"{spec!r}: {sorted(bad)} not supported by this benchmark")


def blocking(spec):
    """Whether every rank steps in lockstep with this method, from the spec alone: all
    but WAGMA with wait-avoiding global rounds (the library's default, which also
    holds blocking ones when group rounds wait, wa=0)."""
    name, opts = parse_spec(spec)
    if name != "wagma":
        return True
    return ROUNDS[opts.get("rounds", "blocking" if opts.get("wa") == 0 else "wa")] \
        == "blocking"


def _given(defaults):
    return {k: v for k, v in (defaults or {}).items() if v is not None}


def wagma_knobs(opts, defaults=None):
    """DistributedWagmaOptimizer keyword arguments of a wagma spec's options, over
    ``defaults`` (a benchmark's values, spec keys)."""
    knobs = {}
    for key, value in dict(_given(defaults), **opts).items():
        if key == "rounds":
            value = ROUNDS[value]
        elif key == "wa":
            value = bool(value)
        if key in WAGMA_KEYS:
            knobs[WAGMA_KEYS[key]] = value
    return knobs


def _wagma_optimizer(hvd, inner, opts, defaults=None, **kw):
    """hvd.DistributedWagmaOptimizer around ``inner`` for a wagma spec's options."""
    kw.update(wagma_knobs(opts, defaults))
    if opts.get("fp16"):
        kw["compression"] = hvd.Compression.fp16
    return hvd.DistributedWagmaOptimizer(inner, **kw)


# -- PyTorch ------------------------------------------------------------------------
def build_for_task(spec, task, seed, hvd, size, tau):
    """(model, method) of one run: ``task``'s model for ``seed``, broadcast from rank 0,
    and ``spec`` around the task's local optimizer (``task.make_optimizer``: SGD with
    momentum or Adam, at its lr), kept as the method's ``inner`` (an lr schedule sets
    its param_groups, which the distributed optimizers share); ``tau`` is the
    local-SGD baselines' period."""
    model = task.make_model(seed)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    inner = task.make_optimizer(model.parameters())
    method = build_torch(spec, model, inner, hvd, size,
                         {"tau": tau, "outer": task.diloco_outer_lr}, batch=task.batch)
    method.inner = inner
    return model, method


def build_torch(spec, model, inner, hvd, size, defaults, wagma_defaults=None,
                batch=None):
    """The method object for ``spec`` around ``model`` (already broadcast) and its
    local optimizer ``inner``. It has ``zero_grad()``, ``step()`` (after backward:
    the update and the method's communication), ``lockstep``, ``synced(i)`` (True when
    after its i-th step, 0-based, every rank has just passed the same synchronising
    step, so a check there adds no wait the method does not have) and ``finish()``.
    ``defaults``: the benchmark's values for the other families' keys (tau, outer);
    ``wagma_defaults``: for wagma's (else the library's defaults apply); ``batch``:
    samples per rank and step (hivemind counts its epochs in samples)."""
    name, opts = parse_spec(spec)
    if name == "wagma":
        opts = dict(_given(wagma_defaults), **opts)
    elif name in PEERS:
        import peers
        return peers.build(name, dict(_given({"tau": defaults.get("tau")}), **opts),
                           model, inner, batch)
    else:
        opts = dict(_given(defaults), **opts)
    tau = opts.get("tau")
    if name == "horovod":
        return Horovod(hvd.DistributedOptimizer(
            inner, named_parameters=model.named_parameters()), tau)
    if name == "localsgd":
        from torch.distributed.algorithms.model_averaging.averagers import \
            PeriodicModelAverager
        return Averaged(model, inner, PeriodicModelAverager(period=tau, warmup_steps=0),
                        tau)
    if name == "hier":
        from collections import OrderedDict
        from torch.distributed.algorithms.model_averaging.hierarchical_model_averager \
            import HierarchicalModelAverager
        group = opts.get("S") or hvd.default_group_size(size)
        periods = OrderedDict([(1, group), (tau, size)])
        return Averaged(model, inner, HierarchicalModelAverager(periods, warmup_steps=0),
                        tau)
    if name == "diloco":
        return DiLoCo(model, inner, tau, opts["outer"])
    return Wagma(model, _wagma_optimizer(hvd, inner, opts,
                                         named_parameters=model.named_parameters()),
                 opts.get("outer"))


class Averaged(Horovod):
    """Local steps, then a torch.distributed averager (global average at calls
    0, tau, 2 tau, ...)."""

    def __init__(self, model, inner, averager, tau):
        super().__init__(inner, tau)
        self.model, self.averager = model, averager

    def step(self):
        self.opt.step()
        self.averager.average_parameters(self.model.parameters())


class OuterNesterov:
    """The DiLoCo outer step on a global average x̄ (identical on every rank):
    Δ = anchor − x̄;  u ← 0.9 u + Δ;  anchor ← anchor − lr (Δ + 0.9 u)  (Nesterov);
    the model restarts from the anchor. ``torch.optim.SGD`` does the arithmetic."""

    def __init__(self, model, lr):
        import torch
        self.torch = torch
        self.params = list(model.parameters())
        self.anchor = [p.detach().clone() for p in self.params]
        self.opt = torch.optim.SGD(self.anchor, lr=lr, momentum=0.9, nesterov=True)

    def __call__(self):
        with self.torch.no_grad():
            for a, p in zip(self.anchor, self.params):
                a.grad = a - p
            self.opt.step()
            for a, p in zip(self.anchor, self.params):
                p.copy_(a)


class DiLoCo(Horovod):
    def __init__(self, model, inner, tau, outer_lr):
        import torch.distributed as dist
        super().__init__(inner, tau)
        self.model, self.dist = model, dist
        self.outer = OuterNesterov(model, outer_lr)
        self.count = 0

    def step(self):
        import torch
        from torch.nn.utils import parameters_to_vector, vector_to_parameters
        self.opt.step()
        self.count += 1
        if self.count % self.tau == 0:
            with torch.no_grad():
                flat = parameters_to_vector(self.model.parameters())
                self.dist.all_reduce(flat)
                flat /= self.dist.get_world_size()
                vector_to_parameters(flat, self.model.parameters())
            self.outer()

    def synced(self, i):
        return (i + 1) % self.tau == 0


class Wagma(Horovod):
    def __init__(self, model, opt, outer_lr):
        from horovod_wagma.common.optimizer.rounds import is_global_round
        status = opt.wagma_status()
        super().__init__(opt, status.sync_period)
        self.lockstep = not status.wait_avoiding_global
        self.is_global = is_global_round
        self.outer = None
        if outer_lr is not None:
            if not self.lockstep:
                raise ValueError("outer= needs blocking global rounds (the outer step "
                                 "needs the same global average on every rank)")
            self.outer = OuterNesterov(model, outer_lr)
        self.count = 0

    def step(self):
        self.opt.step()
        if self.outer is not None and self.is_global(self.count, self.tau):
            self.outer()
        self.count += 1

    def synced(self, i):
        return self.lockstep and self.is_global(i, self.tau)

    def finish(self):
        if not self.lockstep:
            self.opt.join()

    def contributions(self):
        """This rank's engine statistics of the optimizer's streams: {stream: {rounds
        entered, global rounds entered, passive joins, rounds left out as too stale,
        rounds skipped, mean age of the passive values that counted}}."""
        import horovod_wagma.torch as whvd
        keys = ("rounds", "global_rounds", "passive_joins", "rounds_left_out",
                "rounds_skipped", "contribution_age_mean")
        name = self.opt.wagma_status().name + "."
        return {k: {f: v[f] for f in keys} for k, v in whvd.stats().items()
                if k.startswith(name)}


# -- Keras --------------------------------------------------------------------------
KERAS_UNSUPPORTED = ("outer",)   # torch only; Keras states: never | on_sync | quasi_global


def build_keras(spec, sgd, hvd, hvd_keras, tau, wagma_defaults=None):
    """(optimizer, lockstep, synced(i)) for a horovod or wagma spec around the Keras
    optimizer ``sgd``; as build_torch (``tau``: Horovod's synchronising period)."""
    from horovod_wagma.common.optimizer.rounds import is_global_round
    name, opts = parse_spec(spec)
    if name == "horovod":
        return hvd_keras.DistributedOptimizer(sgd), True, lambda i: i % tau == 0
    opt = _wagma_optimizer(hvd, sgd, opts, wagma_defaults)
    status = opt.wagma_status()
    tau, lockstep = status.sync_period, not status.wait_avoiding_global
    return opt, lockstep, lambda i: lockstep and is_global_round(i, tau)
