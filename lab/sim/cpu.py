"""The event loop, and how the host's cores are shared among the ranks' threads.

Host CPU work is a job on one thread: w_app(method) per step on the rank's training
loop thread, and each member's share w of a round's reduction on its engine thread
(Horovod's: its background thread). C_eff = C - B of the host's C cores are left to
these jobs; B cores are taken by Horovod's background threads (calibration.py). How
the cores are shared (``--cpu-model``):

* ``fair`` (default, FairSharePool): the kernel's fair scheduling, simplified. C
  cores, each available C_eff / C of the time; a free core runs the runnable thread
  with the least virtual runtime v (CPU received) for at most one time slice q, after
  which the thread requeues with v increased; a thread waking up gets
  v = max(v, v_min - q). So a rank that slept (a straggler computing) is served before
  ranks that kept using the CPU. q = Linux EEVDF's base slice, 0.75 ms x (1 + log2 C)
  = 1.5 ms on 2 cores.
* ``rr`` (RoundRobinPool): round robin with the same slice (arrival order, no
  fairness credit).
* ``ps`` (CpuPool): processor sharing, each of n active jobs at rate
  min(1, C_eff / n).

On shared cores a CPU job's length is drawn from an exponential distribution with the
calibrated mean (seeded by ``--seed``; ``--cpu-jitter none``: exactly the mean). With
exact, identical lengths the model's ranks phase-lock (their sleeps line up with each
other's CPU use and stay so), which timer slack, cache misses and interrupts prevent
on a real host; the exponential adds no parameter. On dedicated cores (``datacenter``)
jobs take exactly their mean. (The draw is run.py's ``Run.cpu``.)
"""
import heapq
import itertools
import math

CPU_MODELS = {"fair": "fair share by virtual runtime, kernel time slice",
              "rr": "round robin, kernel time slice", "ps": "processor sharing"}


class EventLoop:
    """Time-ordered callbacks; ties in insertion order (so runs are deterministic)."""

    def __init__(self):
        self.now = 0.0
        self._q = []
        self._seq = itertools.count()

    def at(self, t, fn, *args):
        heapq.heappush(self._q, (t, next(self._seq), fn, args))

    def run(self, until=math.inf):
        q = self._q
        while q and q[0][0] <= until:
            t, _, fn, args = heapq.heappop(q)
            self.now = t
            fn(*args)


class CpuPool:
    """Processor sharing over ``capacity`` cores: with n jobs active each progresses at
    min(1, capacity / n) CPU-seconds per second. Kept in virtual work V (the service
    every active job has had since the pool started): a job of work w submitted at V0
    finishes when V reaches V0 + w, so each event costs O(log n). (``--cpu-model ps``.)"""

    def __init__(self, loop, capacity):
        self.loop, self.capacity = loop, capacity
        self.v = self.t = 0.0
        self._jobs = []
        self._seq = itertools.count()
        self._version = 0

    def _rate(self):
        n = len(self._jobs)
        return 1.0 if n == 0 else min(1.0, self.capacity / n)

    def _advance(self):
        now = self.loop.now
        if self._jobs:
            self.v += (now - self.t) * self._rate()
        self.t = now

    def submit(self, work, callback, thread=None):
        self._advance()
        heapq.heappush(self._jobs, (self.v + work, next(self._seq), callback))
        self._reschedule()

    def _reschedule(self):
        self._version += 1
        if self._jobs:
            dt = max(0.0, (self._jobs[0][0] - self.v) / self._rate())
            self.loop.at(self.t + dt, self._fire, self._version)

    def _fire(self, version):
        if version != self._version:
            return
        self._advance()
        done = []
        while self._jobs and self._jobs[0][0] <= self.v * (1 + 1e-12) + 1e-15:
            done.append(heapq.heappop(self._jobs)[2])
        self._reschedule()
        for cb in done:
            cb(self.loop.now)


class RoundRobinPool:
    """Round robin over ``cores`` cores, each available ``capacity / cores`` of the time
    (the rest goes to the background threads, spread over all cores): a job runs on
    a free core for at most one time slice (``quantum`` seconds of wall time), then
    goes to the back of the queue. Linux's EEVDF scheduler gives a runnable thread a
    base slice of 0.75 ms x (1 + log2 of the cores, at most 8): 1.5 ms on 2 cores, more
    than most of the model's CPU jobs (~1 ms), so they mostly run to completion in
    arrival order once they get a core. (``--cpu-model rr``.)"""

    def __init__(self, loop, capacity, cores, quantum):
        from collections import deque
        self.loop = loop
        self.servers = max(1, int(round(cores)))
        self.speed = min(1.0, capacity / self.servers)
        self.quantum = quantum
        self.queue = deque()
        self.running = 0

    def submit(self, work, callback, thread=None):
        self.queue.append([work, callback])
        self._dispatch()

    def _dispatch(self):
        while self.running < self.servers and self.queue:
            job = self.queue.popleft()
            self.running += 1
            wall = min(job[0] / self.speed, self.quantum)
            self.loop.at(self.loop.now + wall, self._slice_end, job, wall)

    def _slice_end(self, job, wall):
        self.running -= 1
        job[0] -= wall * self.speed
        if job[0] > 1e-12:
            self.queue.append(job)
            self._dispatch()
            return
        self._dispatch()
        job[1](self.loop.now)


class FairSharePool:
    """Linux's fair scheduling, simplified: ``cores`` cores, each available
    ``capacity / cores`` of the time (the rest goes to the background threads). Each
    thread (a rank's training loop, its engine) has a virtual runtime v, the CPU it
    has received. A free core runs the runnable thread with the least v for at most
    one time slice, then the thread goes back to the queue with its v increased; a
    thread that wakes up gets v = max(v, v_min - slice), so a sleeper gains at most one
    slice of credit over the threads that kept running (v_min: the least v among the
    runnable and running threads). So a rank that slept long (a straggler's compute)
    is served before ranks that have been using the CPU, as on the real machine; no
    preemption within a slice. (``--cpu-model fair``, the default.)"""

    def __init__(self, loop, capacity, cores, quantum):
        self.loop = loop
        self.servers = max(1, int(round(cores)))
        self.speed = min(1.0, capacity / self.servers)
        self.quantum = quantum
        self.v = {}          # thread -> virtual runtime (CPU seconds received)
        self.work = {}       # thread -> [[remaining, callback], ...] while runnable
        self.ready = []      # heap of (v, seq, thread)
        self.running = {}    # thread -> v when its slice started
        self.v_min = 0.0
        self._seq = itertools.count()

    def _update_v_min(self):
        cands = list(self.running.values())
        if self.ready:
            cands.append(self.ready[0][0])
        if cands:
            self.v_min = max(self.v_min, min(cands))

    def submit(self, work, callback, thread=None):
        from collections import deque
        if thread is None:
            thread = ("anon", next(self._seq))
        q = self.work.get(thread)
        if q is not None:          # runnable or running: more work for the same thread
            q.append([work, callback])
            return
        self.work[thread] = deque([[work, callback]])
        v = max(self.v.get(thread, 0.0), self.v_min - self.quantum)
        self.v[thread] = v
        heapq.heappush(self.ready, (v, next(self._seq), thread))
        self._dispatch()

    def _dispatch(self):
        while len(self.running) < self.servers and self.ready:
            v, _, thread = heapq.heappop(self.ready)
            job = self.work[thread][0]
            wall = min(job[0] / self.speed, self.quantum)
            self.running[thread] = v
            self.loop.at(self.loop.now + wall, self._slice_end, thread, wall)
        self._update_v_min()

    def _slice_end(self, thread, wall):
        del self.running[thread]
        done = wall * self.speed
        self.v[thread] += done
        q = self.work[thread]
        q[0][0] -= done
        finished = None
        if q[0][0] <= 1e-12:
            finished = q.popleft()[1]
        if q:
            heapq.heappush(self.ready, (self.v[thread], next(self._seq), thread))
        else:
            del self.work[thread]
        self._dispatch()
        if finished is not None:
            finished(self.loop.now)


def eevdf_slice(cores):
    """Linux EEVDF's default base slice on ``cores`` CPUs (kernel/sched/fair.c:
    sysctl_sched_base_slice 0.75 ms, scaled by 1 + ilog2(min(cores, 8)))."""
    return 0.75e-3 * (1 + int(math.log2(max(1, min(int(cores), 8)))))
