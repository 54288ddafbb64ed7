"""Quasi-global momentum for torch.optim.SGD (the rule and its derivation:
horovod_wagma/common/optimizer/quasi_global.py).

Per parameter group with lr != 0 and momentum beta > 0, per parameter x whose
``momentum_buffer`` m exists after the step (dampening, nesterov and weight_decay are
the wrapped SGD's business; they only shape the step x -> x_new):

    m <- beta * m_old + (1 - beta) * (x - x_new) / lr

where x and m_old are taken before the wrapped step (m_old = 0 at the first step) and
x_new after WAGMA averaging. Groups with lr == 0 keep torch's buffer.
"""
import torch

from horovod_wagma.common.optimizer.quasi_global import check_momentum_sgd


class QuasiGlobalMomentum:
    def __init__(self, optimizer):
        """``optimizer``: the DistributedWagmaOptimizer (its param_groups and state,
        read at every step, so schedulers' lr and momentum changes apply)."""
        self._optimizer = optimizer

    @staticmethod
    def check(optimizer):
        """ValueError unless ``optimizer`` is a torch.optim.SGD with momentum > 0 in
        every parameter group."""
        check_momentum_sgd(type(optimizer).__name__,
                           isinstance(optimizer, torch.optim.SGD),
                           [g.get("momentum", 0) for g in optimizer.param_groups],
                           "torch.optim.SGD", "'on_sync' or 'never'")

    def snapshot(self):
        """(params, lr, beta, copies of x, copies of m_old) per group, taken before the
        wrapped step."""
        state = self._optimizer.state
        snap = []
        for group in self._optimizer.param_groups:
            lr, beta = float(group["lr"]), float(group["momentum"])
            params = [p for p in group["params"] if p.requires_grad]
            if lr == 0 or beta == 0 or not params:
                continue
            olds = [state.get(p, {}).get("momentum_buffer") for p in params]
            olds = (torch._foreach_mul(olds, 1.0) if all(m is not None for m in olds)
                    else [torch.zeros_like(p) if m is None else m.clone()
                          for p, m in zip(params, olds)])
            xs = torch._foreach_mul([p.detach() for p in params], 1.0)  # copies
            snap.append((params, lr, beta, xs, olds))
        return snap

    @torch.no_grad()
    def rebuild(self, snap):
        """Replaces the momentum buffers by the rule, after averaging."""
        state = self._optimizer.state
        for params, lr, beta, xs, olds in snap:
            keep = [i for i, p in enumerate(params)
                    if state.get(p, {}).get("momentum_buffer") is not None]
            if not keep:
                continue
            d = [xs[i] for i in keep]
            torch._foreach_sub_(d, [params[i].detach() for i in keep])  # x - x_new
            torch._foreach_mul_(d, (1.0 - beta) / lr)
            torch._foreach_add_(d, [olds[i] for i in keep], alpha=beta)
            torch._foreach_copy_([state[params[i]]["momentum_buffer"] for i in keep], d)

