"""The measuring every time-to-accuracy benchmark shares (time_to_accuracy.py,
epoch_loop.py and keras_epoch_loop.py), in any framework; the protocol:
docs/benchmarks.md, "Time to accuracy".

* the clock: ``Snapshots`` of the model at fixed times, ``Evaluation`` (a metric
  averaged through a Horovod collective, its compute off the clock) and
  ``clocked_run``;
* after the clock: ``evaluate_snapshots``, ``after_clock`` (a run's curve and pace on
  rank 0) and ``run_record`` (the same for an epoch loop's run);
* the analysis of a curve: ``time_to_target``, ``final_accuracy``, ``ratio``.
"""
import math
import statistics
import time

from host_load import HostLoad


# -- the clock ------------------------------------------------------------------------
class Snapshots:
    """Copies of the model at times interval, 2 interval, ..., budget (and 0): at the
    end of each step, every slot time the step spanned gets the model from before the
    step, which is the model the rank had at that time. ``flatten(out)`` writes the
    model into ``out``, a float32 numpy vector of ``numel`` elements (any framework)."""

    def __init__(self, flatten, numel, interval, budget):
        import numpy as np
        self.flatten = flatten
        self.interval = interval
        self.slots = int(budget / interval + 1e-9)
        self.store = np.empty((self.slots + 1, numel), np.float32)
        self.prev = 0   # the slot holding the model from before the step under way
        self.flatten(self.store[0])
        self.filled = 1

    def before_step(self):
        self.prev = self.filled if self.filled <= self.slots else None
        if self.prev is not None:
            self.flatten(self.store[self.prev])

    def after_step(self, now):
        if self.prev is None:
            return
        while self.filled <= self.slots and self.filled * self.interval <= now:
            if self.filled != self.prev:
                self.store[self.filled] = self.store[self.prev]
            self.filled += 1

    def finish(self):
        """Slots after the rank's last step: its final model."""
        while self.filled <= self.slots:
            self.flatten(self.store[self.filled])
            self.filled += 1


class Evaluation:
    """Every ``every`` steps, on every rank at the same step count, an evaluation whose
    metric is averaged through a Horovod collective (as Horovod's examples'
    ``metric_average``). ``metric()`` computes this rank's number; ``allreduce(values)``
    sums a list of floats over the ranks through Horovod. The collective also carries
    "past the budget?", so every rank stops at the same evaluation."""

    def __init__(self, every, metric, allreduce):
        self.every, self.metric, self.allreduce = every, metric, allreduce
        self.compute_s = 0.0  # the metric's own compute, kept off the clock
        self.collective_s = 0.0  # time in the collective, waits included: on the clock

    def __call__(self, past_budget):
        """Runs one evaluation; returns whether any rank is past the budget."""
        t0 = time.perf_counter()
        value = self.metric()
        t1 = time.perf_counter()
        total = self.allreduce([value, 1.0 if past_budget else 0.0])
        self.compute_s += t1 - t0
        self.collective_s += time.perf_counter() - t1
        return total[1] > 0


def clocked_run(comm, budget, snaps, one_step, lockstep, synced, evaluation=None):
    """A barrier, then ``one_step(i)`` (the compute sleep and training step i) until the
    budget; with an ``Evaluation`` all stop together at the first one past the budget,
    without one lockstep methods agree on stopping where ``synced(i)``. Returns
    (steps, wall seconds without the evaluations' compute, the host's CPU busy share)."""
    from mpi4py import MPI
    steps = 0
    comm.Barrier()
    load = HostLoad()
    t0 = time.perf_counter()
    while True:
        snaps.before_step()
        one_step(steps)
        now = time.perf_counter() - t0 - (evaluation.compute_s if evaluation else 0.0)
        snaps.after_step(now)
        steps += 1
        if evaluation is not None:
            if steps % evaluation.every == 0 and evaluation(now >= budget):
                break
        elif lockstep:
            if synced(steps - 1) and comm.allreduce(now >= budget, op=MPI.LOR):
                break
        elif now >= budget:
            break
    return (steps, time.perf_counter() - t0 - (evaluation.compute_s if evaluation else 0.0),
            load.busy_share())


# -- after the clock ------------------------------------------------------------------
def evaluate_snapshots(snaps, accuracy, comm):
    """[[time, accuracy(rank-averaged snapshot)], ...] on rank 0 (None elsewhere);
    ``accuracy(flat)`` evaluates one flat model, the snapshots are split over ranks."""
    import numpy as np
    from mpi4py import MPI
    rank, size = comm.Get_rank(), comm.Get_size()
    avg = np.empty_like(snaps.store)
    comm.Allreduce(snaps.store, avg, op=MPI.SUM)
    avg /= size
    mine = {k: accuracy(avg[k]) for k in range(rank, len(avg), size)}
    parts = comm.gather(mine, root=0)
    if rank != 0:
        return None
    accs = {k: a for part in parts for k, a in part.items()}
    return [[k * snaps.interval, accs[k]] for k in range(len(avg))]


def after_clock(comm, snaps, accuracy, steps, wall, extra=None):
    """Off the clock, after the rank's last step: the run's per-rank pace and its curve
    (evaluate_snapshots), gathered on rank 0 (None elsewhere)."""
    snaps.finish()
    curve = evaluate_snapshots(snaps, accuracy, comm)
    rates = comm.gather(steps / wall, root=0)
    return None if rates is None else dict(steps_per_s_per_rank=rates,
                                           steps_per_s=statistics.median(rates),
                                           **(extra or {}), curve=curve)


def run_record(comm, snaps, accuracy, steps, wall, epochs, engine, interval, busy):
    """Off the clock, an epoch loop's run (PyTorch or Keras): its curve, pace and
    per-epoch records, on rank 0."""
    # Snapshots were sized for the longest run; keep the slots up to the slowest
    # rank's end (the same count everywhere: their average is an allreduce).
    from mpi4py import MPI
    snaps.slots = min(snaps.slots, comm.allreduce(int(wall / interval) + 1, op=MPI.MAX))
    snaps.store = snaps.store[:snaps.slots + 1]
    per_rank = comm.gather(epochs, root=0)
    samples = comm.gather(sum(e["samples"] for e in epochs), root=0)
    return after_clock(comm, snaps, accuracy, steps, wall,
                       None if per_rank is None else
                       {"epochs_per_rank": per_rank, "samples_per_s": sum(samples) / wall,
                        "engine_per_rank": engine, "cpu_busy": busy})


# -- analysis -------------------------------------------------------------------------
def time_to_target(run, target):
    return next((t for t, acc in run["curve"] if acc >= target), math.inf)


def final_accuracy(run):
    accs = [acc for _, acc in run["curve"][-3:]]
    return sum(accs) / len(accs)


def ratio(a, b):
    """a / b, NaN where b is 0 or never came (infinite)."""
    if b == math.inf or b == 0:
        return math.nan
    return a / b
