"""One simulated run: the ranks' step loop over the CPU pools and the network, what
one run trains (Scenario), and ``simulate``, every method on one scenario.

P ranks each run the benchmark loop of bench/imbalance.py: per step a compute time
d[t, r] (the nominal schedule of bench/harness.py's ``compute_schedule``, same seeds:
the sleep that stands in for accelerator compute), then w_app seconds of host CPU
(forward/backward of the MLP on the CPU, the optimizer, the Python loop), then the
method's communication (methods/).

A round is a set of CPU jobs, one per member, started together after the round's
network time; it completes when the last one does. On ``this_machine`` all of a
round's cost is such CPU work: on one host every transfer is a memory copy done by the
ranks' own threads (the work per member: calibration.py's w). Waits (in MPI, in the
engine, in Horovod's synchronize) cost no CPU in the model.

Timed windows (as bench/harness.py): lockstep methods run N steps (N rounded up to a
multiple of tau) from a common start; the window ends when the last rank finishes
step N; samples/s = P N B / window (B = 16). ``wagma_wa`` runs in a wall-time window of
the blocking ``wagma`` run's length; a step counts when it completes inside it.
"""
import argparse
import dataclasses
import math
from typing import Optional

from .common import BATCH, MEASURED, METHODS, MODEL_BYTES, harness
from .cpu import CpuPool, EventLoop, FairSharePool, RoundRobinPool, eevdf_slice
from .methods import METHOD_CLASSES
from .methods.wagma import group_size_for


class Run:
    """One method on one schedule: the ranks' step loop, the CPU pools, the network.
    ``steps``: lockstep window of that many steps; ``wall_s``: wall-time window."""

    def __init__(self, method, sched, tau, S, network, calib, nbytes=MODEL_BYTES,
                 steps=None, wall_s=None, max_staleness=None, cpu_model="fair",
                 cpu_jitter="exp", seed=0):
        import numpy as np
        # CPU jobs' lengths: the calibrated mean, exponentially distributed (seeded),
        # or exact ("none"). Exact, identical lengths phase-lock the ranks' sleeps
        # with each other's CPU use, which timer slack, cache misses and interrupts
        # prevent on a real host.
        self._rng = np.random.default_rng([seed, 7]) if cpu_jitter == "exp" else None
        self.P = network.P
        self.sched = np.asarray(sched)
        if self.sched.shape[1] != self.P:
            raise ValueError(f"schedule has {self.sched.shape[1]} ranks, network {self.P}")
        self.tau, self.S, self.net, self.calib, self.nbytes = tau, S, network, calib, nbytes
        self.steps, self.wall_s = steps, wall_s
        self.max_staleness = tau if max_staleness is None else max_staleness
        self.loop = EventLoop()
        self.app = calib.app_cpu_s[method] if network.app_cpu else 0.0
        def pool():
            if cpu_model == "ps":
                return CpuPool(self.loop, calib.effective_cores(self.P))
            cls = RoundRobinPool if cpu_model == "rr" else FairSharePool
            return cls(self.loop, calib.effective_cores(self.P), calib.cores,
                       eevdf_slice(calib.cores))
        if network.cpu == "dedicated":
            self.pools = None
        elif network.cpu == "machine":
            self.pools = [pool()] * self.P
        else:
            by_host = {h: pool() for h in network.hosts()}
            self.pools = [by_host[network.host_of[r]] for r in range(self.P)]
        self.step = [0] * self.P
        self.done_at = [0.0] * self.P
        self.counted = [0] * self.P
        self.method = METHOD_CLASSES[method](self)

    # CPU work: through the rank's pool, or a plain delay without contention.
    def cpu(self, rank, work, callback, thread="app"):
        """``work`` CPU seconds on rank's ``thread`` ("app": the training loop,
        "engine": its communication thread); callback(t) when done."""
        if work <= 0:
            callback(self.loop.now)
            return
        if self.pools is None:   # dedicated cores: exact, no interference
            self.loop.at(self.loop.now + work, callback, self.loop.now + work)
            return
        if self._rng is not None:
            work = float(self._rng.exponential(work))
        self.pools[rank].submit(work, callback, (thread, rank))

    def collective(self, members, kind, net_s, on_done):
        """A round over ``members``: ``net_s`` of network time, then every member's
        CPU work of that round (calibrated per kind and group size); on_done(t) when
        the last member's work is done."""
        work = (self.calib.round_work(kind, len(members), self.nbytes, self.P)
                if self.net.comm_cpu and len(members) > 1 else 0.0)

        def start():
            if work <= 0:
                on_done(self.loop.now)
                return
            left = [len(members)]

            def one(t):
                left[0] -= 1
                if left[0] == 0:
                    on_done(t)
            for m in members:
                self.cpu(m, work, one, "engine")
        self.loop.at(self.loop.now + net_s, start)

    # The step loop of one rank: compute, host CPU, then the method's call.
    def start_step(self, r):
        i = self.step[r]
        if self.steps is not None and i >= self.steps:
            return
        d = float(self.sched[i % len(self.sched), r])
        now = self.loop.now
        if self.pools is None:
            self.loop.at(now + d + self.app, self.method.call, r, i, now + d + self.app)
        else:
            self.loop.at(now + d, self._app_cpu, r, i)

    def _app_cpu(self, r, i):
        self.cpu(r, self.app, lambda t: self.method.call(r, i, t))

    def resume(self, r, t):
        """Rank r's call for its current step returned at time t."""
        if t > self.loop.now:
            self.loop.at(t, self.resume, r, t)
            return
        self.done_at[r] = t
        if self.wall_s is None or t <= self.wall_s:
            self.counted[r] += 1
        self.step[r] += 1
        self.start_step(r)

    def execute(self):
        for r in range(self.P):
            self.start_step(r)
        self.loop.run(until=math.inf if self.wall_s is None else self.wall_s)
        if self.wall_s is None:
            stuck = [r for r in range(self.P) if self.step[r] < self.steps]
            if stuck:
                raise RuntimeError(f"{type(self.method).__name__}: ranks {stuck[:8]} "
                                   "never finished (a deadlock in the model)")
            wall = max(self.done_at)
            total = self.P * self.steps
        else:
            wall = self.wall_s
            total = sum(self.counted)
        out = {"samples_per_s": total * BATCH / wall, "wall_s": wall,
               "steps_per_rank": list(self.counted if self.wall_s else
                                      [self.steps] * self.P)}
        out.update(self.method.stats())
        return out


@dataclasses.dataclass
class Scenario:
    """What one run trains: the pattern (harness.compute_schedule's arguments), the
    WAGMA knobs and the bytes averaged per step. The network is given separately."""
    pattern: str = "random"
    step_time: float = 0.010
    delay: float = 0.040
    num_delayed: int = 2
    slow_ranks: str = "1"
    slow_factor: float = 2.0
    seed: int = 0
    group_size: Optional[int] = None
    sync_period: int = 10
    steps: int = 200
    max_staleness: Optional[int] = None
    nbytes: int = MODEL_BYTES

    def harness_args(self, network):
        """The namespace harness.compute_schedule expects; straggler_host = the
        persistent pattern with every rank of host 0 slow."""
        pattern, slow = self.pattern, self.slow_ranks
        if pattern == "straggler_host":
            pattern = "persistent"
            slow = str(sum(1 for h in network.host_of if h == network.host_of[0]))
        return argparse.Namespace(pattern=pattern, step_time=self.step_time,
                                  delay=self.delay, num_delayed=self.num_delayed,
                                  slow_ranks=slow, slow_factor=self.slow_factor)


def simulate(scn, network, calib, methods=MEASURED, cpu_model="fair", cpu_jitter="exp"):
    """Predicted samples/s (and details) of every method, plus the pattern's ideals."""
    P, tau = network.P, scn.sync_period
    S = group_size_for(P, scn.group_size)
    steps = -(-scn.steps // tau) * tau
    hargs = scn.harness_args(network)
    sched = harness.compute_schedule(hargs, P, steps, scn.seed)
    out = {"P": P, "S": S, "tau": tau, "steps": steps, "network": network.name,
           "ideals": harness.ideals(sched, tau), "methods": {}}
    wall_wagma = None
    order = [m for m in METHODS if m in methods]
    if "wagma_wa" in order and "wagma" not in order:
        order.insert(order.index("wagma_wa"), "wagma")
    for m in order:
        if m == "wagma_wa":
            rows = max(steps, math.ceil(wall_wagma / sched.min()) + tau)
            wsched = harness.compute_schedule(hargs, P, rows, scn.seed)
            run = Run(m, wsched, tau, S, network, calib, scn.nbytes, wall_s=wall_wagma,
                      max_staleness=scn.max_staleness, cpu_model=cpu_model,
                      cpu_jitter=cpu_jitter, seed=scn.seed)
        else:
            run = Run(m, sched, tau, S, network, calib, scn.nbytes, steps=steps,
                      cpu_model=cpu_model, cpu_jitter=cpu_jitter, seed=scn.seed)
        res = run.execute()
        if m == "wagma":
            wall_wagma = res["wall_s"]
        if m in methods:
            out["methods"][m] = res
    return out
