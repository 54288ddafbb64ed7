"""The group's second moment for Adam-family optimizers (``second_moment="group"``).

Adam's step m / (sqrt(v) + eps) is linear in its first moment m, not in its second
moment v. With each rank's own v, v_i averages g_i^2 = mu^2 + s^2 (s^2: one rank's
batch noise), where Horovod's v averages the square of the ranks' mean gradient,
mu^2 + s^2 / P. Where noise dominates, the mean of the ranks' Adam steps is then up to
sqrt(P) smaller than Horovod's step (docs/design.md §3, "Adam's second moment").

So each rank's gradient rides the model's group round (appended to the same flat
buffer: one round, twice the bytes), and after the round, per parameter:

    v_i <- max(0, v_i + (1 - beta2) (g_G^2 - g_i^2))

with g_G the round's mean of the members' gradients. The step just taken used
beta2 v + (1 - beta2) g_i^2; after the move v holds beta2 v + (1 - beta2) g_G^2, the
second moment of the group's mean gradient. In lockstep with every round over the
whole world every rank then carries the same v, and the mean of the ranks' steps,
mean_i m_i / (sqrt(v) + eps), is a step on the mean first moment: Horovod's Adam with
its v one gradient behind. A stale member's gradient is as old as its parameters: the
round's rule treats both parts alike.
"""
import torch

from horovod_wagma.common.optimizer import second_moment_policy

# Optimizers whose state keeps Adam's second moment as ``exp_avg_sq`` with
# ``betas`` in every parameter group (subclasses included).
ADAM_FAMILY = (torch.optim.Adam, torch.optim.AdamW, torch.optim.NAdam, torch.optim.RAdam)


def keeps_second_moment(optimizer):
    return isinstance(optimizer, ADAM_FAMILY) and all(
        "betas" in g for g in optimizer.param_groups)


def resolve(mode, optimizer):
    """second_moment's value for ``optimizer`` (common/optimizer/second_moment_policy.py)."""
    return second_moment_policy.resolve(mode, keeps_second_moment(optimizer),
                                        type(optimizer).__name__,
                                        "Adam, AdamW, NAdam, RAdam: exp_avg_sq state")


class GroupSecondMoment:
    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._slots = []   # per fused model buffer: [(param or None, numel)]
        self._own_sq = {}  # fused model buffer -> this step's g_i^2, flat
        self._mean_sq = {}  # fused model buffer -> the round's g_G^2, flat
        self._group_of = {}  # parameter -> its param group (betas)

    def build(self, model_buffers):
        """Which tensors of each fused model buffer are parameters (state tensors,
        packed there under "always", carry no gradient: zero length)."""
        by_storage = {(p.data_ptr(), tuple(p.shape)): p for g in self._optimizer.param_groups
                      for p in g["params"]}
        self._slots = [[(by_storage.get((t.data_ptr(), tuple(t.shape))), t.numel())
                        for t in fb.tensors] for fb in model_buffers]
        self._group_of = {p: g for g in self._optimizer.param_groups for p in g["params"]}

    def attach(self, i, flat):
        """The model buffer ``flat`` with this rank's gradients appended (a parameter
        without a gradient contributes zeros)."""
        grads = [(p.grad.detach().reshape(-1).to(flat.dtype) if p.grad is not None
                  else flat.new_zeros(n)) for p, n in self._slots[i] if p is not None]
        own = torch.cat(grads) if grads else flat.new_zeros(0)
        # Squares in float32 at least (half types), float64 kept; the wire keeps the
        # model's dtype.
        wide = own.to(torch.promote_types(own.dtype, torch.float32))
        self._own_sq[i] = wide * wide
        return torch.cat([flat, own])

    def detach(self, i, combined, model_flat):
        """Copies the averaged model part back into ``model_flat``; keeps the group's
        mean gradient for correct()."""
        n = model_flat.numel()
        model_flat.copy_(combined[:n])
        mean = combined[n:].to(torch.promote_types(combined.dtype, torch.float32))
        self._mean_sq[i] = mean * mean

    def correct(self):
        """v_i <- max(0, v_i + (1 - beta2) (g_G^2 - g_i^2)), per parameter."""
        for i, slots in enumerate(self._slots):
            offset = 0
            for p, n in slots:
                if p is None:
                    continue
                v = self._optimizer.state.get(p, {}).get("exp_avg_sq")
                if v is not None:
                    beta2 = self._group_of[p]["betas"][1]
                    move = (self._mean_sq[i][offset:offset + n]
                            - self._own_sq[i][offset:offset + n]).view(v.shape)
                    v.add_(move.to(v.dtype), alpha=1.0 - beta2).clamp_(min=0)
                offset += n
