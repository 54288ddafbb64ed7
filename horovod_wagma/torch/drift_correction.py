"""Drift correction for non-IID data: per-rank control variates estimated from the
first-moment optimizer state that global rounds average (SCAFFOLD's correction,
Karimireddy et al. 2020, with the momentum buffer as each rank's gradient estimate).

With non-IID shards each rank's gradient g_i is biased towards its own data, so
between global rounds its model drifts towards its own optimum and its momentum
carries that bias. At every global round whose duties average the optimizer state
("on_sync"), a rank sends its first moment m_i, read just before the state's round, on
the optimizer's "drift" stream, whose rule "delta" returns m_i + (m̄ - c_i): m̄ the
round's mean, c_i what this rank counted there (m_i, or the value its engine published
when it served the round while the app computed), nothing when its value was left
out, plus the moves of rounds the app skipped. Per parameter:

    c_i <- c_i + alpha * k * (y_i - m_i)   at each global round (y_i: the drift result)
    g_i <- g_i + c_i                        before every local step

with k converting the moment to gradient units: (1 - beta) / (1 - dampening) for
torch.optim.SGD's momentum_buffer, 1 for Adam's exp_avg. Because m_i already carries
the correction applied since the last round, c_i is an AR(1) filter whose fixed point
is mean_j g_j - g_i for any 0 < alpha <= 1; a smaller alpha trades speed for less
noise (in IID data the estimate is pure noise, of variance alpha / (2 - alpha) of one
round's).

The "delta" rule's moves sum to zero over every round's members, so the variates do:
their mean would act on every rank as a false gradient. Learning from the state's own
result (m'_i - m_i under "local") kept that sum near zero under random delays but not
after a collective that a persistent straggler reached late (docs/design.md §3).
"""
import horovod.torch as _hvd
import torch

from horovod_wagma.common.optimizer import drift_policy
from horovod_wagma.torch import ops
from horovod_wagma.torch.fusion import fuse_by_dtype


def moment_scale(optimizer):
    """(state key, k per parameter group) of the first moment ``optimizer`` keeps, or
    ValueError naming the optimizer when it keeps none."""
    name = type(optimizer).__name__
    if isinstance(optimizer, torch.optim.SGD):
        scales = []
        for g in optimizer.param_groups:
            beta, damp = float(g.get("momentum", 0)), float(g.get("dampening", 0))
            if beta <= 0 or damp >= 1:
                raise ValueError(f"drift_correction needs momentum > 0 (and dampening < 1) "
                                 f"in every parameter group of {name}")
            scales.append((1.0 - beta) / (1.0 - damp))
        return "momentum_buffer", scales
    if all("betas" in g for g in optimizer.param_groups):
        return "exp_avg", [1.0] * len(optimizer.param_groups)
    raise ValueError(f"drift_correction needs torch.optim.SGD with momentum or an "
                     f"Adam-family optimizer (exp_avg state); got {name}")


def resolve_alpha(alpha, optimizer, state_mode):
    """drift_correction's value for ``optimizer`` (common/optimizer/drift_policy.py)."""
    return drift_policy.resolve_alpha(alpha, lambda: moment_scale(optimizer), state_mode)


class DriftCorrection:
    def __init__(self, optimizer, alpha):
        """``optimizer``: the DistributedWagmaOptimizer; ``alpha`` in (0, 1]."""
        self._optimizer = optimizer
        self._alpha = float(alpha)
        self._key, _ = moment_scale(optimizer)
        self._c = {}   # parameter -> its control variate

    def _moments(self):
        """[(param, its first moment, k)] for parameters whose moment exists."""
        key, scales = moment_scale(self._optimizer)
        out = []
        for group, k in zip(self._optimizer.param_groups, scales):
            for p in group["params"]:
                m = self._optimizer.state.get(p, {}).get(key)
                if m is not None:
                    out.append((p, m, k))
        return out

    def create_variates(self):
        """Creates a zero control variate for every parameter whose moment exists (the
        optimizer's first step made them)."""
        for p, m, _ in self._moments():
            if p not in self._c:
                self._c[p] = torch.zeros_like(m)

    @torch.no_grad()
    def correct_gradients(self):
        """g_i <- g_i + c_i, before the wrapped optimizer's step."""
        for p, c in self._c.items():
            if p.grad is not None:
                p.grad.add_(c)

    def before_average(self):
        """Starts the drift stream's round on this rank's moments, before the state's
        global round averages them (the two rounds run side by side)."""
        moments = [(p, m, k) for p, m, k in self._moments() if p in self._c]
        core = self._optimizer._core
        owner = {id(m): (p, k) for p, m, k in moments}
        pending = []
        for i, fb in enumerate(fuse_by_dtype([m for _, m, _ in moments])):
            flat = fb.pack()
            sent = flat.clone()
            owners = [owner[id(t)] for t in fb.tensors]
            pending.append((owners, flat, sent, ops.group_allreduce_async_(
                flat, name=core.names.stream("drift", i), **core.drift_stream_knobs())))
        return pending

    def gather(self, params, process_set, name):
        """Every rank's variates, [{index in ``params``: CPU tensor}] in the process
        set's rank order: one allgather per dtype, which every rank calls
        (sync(checkpoint=True)). Ranks of one model have variates for the same
        parameters, so the flat buffers have the same length everywhere."""
        index = {p: i for i, p in enumerate(params)}
        by_dtype = {}
        for p, c in sorted(self._c.items(), key=lambda pc: index[pc[0]]):
            by_dtype.setdefault(c.dtype, []).append((index[p], c))
        ranks = None
        for dtype, items in sorted(by_dtype.items(), key=lambda d: str(d[0])):
            flat = torch.cat([c.reshape(-1) for _, c in items]).unsqueeze(0)
            rows = _hvd.allgather(flat, name=f"{name}.{str(dtype)[6:]}",
                                  process_set=process_set).cpu()
            ranks = ranks or [{} for _ in range(rows.shape[0])]
            for row, out in zip(rows, ranks):
                offset = 0
                for i, c in items:
                    out[i] = row[offset:offset + c.numel()].view(c.shape).clone()
                    offset += c.numel()
        return ranks or []

    def restore(self, params, variates):
        """This rank's variates from a checkpoint ({index in ``params``: tensor}); an
        empty dict starts them from zero again (create_variates)."""
        self._c = {params[i]: t.to(params[i].device).clone() for i, t in variates.items()}

    @torch.no_grad()
    def after_average(self, pending):
        """c_i <- c_i + alpha k (m̄ - m_i), with m̄ - m_i the drift stream's move."""
        for owners, flat, sent, handle in pending:
            ops.synchronize(handle)
            moves, offset = flat - sent, 0
            for p, k in owners:
                c = self._c[p]
                c.add_(moves[offset:offset + c.numel()].view_as(c), alpha=self._alpha * k)
                offset += c.numel()
