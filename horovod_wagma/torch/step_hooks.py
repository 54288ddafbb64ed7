"""The process's StepClock, fed by PyTorch's global optimizer step hooks.

``torch.optim.optimizer.register_optimizer_step_pre_hook`` and ``_post_hook`` fire for
every optimizer's ``step()``: the user's, Horovod's DistributedOptimizer and
DistributedWagmaOptimizer alike (each wraps its parent's step, so the hooks nest;
StepClock counts the depth). Installed once per process, on first use.
"""
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)

from horovod_wagma.common.step_clock import StepClock

_clock = None
_synchronous = [False]  # whether a step was Horovod's gradient-allreduce optimizer's


def _begin(optimizer, clock):
    # Horovod's DistributedOptimizer copies its methods into a subclass of the user's
    # optimizer class, so it is recognised by its allreduce method, not by isinstance.
    if hasattr(optimizer, "_allreduce_grad_async"):
        _synchronous[0] = True
    clock.step_begin()


def step_clock():
    """The process's StepClock (installs the hooks on the first call)."""
    global _clock
    if _clock is None:
        clock = StepClock()
        register_optimizer_step_pre_hook(
            lambda optimizer, args, kwargs: _begin(optimizer, clock))
        register_optimizer_step_post_hook(
            lambda optimizer, args, kwargs: clock.step_end())
        _clock = clock
    return _clock


def synchronous_steps_seen():
    """Whether Horovod's DistributedOptimizer (every rank allreduces gradients at every
    step, so every rank must take the same number of steps) has stepped here."""
    return _synchronous[0]
