"""StepClock: a rank's compute time per optimizer step, never its waits.

Every optimizer's communication happens inside ``step()``: Horovod's
DistributedOptimizer waits for its allreduces there (synchronize), WAGMA averages
there. So the time from one step's end to the next step's start is the rank's own
work (data loading, forward, backward; Horovod's backward only enqueues its
allreduces). The frameworks feed the clock: PyTorch through the global optimizer
step hooks (torch/step_hooks.py), which fire around the outermost step only
(wrapped optimizers call their parent's step: the depth counts the nesting).

One wait can fall between steps: Horovod's gradient-clipping recipe calls the
optimizer's ``synchronize()`` before ``step()``. The frameworks time such calls and
report them (``add_wait``); they are taken out of the gap.

An epoch's estimate is the median of those gaps, so the few that span something else
(the first step after set_epoch, an evaluation, the epoch-end metric allreduce and
its wait, a checkpoint) do not move it.
"""
import statistics
import time


class StepClock:
    def __init__(self, now=time.perf_counter):
        self._now = now
        self._depth = 0
        self._last_end = None
        self._gaps = []
        self._wait = 0.0  # waits reported since the last step's end
        # Whether a step since the last reset was a gradient-allreduce optimizer's
        # (every rank must then take the same number of steps); set by the frameworks.
        self.synchronous = False

    def step_begin(self):
        self._depth += 1
        if self._depth == 1 and self._last_end is not None:
            self._gaps.append(self._now() - self._last_end - self._wait)

    def add_wait(self, seconds):
        """A wait between two steps (outside any step: those are not gaps anyway)."""
        if self._depth == 0:
            self._wait += seconds

    def step_end(self):
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            self._last_end = self._now()
            self._wait = 0.0

    def steps(self):
        """Gaps measured since the last reset (one per step after the first)."""
        return len(self._gaps)

    def seconds_per_step(self):
        """Median compute seconds between steps since the last reset; None if fewer
        than 2 steps ran."""
        return statistics.median(self._gaps) if self._gaps else None

    def reset(self):
        """Starts a new measurement (an epoch); the gap that spans it is not counted."""
        self._gaps = []
        self._last_end = None
        self.synchronous = False
