"""StepClock: a rank's own time per optimizer step, never its waits for other ranks.

A step's cycle runs from one step's start to the next: data loading, forward, backward
and the optimizer's own work. The frameworks feed the clock: PyTorch through the
global optimizer step hooks (torch/step_hooks.py), which fire around the outermost
step only (wrapped optimizers call their parent's step: the depth counts the nesting).

What is taken out of a cycle, because it waits for other ranks:
- a gradient-allreduce optimizer's whole ``step()`` (Horovod's DistributedOptimizer
  waits for its allreduces there; the update it then applies costs every rank the
  same);
- Horovod's ``synchronize()``, which its gradient-clipping recipe calls between
  steps: the frameworks time it and report it (``add_wait``).
DistributedWagmaOptimizer's step stays in the cycle: it never waits for another
rank's application, and its averaging is work this rank does per step (a fast rank
activates more rounds than a slow one: leaving it out understated how much slower a
slow rank is, and it finished its shares early; docs/design.md section 3 has the
measurement).

An epoch's estimate is the median cycle, so the few that span something else (the
first step after set_epoch, an evaluation, the epoch-end metric allreduce and its
wait, a checkpoint) do not move it.
"""
import statistics
import time


class StepClock:
    def __init__(self, now=time.perf_counter):
        self._now = now
        self._depth = 0
        self._last_begin = None
        self._cycles = []
        self._wait = 0.0  # waits since the last step's start
        self._step_waits = False  # the outermost step in progress waits for others
        self._began = None
        # Whether a step since the last reset was a gradient-allreduce optimizer's
        # (every rank must then take the same number of steps); set by the frameworks.
        self.synchronous = False

    def step_begin(self, waits_for_others=False):
        """An optimizer step starts; ``waits_for_others``: its duration is a wait
        (a gradient-allreduce optimizer's step)."""
        self._depth += 1
        self.synchronous = self.synchronous or waits_for_others
        if self._depth != 1:
            # A nested step (a wrapper calling its parent's): the outermost's
            # duration is a wait if any of them waits.
            self._step_waits = self._step_waits or waits_for_others
            return
        now = self._now()
        if self._last_begin is not None:
            self._cycles.append(now - self._last_begin - self._wait)
        self._last_begin, self._began, self._wait = now, now, 0.0
        self._step_waits = waits_for_others

    def add_wait(self, seconds):
        """A wait between two steps (outside any step: inside one, the step's own
        ``waits_for_others`` decides)."""
        if self._depth == 0:
            self._wait += seconds

    def step_end(self):
        self._depth = max(0, self._depth - 1)
        if self._depth == 0 and self._step_waits:
            self._wait += self._now() - self._began

    def steps(self):
        """Cycles measured since the last reset (one per step after the first)."""
        return len(self._cycles)

    def seconds_per_step(self):
        """Median seconds of a step's cycle, waits taken out, since the last reset;
        None if fewer than 2 steps ran."""
        return statistics.median(self._cycles) if self._cycles else None

    def reset(self):
        """Starts a new measurement (an epoch); the cycle that spans it is not counted."""
        self._cycles = []
        self._last_begin = None
        self._wait = 0.0
        self.synchronous = False
