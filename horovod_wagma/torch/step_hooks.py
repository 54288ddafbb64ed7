"""The process's StepClock, fed by PyTorch's global optimizer step hooks.

``torch.optim.optimizer.register_optimizer_step_pre_hook`` and ``_post_hook`` fire for
every optimizer's ``step()``: the user's, Horovod's DistributedOptimizer and
DistributedWagmaOptimizer alike (each wraps its parent's step, so the hooks nest;
StepClock counts the depth). A Horovod DistributedOptimizer's step waits for its
allreduces, so its duration is a wait; its ``synchronize()``, which Horovod's clipping
recipe calls between steps, is timed and reported as one too. Installed once per process, on
first use.
"""
import time

from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)

from horovod_wagma.common.optimizer.step_clock import StepClock

_clock = None


def _begin(optimizer, clock):
    # Horovod's DistributedOptimizer copies its methods into a subclass of the user's
    # optimizer class, so it is recognised by its allreduce method, not by isinstance.
    synchronous = hasattr(optimizer, "_allreduce_grad_async")
    if synchronous and not getattr(optimizer, "_wagma_waits_timed", False):
        _time_synchronize(optimizer, clock)
    clock.step_begin(waits_for_others=synchronous)


def _time_synchronize(optimizer, clock):
    """Reports the time in ``optimizer.synchronize()`` as a wait: Horovod's clipping
    recipe calls it between steps, where the clock would count it as compute."""
    inner = optimizer.synchronize

    def synchronize(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            clock.add_wait(time.perf_counter() - t0)
    optimizer.synchronize = synchronize
    optimizer._wagma_waits_timed = True


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

