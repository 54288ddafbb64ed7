"""StepClock: a rank's compute time per optimizer step, never its waits.

Every optimizer's communication happens inside ``step()``: Horovod's
DistributedOptimizer waits for its allreduces there (synchronize), WAGMA averages
there. So the time from one step's end to the next step's start is the rank's own
work (data loading, forward, backward; Horovod's backward only enqueues its
allreduces). The frameworks feed the clock: PyTorch through the global optimizer
step hooks (torch/step_hooks.py), which fire around the outermost step only
(wrapped optimizers call their parent's step: the depth counts the nesting).

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

    def step_begin(self):
        self._depth += 1
        if self._depth == 1 and self._last_end is not None:
            self._gaps.append(self._now() - self._last_end)

    def step_end(self):
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            self._last_end = self._now()

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
