"""The training methods of the time-to-accuracy matrix (bench/time_to_accuracy.py).

A method is named by a spec, ``NAME`` or ``NAME:key=value,key=value``:

* ``horovod``: ``hvd.DistributedOptimizer`` (gradient allreduce every step).
* ``localsgd[:tau=T]``: local SGD, PyTorch's ``PeriodicModelAverager(period=T)``
  (exact global average at its calls 0, T, 2T, ...).
* ``hier[:S=G,tau=T]``: PyTorch's ``HierarchicalModelAverager`` with periods
  {1: G, T: P}: blocking averages in fixed subgroups of G consecutive ranks at every
  step, a global one every T steps. WAGMA without wait-avoidance or butterfly.
  G defaults to WAGMA's default group size.
* ``diloco[:tau=T,outer=LR]``: local SGD whose periodic global average x̄ becomes an
  outer gradient, DiLoCo style (torchft's recipe): Δ = x_anchor − x̄, and
  ``torch.optim.SGD(anchor, lr=LR, momentum=0.9, nesterov=True)`` steps the anchor
  with gradient Δ; every rank restarts from the new anchor. LR defaults to the task's
  ``diloco_outer_lr`` (tuned once per task). LR = 1 without momentum is local SGD.
* ``wagma[:key=value,...]``: ``DistributedWagmaOptimizer`` with the library's defaults
  unless overridden: ``rule`` (averaging), ``state`` (average_optimizer_state),
  ``rounds`` (global_rounds: blocking | wa), ``S`` (group_size), ``tau``
  (sync_period), ``stale`` (max_staleness), ``outer=LR`` (beyond the paper: the DiLoCo
  outer Nesterov step above, taken at every global round, with blocking global
  rounds only: they leave every rank with the same x̄).

All methods share the task's inner optimizer: SGD with the task's lr and momentum.
Gradient averaging (Horovod) and model averaging run over the same 8 processes;
the averagers use a gloo process group over loopback, the others MPI.

Each method object exposes ``step()`` (the optimizer step and the method's
communication, after ``backward()``), ``lockstep`` (False only for wait-avoiding
global rounds: ranks then stop at their own deadline and ``finish()`` joins), and
``synced(i)``: True when after its i-th step (0-based) every rank has just passed the
same synchronising step, so the runner's budget check (an MPI allreduce) adds no wait
the method does not already have.
"""
import torch

WAGMA_KEYS = {"rule": "averaging", "state": "average_optimizer_state",
              "rounds": "global_rounds", "S": "group_size", "tau": "sync_period",
              "stale": "max_staleness"}
ROUNDS = {"blocking": "blocking", "wa": "wait_avoiding", "wait_avoiding": "wait_avoiding"}
BASELINES = ("localsgd", "hier", "diloco")   # the local-SGD family
NAMES = ("horovod",) + BASELINES + ("wagma",)


def parse_spec(spec):
    """'wagma:rule=local,S=2' -> ('wagma', {'rule': 'local', 'S': 2})."""
    name, _, rest = spec.partition(":")
    if name not in NAMES:
        raise ValueError(f"unknown method {name!r} in {spec!r}; choose from {NAMES}")
    opts = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"{spec!r}: expected key=value, got {item!r}")
        opts[key] = _value(value)
    allowed = {"horovod": set(), "localsgd": {"tau"}, "hier": {"S", "tau"},
               "diloco": {"tau", "outer"},
               "wagma": set(WAGMA_KEYS) | {"outer"}}[name]
    unknown = set(opts) - allowed
    if unknown:
        raise ValueError(f"{spec!r}: unknown options {sorted(unknown)} for {name} "
                         f"(allowed: {sorted(allowed)})")
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


def build(spec, model, task, ctx):
    """The method object for ``spec`` around ``model`` (already broadcast)."""
    name, opts = parse_spec(spec)
    tau = opts.get("tau", ctx["tau"])
    inner = torch.optim.SGD(model.parameters(), lr=task.lr, momentum=task.momentum)
    if name == "horovod":
        return Horovod(model, inner, ctx["hvd"], tau)
    if name == "localsgd":
        from torch.distributed.algorithms.model_averaging.averagers import \
            PeriodicModelAverager
        return Averaged(model, inner, PeriodicModelAverager(period=tau, warmup_steps=0),
                        tau)
    if name == "hier":
        from collections import OrderedDict
        from torch.distributed.algorithms.model_averaging.hierarchical_model_averager \
            import HierarchicalModelAverager
        group = opts.get("S", ctx["default_group_size"])
        periods = OrderedDict([(1, group), (tau, ctx["size"])])
        return Averaged(model, inner, HierarchicalModelAverager(periods, warmup_steps=0),
                        tau)
    if name == "diloco":
        return DiLoCo(model, inner, tau, opts.get("outer", task.diloco_outer_lr))
    knobs = {WAGMA_KEYS[k]: (ROUNDS[v] if k == "rounds" else v)
             for k, v in opts.items() if k in WAGMA_KEYS}
    return Wagma(model, inner, ctx["hvd"], knobs, opts.get("outer"))


class Horovod:
    lockstep = True

    def __init__(self, model, inner, hvd, tau):
        self.opt = hvd.DistributedOptimizer(inner, named_parameters=model.named_parameters())
        self.tau = tau

    def step(self):
        self.opt.step()

    def zero_grad(self):
        self.opt.zero_grad()

    def synced(self, i):
        return i % self.tau == 0

    def finish(self):
        pass


class Averaged(Horovod):
    """Local steps, then a torch.distributed averager (global average at calls
    0, tau, 2 tau, ...)."""

    def __init__(self, model, inner, averager, tau):
        self.model, self.opt, self.averager, self.tau = model, inner, averager, tau

    def step(self):
        self.opt.step()
        self.averager.average_parameters(self.model.parameters())


class OuterNesterov:
    """The DiLoCo outer step on a global average x̄ (identical on every rank):
    Δ = anchor − x̄;  u ← 0.9 u + Δ;  anchor ← anchor − lr (Δ + 0.9 u)  (Nesterov);
    the model restarts from the anchor. ``torch.optim.SGD`` does the arithmetic."""

    def __init__(self, model, lr):
        self.params = list(model.parameters())
        self.anchor = [p.detach().clone() for p in self.params]
        self.opt = torch.optim.SGD(self.anchor, lr=lr, momentum=0.9, nesterov=True)

    @torch.no_grad()
    def __call__(self):
        for a, p in zip(self.anchor, self.params):
            a.grad = a - p
        self.opt.step()
        for a, p in zip(self.anchor, self.params):
            p.copy_(a)


class DiLoCo(Horovod):
    def __init__(self, model, inner, tau, outer_lr):
        import torch.distributed as dist
        self.model, self.opt, self.tau, self.dist = model, inner, tau, dist
        self.outer = OuterNesterov(model, outer_lr)
        self.count = 0

    def step(self):
        self.opt.step()
        self.count += 1
        if self.count % self.tau == 0:
            from torch.nn.utils import parameters_to_vector, vector_to_parameters
            with torch.no_grad():
                flat = parameters_to_vector(self.model.parameters())
                self.dist.all_reduce(flat)
                flat /= self.dist.get_world_size()
                vector_to_parameters(flat, self.model.parameters())
            self.outer()

    def synced(self, i):
        return (i + 1) % self.tau == 0


class Wagma(Horovod):
    def __init__(self, model, inner, hvd, knobs, outer_lr):
        from horovod_wagma.common.rounds import is_global_round
        self.opt = hvd.DistributedWagmaOptimizer(
            inner, named_parameters=model.named_parameters(), **knobs)
        self.tau = self.opt._config.sync_period
        self.lockstep = self.opt._config.global_rounds == "blocking"
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
