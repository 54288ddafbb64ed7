#!/usr/bin/env python
"""A discrete-event model of one training run: Horovod vs local SGD vs WAGMA, to 1,024 ranks.

What it models
--------------
P ranks each run the benchmark loop of bench/imbalance.py: per step a compute time
d[t, r] (the nominal schedule of bench/harness.py's ``compute_schedule``, same seeds:
the sleep that stands in for accelerator compute), then w_app seconds of host CPU
(forward/backward of the MLP on the CPU, the optimizer, the Python loop), then the
method's communication. Five methods (the first four are the measured ones):

* ``horovod``   ``hvd.DistributedOptimizer``: every step ends with a global ring
                allreduce that starts when the last rank arrives; nobody continues
                before it completes.
* ``localsgd``  local steps; every tau-th step a blocking global average (gloo ring
                allreduce) that starts when the last rank arrives.
* ``wagma``     WAGMA, blocking global rounds (the paper): round r = tau + t (after the
                tau warm-up rounds) is global when (r + 1) % tau == 0, a blocking
                average over all ranks; the other rounds are group rounds in phase
                k mod L (k = r - 1 - floor(r / tau)) of the product's own group schedule
                (horovod_wagma.common.schedule.groups). A group round starts when the
                *first* member calls it (the activator); the others join at once from
                their engine thread (a stale value), so it completes T_group after
                the activator's call. A member that calls later gets the result at
                once; one that calls while it is in flight waits for its completion.
* ``wagma_wa``  WAGMA with wait-avoiding global rounds (DESIGN.md section 3): global
                rounds too are activated by the first caller and joined passively.
                A lagging app skips the rounds its engine served while it computed
                (the engine's TakeAppRound, cpp_ops/engine/engine_rounds.cc): it takes
                the newest of the contiguous run of passively served rounds from its
                next round on (waiting for it if still in flight), or enters the round
                after that run when a peer waits for it there. Staleness bound: when a
                round is activated, a member whose app last entered round L_j with
                r - L_j > max_staleness (default tau) is not joined passively; the
                round waits for that member's app to enter it.
* ``dpsgd``     (not measured; for the comparison with the paper's decentralized
                baselines) synchronous D-PSGD on a ring: each step a rank averages with
                its two ring neighbours and waits for both of them.

Host CPU (shared cores)
-----------------------
Host CPU work is a job on one thread: w_app(method) per step on the rank's training
loop thread, and each member's share w of a round's reduction on its engine thread
(Horovod's: its background thread). C_eff = C - B of the host's C cores are left to
these jobs; B cores are taken by Horovod's background threads, which cycle every 1 ms
on every rank even when idle (calibrated from op_bench: an MPI allreduce slows from
T_mpi to T_mpi+hvd once they run, so B = C (1 - T_mpi / T_mpi+hvd)). How the cores
are shared (``--cpu-model``):

* ``fair`` (default): the kernel's fair scheduling, simplified. C cores, each
  available C_eff / C of the time; a free core runs the runnable thread with the least
  virtual runtime v (CPU received) for at most one time slice q, after which the
  thread requeues with v increased; a thread waking up gets v = max(v, v_min - q). So
  a rank that slept (a straggler computing) is served before ranks that kept using
  the CPU. q = Linux EEVDF's base slice, 0.75 ms x (1 + log2 C) = 1.5 ms on 2 cores.
* ``rr``: round robin with the same slice (arrival order, no fairness credit).
* ``ps``: processor sharing, each of n active jobs at rate min(1, C_eff / n).

On shared cores a CPU job's length is drawn from an exponential distribution with the
calibrated mean (seeded by ``--seed``; ``--cpu-jitter none``: exactly the mean). With
exact, identical lengths the model's ranks phase-lock (their sleeps line up with each
other's CPU use and stay so), which timer slack, cache misses and interrupts prevent
on a real host; the exponential adds no parameter. On dedicated cores (``datacenter``)
jobs take exactly their mean.

A round is a set of CPU jobs, one per member, started together; it completes when the
last one does. On ``this_machine`` all of a round's cost is such CPU work: on one host
every transfer is a memory copy done by the ranks' own threads. The work per member
is op_bench's measured time per round T(method, g, bytes), measured with P_b ranks
all in rounds on the same cores, de-contended: w = T * min(1, C_eff / P_b),
interpolated linearly in the message size and in log2 of the group size g (from the
op_bench file whose rank count is nearest to P). Waits (in MPI, in the engine, in
Horovod's synchronize) cost no CPU in the model.

Network (``multihost``, ``datacenter``)
---------------------------------------
Host h has one link to a switch with one-way latency l_h and rate b_h (both
directions). A message of m bytes from host a to host b takes l_a + l_b + s + m /
min(b_a, b_b), s being the per-message software latency (``multihost``: the measured
round trip minus the configured one, halved). Messages within a host: ``multihost``:
the same CPU work as this_machine; ``datacenter``: latency l_i, rate b_i (flags).
Per message sent each rank also pays an injection overhead o (``datacenter`` only).

* ring allreduce (Horovod, gloo) of n bytes over P ranks (rank order = host order):
  2 (P - 1) steps; in each every rank sends n / P bytes to the next. A step takes the
  slowest edge: latency + (n / P) * k_h / b_h, k_h the ring edges leaving host h (1
  when ranks are numbered by host). With one rank per host and uniform links the
  total is 2 (P - 1) * latency + 2 (P - 1) / P * n / b.
  Horovod adds its negotiation: half a cycle (1 ms) plus ceil(log2 P) message
  latencies (the coordination allreduce); on this_machine op_bench's hvd time holds it.
* WAGMA round over group G (the engine's algorithms, group_reduction.cc): n <= 64 KB,
  or |G| = 2 and n <= 8 MB: one direct exchange (every member sends n to every other);
  otherwise scatter-allgather, two exchanges of n / |G| chunks. An exchange takes the
  largest pair latency plus, per host link, the bytes crossing it / its rate, counting
  every group of the same phase (they run at about the same time, and a host's ranks
  are in different groups). A round activated by one member adds one activation
  message (activator -> members).

Timed windows (as bench/harness.py): lockstep methods run N steps (N rounded up to a
multiple of tau) from a common start; the window ends when the last rank finishes
step N; samples/s = P N B / window (B = 16). ``wagma_wa`` runs in a wall-time window of
the blocking ``wagma`` run's length; a step counts when it completes inside it.

Assumptions and what is left out: no convergence (mixing, staleness effects on
accuracy; group size and tau also change how fast models mix, which a throughput
model cannot weigh); sleeps are exact (the host's wake-up latency is not modelled
beyond the CPU queueing above); CPU jobs of waiting threads are free; network links
are full duplex with no congestion beyond the per-link byte counts; the engine's
wait for its own earlier in-flight rounds before a passive join is ignored.

Calibration (``Calibration``; each constant names the file and field it came from)
---------------------------------------------------------------------------------
* C: os.cpu_count() (``--cores`` overrides).
* B: bench/results/op_bench_P*.json, results[].methods.{mpi,mpi_hvd}.time_s at the
  largest message size, mean over the file's group sizes; a run at P ranks uses the
  file nearest in ranks (as for the round times).
* T(method, g, n): bench/results/op_bench_P*.json, results[].methods.<m>.time_s
  (wa: WAGMA group rounds and wait-avoiding global rounds; wagma at g = P: blocking
  global rounds; hvd at g = P: Horovod's allreduce; mpi_hvd at g = P: local SGD's gloo
  allreduce, which op_bench does not time).
* w_app(method): bench/results/imbalance_*_P*.json, runs.<method>[]
  .thread_cpu_ms_per_rank_step.main, the median over every file and trial: the CPU
  time of the training loop's thread per step (forward, backward, optimizer step,
  fusion-buffer packing, the op call). One constant per method, shared by every
  pattern and P. Horovod's loop polls while it waits in synchronize() (its main-thread
  CPU grows with the wait: 1.7 ms per step at P=16, 8.7 ms at P=8 under random
  delays), so Horovod and D-PSGD take local SGD's. These are the only inputs taken
  from the files that are validated against; samples/s and wall times never are.
* multihost links: bench/results/multihost_throughput.json, scenarios.*.hosts
  (slots, latency_ms, rate_mbit) and rtt_ms (the software latency s).
* datacenter: flags (``--latency-us`` 5 host to host, ``--bandwidth-gbit`` 100 per
  GPU with one NIC per GPU, ``--overhead-us`` 0.5 per message sent,
  ``--ranks-per-host`` 4; NVLink-class links within a host: 1 us, 400 Gbit/s) in the
  multihost model's cost functions; no CPU contention (cores per GPU), w_app as
  calibrated, Horovod's 1 ms cycle.

Run
---
    python bench/simulate.py --ranks 1024 [--network datacenter|multihost|this_machine]
        [--pattern random|persistent|straggler_host] [--step-time 0.010] [--delay 0.040]
        [--num-delayed 2 | --delayed-fraction F] [--slow-ranks 1|half]
        [--slow-factor 2] [--group-size S] [--sync-period 10] [--steps 200] [--seed 0]
        [--model-bytes N] [--latency-us 5] [--bandwidth-gbit 100] [--ranks-per-host 4]
        [--cpu-model fair|rr|ps] [--cpu-jitter exp|none]
    python bench/simulate.py --validate       # predicted vs measured, every result file
    python bench/simulate.py --sweep          # 8..1024 ranks -> simulate_sweep.{png,json}
    python bench/simulate.py --defaults       # S and tau at P=1024 -> simulate_defaults.*
"""
import argparse
import bisect
import dataclasses
import glob
import heapq
import itertools
import json
import math
import os
import re
import statistics
import sys
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import harness  # noqa: E402  (bench/harness.py: BATCH, compute_schedule, ideals)

BATCH = harness.BATCH
RESULTS_DIR = harness.RESULTS_DIR
MODEL_BYTES = ((128 + 1) * 512 + (512 + 1) * 10) * 4   # bench/imbalance.py's MLP
MEASURED = ("horovod", "localsgd", "wagma", "wagma_wa")
METHODS = MEASURED + ("dpsgd",)
LABELS = dict(harness.LABELS, dpsgd="D-PSGD (ring)", lockstep="sync every step")
HOROVOD_CYCLE_S = 1e-3          # Horovod >= 0.21's default HOROVOD_CYCLE_TIME
SMALL_BYTES = 64 * 1024         # cpp_ops/engine/group_reduction.h ReductionThresholds
PAIR_SCATTER_BYTES = 8 << 20
TOLERANCE = 0.15                # the validation target
MULTIHOST_SCENARIOS = ("slow_link", "slow_host")   # bench/multihost_throughput.py
CPU_MODELS = {"fair": "fair share by virtual runtime, kernel time slice",
              "rr": "round robin, kernel time slice", "ps": "processor sharing"}


class CalibrationError(RuntimeError):
    """A calibration file is missing or does not have the fields the model needs."""


# -- calibration ----------------------------------------------------------------------
@dataclasses.dataclass
class OpTable:
    """op_bench times per round: {ranks: {method: {g: [(bytes, seconds), ...]}}}."""
    table: Dict[int, Dict[str, Dict[int, List[tuple]]]]
    files: Dict[int, str]

    def ranks_for(self, P):
        """The op_bench rank count used for a simulated P: the nearest (ties: larger)."""
        return min(self.table, key=lambda q: (abs(math.log2(q) - math.log2(P)), -q))

    def time(self, method, g, nbytes, P):
        """Seconds of one round (the op_bench run's max over ranks, best block),
        linear in bytes and in log2(g) between measured points; beyond the measured
        range, extended from the nearest two points (never below the nearest one)."""
        q = self.ranks_for(P)
        by_g = self.table[q].get(method)
        if not by_g:
            raise CalibrationError(f"{self.files[q]}: no method {method!r}")
        gs = sorted(by_g)
        if g in by_g or len(gs) == 1:
            return _interp_bytes(by_g[g if g in by_g else gs[0]], nbytes)
        x = math.log2(g)
        i = bisect.bisect_left(gs, g)
        lo, hi = (gs[i - 1], gs[i]) if 0 < i < len(gs) else \
            (gs[0], gs[1]) if i == 0 else (gs[-2], gs[-1])
        ylo, yhi = _interp_bytes(by_g[lo], nbytes), _interp_bytes(by_g[hi], nbytes)
        y = ylo + (yhi - ylo) * (x - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
        nearest = ylo if abs(x - math.log2(lo)) < abs(x - math.log2(hi)) else yhi
        return y if 0 < i < len(gs) else max(y, nearest)


def _interp_bytes(points, nbytes):
    xs = [b for b, _ in points]
    ys = [t for _, t in points]
    if len(xs) == 1:
        return ys[0]
    if nbytes <= xs[0]:
        return ys[0]
    i = min(bisect.bisect_left(xs, nbytes), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return max(0.0, y0 + (y1 - y0) * (nbytes - x0) / (x1 - x0))


@dataclasses.dataclass
class Calibration:
    """The model's constants for this machine, each with where it came from."""
    cores: float                 # C
    background_cores: object     # B: Horovod's background threads, {op_bench ranks: cores}
                                 # (or one number for every P)
    app_cpu_s: Dict[str, float]  # w_app per method: training-loop CPU per step
    ops: OpTable                 # op_bench round times
    sources: Dict[str, str]      # constant -> "file: field (rule)"

    def background_for(self, P):
        """B for P ranks: from the op_bench file nearest in ranks (as the round times)."""
        B = self.background_cores
        return B[self.ops.ranks_for(P)] if isinstance(B, dict) else B

    def effective_cores(self, P):
        """C_eff = C - B: the cores left to training loops and engines at P ranks."""
        return max(self.cores - self.background_for(P), 0.1)

    # Which op_bench method stands for which of the model's rounds.
    OP_OF = {"group": "wa", "global_wa": "wa", "global_blocking": "wagma",
             "horovod": "hvd", "allreduce": "mpi_hvd", "pair": "wa"}

    def round_work(self, kind, g, nbytes, P):
        """CPU seconds each member spends in one round of ``kind`` over g ranks, with
        the op_bench run's contention removed: T * min(1, C_eff / P_bench)."""
        q = self.ops.ranks_for(P)
        t = self.ops.time(self.OP_OF[kind], g, nbytes, P)
        return t * min(1.0, self.effective_cores(q) / q)

    def describe(self):
        return [f"C = {self.cores:g} cores ({self.sources['cores']})",
                "B = cores taken by Horovod's background threads: " + ", ".join(
                    f"{self.background_for(q):.2f} at P={q} (C_eff {self.effective_cores(q):.2f})"
                    for q in sorted(self.ops.table))
                + f" ({self.sources['background_cores']})",
                "w_app (ms CPU per step) = " + ", ".join(
                    f"{m} {1e3 * v:.2f}" for m, v in self.app_cpu_s.items())
                + f" ({self.sources['app_cpu_s']})",
                f"round times: {self.sources['ops']}"]


def _load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CalibrationError(f"calibration file {path} is missing") from None
    except (OSError, ValueError) as e:
        raise CalibrationError(f"calibration file {path} is unreadable: {e}") from None


def read_op_bench(paths):
    """OpTable from op_bench JSON files (bench/op_bench.py --json)."""
    if not paths:
        raise CalibrationError(
            f"no op_bench results in {RESULTS_DIR}: run e.g. python bench/op_bench.py "
            "--np 8 --sizes 4K,256K,1M --group-sizes 2,4,8 --json "
            "bench/results/op_bench_P8.json")
    table, files = {}, {}
    for path in paths:
        d = _load_json(path)
        try:
            P = int(d["ranks"])
            rows = d["results"]
            by_method = {}
            for r in rows:
                g, nbytes = int(r["g"]), int(r["bytes"])
                for m, v in r["methods"].items():
                    by_method.setdefault(m, {}).setdefault(g, []).append(
                        (nbytes, float(v["time_s"])))
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(f"{path}: not an op_bench result (needs ranks, "
                                   f"results[].g/bytes/methods.*.time_s): {e!r}") from None
        if not by_method:
            raise CalibrationError(f"{path}: no results")
        for m in by_method.values():
            for pts in m.values():
                pts.sort()
        table[P], files[P] = by_method, os.path.relpath(path, ROOT)
    return OpTable(table, files)


def background_cores(ops, cores):
    """{op_bench ranks: B}, B = C (1 - T_mpi / T_mpi_hvd) at the file's largest
    message size, the mean over its group sizes."""
    out = {}
    for P, by_method in ops.table.items():
        vals = []
        for g, pts in by_method.get("mpi", {}).items():
            hv = dict(by_method.get("mpi_hvd", {}).get(g, []))
            nbytes, t_mpi = pts[-1]
            if nbytes in hv and hv[nbytes] > 0:
                vals.append(cores * max(0.0, 1.0 - t_mpi / hv[nbytes]))
        if not vals:
            raise CalibrationError(f"{ops.files[P]}: lacks the mpi and mpi_hvd columns "
                                   "needed for Horovod's background load")
        out[P] = statistics.mean(vals)
    return out


def measured_files(results_dir):
    return sorted(glob.glob(os.path.join(results_dir, "imbalance_*_P*.json")))


# The training loop's CPU per step is measured per method, except where the loop's
# thread polls while it waits: Horovod's synchronize() does (its main-thread CPU per
# step grows with the wait, 1.7 ms at P=16 to 8.7 ms at P=8 under random delays), so
# Horovod, and the unmeasured D-PSGD, take local SGD's loop cost (the same forward,
# backward and optimizer step; gloo's wait blocks).
APP_CPU_FROM = {"horovod": "localsgd", "localsgd": "localsgd", "wagma": "wagma",
                "wagma_wa": "wagma_wa", "dpsgd": "localsgd"}


def app_cpu_from_runs(paths):
    """{method: median over files and trials of the main thread's CPU s per rank-step
    of the method named in APP_CPU_FROM}, and the number of trials per source."""
    vals = {}
    for path in paths:
        d = _load_json(path)
        for m in set(APP_CPU_FROM.values()):
            for rec in d.get("runs", {}).get(m, []):
                try:
                    v = float(rec["thread_cpu_ms_per_rank_step"]["main"]) / 1e3
                except (KeyError, TypeError, ValueError):
                    raise CalibrationError(f"{path}: runs.{m}[] lacks "
                                           "thread_cpu_ms_per_rank_step.main") from None
                vals.setdefault(m, []).append(v)
    missing = sorted(set(APP_CPU_FROM.values()) - set(vals))
    if missing:
        raise CalibrationError(f"no imbalance result with a {'/'.join(missing)} run "
                               "(bench/results/imbalance_*_P*.json): run bench/imbalance.py")
    return ({m: statistics.median(vals[src]) for m, src in APP_CPU_FROM.items()},
            {m: len(v) for m, v in vals.items()})


def read_calibration(results_dir=RESULTS_DIR, cores=None):
    """The Calibration from the benchmarks' output files; CalibrationError with the
    file and what is wrong when one is missing or malformed."""
    cores = float(cores or os.cpu_count() or 1)
    op_paths = sorted(glob.glob(os.path.join(results_dir, "op_bench_P*.json")))
    ops = read_op_bench(op_paths)
    B = background_cores(ops, cores)
    imb = measured_files(results_dir)
    app, n = app_cpu_from_runs(imb)
    files = ", ".join(ops.files[q] for q in sorted(ops.files))
    return Calibration(
        cores=cores, background_cores=B, app_cpu_s=app, ops=ops,
        sources={"cores": "os.cpu_count()",
                 "background_cores": "each op_bench file: mean over g of C (1 - "
                                     "methods.mpi.time_s / methods.mpi_hvd.time_s) at "
                                     "the largest size; a run uses the file nearest "
                                     "in ranks",
                 "app_cpu_s": "median of runs.<m>[].thread_cpu_ms_per_rank_step.main over "
                              f"all {len(imb)} imbalance_*_P*.json files and their trials "
                              f"({', '.join(f'{m}: {k}' for m, k in sorted(n.items()))}); "
                              "horovod and dpsgd use localsgd's (Horovod's loop polls "
                              "while it waits)",
                 "ops": f"{files}: results[].methods.<wa|wagma|hvd|mpi_hvd>.time_s"})


# -- network --------------------------------------------------------------------------
@dataclasses.dataclass
class Network:
    """Hosts, their links, and how host CPU is shared.

    ``host_of[r]`` is rank r's host; ``latency_s[h]``/``rate_Bps[h]`` host h's link
    (one way, each direction). ``cpu``: "machine" (one pool of C_eff cores for every
    rank: this machine, and the emulated hosts that all run on it), "per_host" (a pool
    of C_eff cores per host) or "dedicated" (no contention). ``comm_cpu``: rounds cost
    op_bench-calibrated CPU work (this machine's memory copies); else only the
    network's time."""
    name: str
    host_of: List[int]
    latency_s: List[float]
    rate_Bps: List[float]
    software_s: float = 0.0          # per cross-host message
    intra_latency_s: float = 0.0     # within a host (when comm_cpu is False)
    intra_Bps: float = math.inf
    overhead_s: float = 0.0          # per message sent (injection)
    cpu: str = "machine"
    comm_cpu: bool = True
    app_cpu: bool = True             # charge w_app per step
    cycle_s: float = 0.0             # Horovod's negotiation cycle (0: inside op_bench)

    @property
    def P(self):
        return len(self.host_of)

    def hosts(self):
        return sorted(set(self.host_of))

    def msg_latency(self, a, b):
        """One-way latency of a message from host a to host b (no payload)."""
        if a == b:
            return self.intra_latency_s
        return self.latency_s[a] + self.latency_s[b] + self.software_s

    def max_latency(self, ranks):
        """The largest one-way latency between two of the ranks' hosts: the sum of the
        two largest link latencies (plus the software latency)."""
        hs = {self.host_of[r] for r in ranks}
        if len(hs) == 1:
            return self.intra_latency_s
        top = heapq.nlargest(2, (self.latency_s[h] for h in hs))
        return top[0] + top[1] + self.software_s

    @staticmethod
    def direct_exchange(g, nbytes):
        """The engine's choice (group_reduction.cc): one direct exchange for small
        tensors and pairs up to 8 MB, else scatter-allgather."""
        return nbytes <= SMALL_BYTES or (g == 2 and nbytes <= PAIR_SCATTER_BYTES)

    def link_loads(self, groups, nbytes):
        """{host: bytes through its link (each direction) in one exchange step} when
        every group in ``groups`` runs its round at the same time (the groups of one
        phase: a host's ranks are in different groups and share its link)."""
        load = {}
        for G in groups:
            g = len(G)
            if g < 2:
                continue
            chunk = nbytes if self.direct_exchange(g, nbytes) else nbytes / g
            count = {}
            for m in G:
                h = self.host_of[m]
                count[h] = count.get(h, 0) + 1
            if len(count) < 2:
                continue
            for h, c in count.items():
                load[h] = load.get(h, 0.0) + c * (g - c) * chunk
        return load

    def exchange_time(self, members, chunk, loads=None):
        """One step in which every member sends ``chunk`` bytes to every other: the
        largest pair latency plus the busiest of the members' host links (``loads``:
        bytes per link including concurrent groups; default: these members only)."""
        count = {}
        for m in members:
            h = self.host_of[m]
            count[h] = count.get(h, 0) + 1
        g = len(members)
        t = 0.0
        if len(count) > 1:
            if loads is None:
                loads = {h: c * (g - c) * chunk for h, c in count.items()}
            wire = max(loads.get(h, 0.0) / self.rate_Bps[h] for h in count)
            t = self.max_latency(members) + wire
        if any(c > 1 for c in count.values()) and not self.comm_cpu:
            intra = max(c for c in count.values())
            t = max(t, self.intra_latency_s + (intra - 1) * chunk / self.intra_Bps)
        return t + (g - 1) * self.overhead_s

    def round_time(self, members, nbytes, activator=None, concurrent=None):
        """Network seconds of one WAGMA round over ``members`` (the engine's
        algorithm), activated by ``activator`` (None: every member entered), while
        the groups in ``concurrent`` (the round's phase) run theirs too."""
        g = len(members)
        if g < 2:
            return 0.0
        act = 0.0
        if activator is not None:
            a = self.host_of[activator]
            others = {self.host_of[m] for m in members if m != activator}
            act = max(self.msg_latency(a, h) for h in others)
        loads = None if concurrent is None else self.link_loads(concurrent, nbytes)
        if self.direct_exchange(g, nbytes):
            return act + self.exchange_time(members, nbytes, loads)
        return act + 2 * self.exchange_time(members, nbytes / g, loads)

    def ring_allreduce_time(self, nbytes, P=None):
        """2 (P - 1) steps of n / P bytes to the next rank (ranks 0..P-1 in order)."""
        P = P or self.P
        if P < 2:
            return 0.0
        chunk = nbytes / P
        leaving = {}
        worst_lat, intra = 0.0, False
        for r in range(P):
            a, b = self.host_of[r], self.host_of[(r + 1) % P]
            if a != b:
                leaving[a] = leaving.get(a, 0) + 1
                worst_lat = max(worst_lat, self.msg_latency(a, b))
            else:
                intra = True
        step = 0.0
        if leaving:
            step = worst_lat + max(k * chunk / self.rate_Bps[h] for h, k in leaving.items())
        if intra and not self.comm_cpu:
            step = max(step, self.intra_latency_s + chunk / self.intra_Bps)
        return 2 * (P - 1) * (step + self.overhead_s)

    def negotiation_time(self, P=None):
        """Horovod's coordination before each allreduce: half a cycle plus a small
        allreduce of ceil(log2 P) message latencies."""
        P = P or self.P
        depth = math.ceil(math.log2(P)) if P > 1 else 0
        return 0.5 * self.cycle_s + depth * self.max_latency(range(P))


def this_machine(P):
    """One host: every cost is CPU work on this machine's cores."""
    return Network("this_machine", [0] * P, [0.0], [math.inf])


def hosts_network(name, P, slots, latency_s, rate_Bps, **kw):
    """Hosts of ``slots`` ranks each (the last may hold fewer), ranks numbered by host;
    ``latency_s``/``rate_Bps`` per host (a list) or for all (a number)."""
    nh = -(-P // slots)
    host_of = [r // slots for r in range(P)]
    lat = latency_s if isinstance(latency_s, list) else [latency_s] * nh
    rate = rate_Bps if isinstance(rate_Bps, list) else [rate_Bps] * nh
    return Network(name, host_of, lat[:nh], rate[:nh], **kw)


def multihost_from_scenario(scn, P=None, cpu="machine"):
    """The emulated cluster of a multihost_throughput.json scenario: host specs from
    ``hosts`` (one-way latency_ms, rate_mbit), software latency from ``rtt_ms``."""
    try:
        hosts = scn["hosts"]
        lat = [float(h["latency_ms"]) / 1e3 for h in hosts]
        rate = [float(h["rate_mbit"]) * 1e6 / 8 for h in hosts]
        slots = [int(h["slots"]) for h in hosts]
        rtt = scn.get("rtt_ms", {})
    except (KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"multihost scenario lacks hosts[].slots/latency_ms/"
                               f"rate_mbit: {e!r}") from None
    extra = []
    for key, ms in rtt.items():
        m = re.fullmatch(r"h(\d+)->h(\d+)", key)
        if m:
            a, b = int(m.group(1)) - 1, int(m.group(2)) - 1
            extra.append(max(0.0, float(ms) / 1e3 - 2 * (lat[a] + lat[b])) / 2)
    software = statistics.mean(extra) if extra else 0.0
    if P is None:
        host_of = [h for h, s in enumerate(slots) for _ in range(s)]
        return Network("multihost", host_of, lat, rate, software_s=software, cpu=cpu)
    # Scaled out: hosts like the first (fast) one.
    return hosts_network("multihost", P, slots[0], lat[0], rate[0], software_s=software,
                         cpu=cpu)


def datacenter(P, latency_us=5.0, bandwidth_gbit=100.0, ranks_per_host=4,
               intra_latency_us=1.0, intra_bandwidth_gbit=400.0, overhead_us=0.5,
               cycle_s=HOROVOD_CYCLE_S):
    """GPU-cluster-like: the multihost model's cost functions with its constants
    replaced: ``latency_us`` host to host (split over the two links),
    ``bandwidth_gbit`` per GPU (one NIC per GPU: a host's link carries
    ``ranks_per_host`` times that), NVLink-class links within a host, no CPU
    contention."""
    return hosts_network("datacenter", P, ranks_per_host, latency_us * 1e-6 / 2,
                         ranks_per_host * bandwidth_gbit * 1e9 / 8,
                         intra_latency_s=intra_latency_us * 1e-6,
                         intra_Bps=intra_bandwidth_gbit * 1e9 / 8,
                         overhead_s=overhead_us * 1e-6, cpu="dedicated", comm_cpu=False,
                         cycle_s=cycle_s)


# -- the event loop -------------------------------------------------------------------
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
    arrival order once they get a core. (``--cpu-model rr``, the default.)"""

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


# -- one simulated run ----------------------------------------------------------------
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


# -- the methods' timing models -------------------------------------------------------
class Barrier:
    """Helper: a collective over all ranks that starts when the last one arrives."""

    def __init__(self, run, kind, net_s):
        self.run, self.kind, self.net_s = run, kind, net_s
        self.arrived = {}

    def arrive(self, key, r):
        n = self.arrived.get(key, 0) + 1
        if n < self.run.P:
            self.arrived[key] = n
            return
        self.arrived.pop(key, None)
        ranks = range(self.run.P)
        self.run.collective(ranks, self.kind, self.net_s,
                            lambda t: [self.run.resume(x, t) for x in ranks])


class HorovodModel:
    """Gradient allreduce every step: starts when the last rank arrives, then
    negotiation + ring allreduce (network) and the allreduce's CPU work."""

    def __init__(self, run):
        net = run.net
        self.barrier = Barrier(run, "horovod", net.negotiation_time()
                               + net.ring_allreduce_time(run.nbytes))

    def call(self, r, i, t):
        self.barrier.arrive(i, r)

    def stats(self):
        return {}


class LocalSGDModel:
    """Local steps; timed step t averages globally (gloo ring allreduce, blocking)
    when t % tau == tau - 1 (PeriodicModelAverager after tau + 1 warm-up calls)."""

    def __init__(self, run):
        self.run = run
        self.barrier = Barrier(run, "allreduce", run.net.ring_allreduce_time(run.nbytes))

    def call(self, r, i, t):
        if i % self.run.tau == self.run.tau - 1:
            self.barrier.arrive(i, r)
        else:
            self.run.resume(r, t)

    def stats(self):
        return {}


def group_schedule(P, S):
    """The product's schedule (horovod_wagma.common.schedule.groups, the engine's own);
    without the built engine, a base-S butterfly with groups of at most S."""
    try:
        from horovod_wagma.common.schedule import groups
        return groups(P, S)
    except Exception:   # engine library not built: same partition rule for P = S**L
        phases, span = [], 1
        while span < P:
            phase = {}
            for r in range(P):
                key = (r // (span * S), r % span)
                phase.setdefault(key, []).append(r)
            phases.append([sorted(v) for _, v in sorted(phase.items())])
            span *= S
        return phases or [[list(range(P))]]


class _RoundState:
    __slots__ = ("members", "waiting", "done", "waiters", "calls")

    def __init__(self, members):
        self.members = members
        self.waiting = set()
        self.done = None
        self.waiters = []
        self.calls = 0


class WagmaModel:
    """WAGMA with blocking global rounds (the paper). Group rounds are activated by the
    first member to call them and complete without waiting for the others."""

    def __init__(self, run):
        self.run = run
        P, tau = run.P, run.tau
        self.phases = group_schedule(P, run.S)
        self.gid = [[0] * P for _ in self.phases]
        for p, phase in enumerate(self.phases):
            for j, members in enumerate(phase):
                for m in members:
                    self.gid[p][m] = j
        self.everyone = list(range(P))
        self.offset = tau   # rounds 0..tau-1 ran in the warm-up
        self.rounds = {}
        self._net_cache = {}
        self._phase_of = {id(members): p for p, phase in enumerate(self.phases)
                          for members in phase}
        self.barrier = Barrier(run, "global_blocking",
                               run.net.round_time(self.everyone, run.nbytes))
        self.n_activated = 0

    def is_global(self, rnd):
        tau = self.run.tau
        return rnd == 0 or (rnd + 1) % tau == 0

    def key(self, rnd, r):
        """(round, group id) of rank r's round rnd, and its members."""
        if self.is_global(rnd):
            return (rnd, -1), self.everyone
        k = rnd - 1 - rnd // self.run.tau
        p = k % len(self.phases)
        j = self.gid[p][r]
        return (rnd, j), self.phases[p][j]

    def net_time(self, members, activator):
        """Network seconds of a round over ``members`` (a list of the schedule, fixed
        for the run) activated by ``activator`` (None: all entered), with the other
        groups of its phase sharing the host links; cached."""
        host = None if activator is None else self.run.net.host_of[activator]
        k = (id(members), host)
        t = self._net_cache.get(k)
        if t is None:
            phase = self._phase_of.get(id(members))
            t = self._net_cache[k] = self.run.net.round_time(
                members, self.run.nbytes, activator,
                None if phase is None else self.phases[phase])
        return t

    def start_round(self, key, rs, kind, activator):
        net = self.net_time(rs.members, activator)

        def finished(t):
            rs.done = t
            for w in rs.waiters:
                self.run.resume(w, t)
            rs.waiters = []
            if rs.calls == len(rs.members):
                self.rounds.pop(key, None)
        self.run.collective(rs.members, kind, net, finished)

    def call(self, r, i, t):
        rnd = self.offset + i
        if self.is_global(rnd):
            self.barrier.arrive(rnd, r)
            return
        key, members = self.key(rnd, r)
        rs = self.rounds.get(key)
        if rs is None:
            rs = self.rounds[key] = _RoundState(members)
            self.n_activated += 1
            rs.waiters.append(r)
            self.start_round(key, rs, "group", r)
        elif rs.done is not None:
            self.run.resume(r, t)
        else:
            rs.waiters.append(r)
        rs.calls += 1
        if rs.calls == len(members) and rs.done is not None:
            del self.rounds[key]

    def stats(self):
        return {"group_rounds": self.n_activated}


class WagmaWaitAvoidingModel(WagmaModel):
    """WAGMA with wait-avoiding global rounds: every round is activated by its first
    caller; lagging apps skip served rounds; a too-stale member is waited for."""

    def __init__(self, run):
        super().__init__(run)
        P = run.P
        self.next_round = [self.offset] * P        # the app's next round
        self.last_round = [self.offset - 1] * P    # the round its app last entered
        self.served = [set() for _ in range(P)]    # joined passively, app not there yet
        self.pending = [set() for _ in range(P)]   # activated, waiting for this app
        self.done_at = {}
        self.skipped = 0
        self.stale_waits = 0
        self.steps_called = 0

    def call(self, r, i, t):
        self.steps_called += 1
        first = self.next_round[r]
        last_served = first - 1
        served = self.served[r]
        while last_served + 1 in served:
            last_served += 1
        enter = last_served < first or (last_served + 1) in self.pending[r]
        rnd = last_served + 1 if enter else last_served
        for x in range(first, rnd + 1):
            served.discard(x)
        self.skipped += rnd - first
        self.next_round[r], self.last_round[r] = rnd + 1, rnd
        key, members = self.key(rnd, r)
        if not enter:   # take the newest served round's result
            done = self.done_at.get(key)
            if done is not None:
                self.run.resume(r, t)
            else:
                self.rounds[key].waiters.append(r)
            return
        rs = self.rounds.get(key)
        if rs is None:   # activate it
            rs = self.rounds[key] = _RoundState(members)
            self.n_activated += 1
            for m in members:
                if m == r:
                    continue
                if rnd - self.last_round[m] > self.run.max_staleness:
                    rs.waiting.add(m)
                    self.pending[m].add(rnd)
                    self.stale_waits += 1
                else:
                    self.served[m].add(rnd)
            rs.waiters.append(r)
            if not rs.waiting:
                self._start(key, rs, r)
            return
        # A round that waited for this (too stale) member's app.
        self.pending[r].discard(rnd)
        rs.waiting.discard(r)
        rs.waiters.append(r)
        if not rs.waiting:
            self._start(key, rs, None)

    def _start(self, key, rs, activator):
        kind = "global_wa" if key[1] == -1 else "group"
        net = self.net_time(rs.members, activator)

        def finished(t):
            self.done_at[key] = t
            self.rounds.pop(key, None)
            for w in rs.waiters:
                self.run.resume(w, t)
        self.run.collective(rs.members, kind, net, finished)

    def stats(self):
        return {"rounds_skipped_per_step": self.skipped / max(1, self.steps_called),
                "stale_waits": self.stale_waits}


class DPSGDModel:
    """Synchronous D-PSGD on a ring (not measured here): each step a rank exchanges
    its model with ranks r - 1 and r + 1 and waits for both; the exchange is a group
    round of 3 over the network (direct exchange) plus its CPU work."""

    def __init__(self, run):
        self.run = run
        self.arrived = {}
        self.waiting = {}
        self._net = {}

    def neighbours(self, r):
        P = self.run.P
        return sorted({(r - 1) % P, r, (r + 1) % P})

    def call(self, r, i, t):
        self.arrived[(i, r)] = t
        self.waiting[(i, r)] = True
        for x in self.neighbours(r):
            self._try(i, x)

    def _try(self, i, r):
        if not self.waiting.get((i, r)):
            return
        nb = self.neighbours(r)
        if all((i, x) in self.arrived for x in nb):
            del self.waiting[(i, r)]
            net = self._net.get(r)
            if net is None:
                net = self._net[r] = self.run.net.exchange_time(nb, self.run.nbytes)
            work = (self.run.calib.round_work("pair", len(nb), self.run.nbytes, self.run.P)
                    if self.run.net.comm_cpu else 0.0)
            start = self.run.loop.now + net

            def go(r=r):
                self.run.cpu(r, work, lambda t: self.run.resume(r, t), "engine")
            self.run.loop.at(start, go)
            # Forget step i - 2 arrivals once both neighbours are past them.
            self.arrived.pop((i - 2, r), None)

    def stats(self):
        return {}


METHOD_CLASSES = {"horovod": HorovodModel, "localsgd": LocalSGDModel,
                  "wagma": WagmaModel, "wagma_wa": WagmaWaitAvoidingModel,
                  "dpsgd": DPSGDModel}


# -- scenarios ------------------------------------------------------------------------
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


def group_size_for(P, S=None):
    if S:
        return S
    try:
        from horovod_wagma.common.schedule import default_group_size
        return default_group_size(P)
    except Exception:
        s = 2
        while s * s < P:
            s *= 2
        return s


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


def ratio_line(res):
    r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
    parts = []
    for m in ("wagma", "wagma_wa"):
        if m in r and r.get("horovod"):
            parts.append(f"{LABELS[m]}/Horovod {r[m] / r['horovod']:.2f}x")
    return ", ".join(parts)


# -- validation -----------------------------------------------------------------------
def scenario_from_result(d, source):
    """A Scenario with the pattern and knobs a measured result file recorded."""
    try:
        return Scenario(pattern=d["pattern"], step_time=float(d["step_time_s"]),
                        delay=float(d["delay_s"]), num_delayed=int(d["num_delayed"]),
                        slow_ranks=str(int(d["slow_ranks"])),
                        slow_factor=float(d["slow_factor"]), seed=int(d.get("seed", 0)),
                        group_size=int(d["group_size"]), sync_period=int(d["sync_period"]),
                        steps=int(d["steps"]))
    except (KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"{source}: result lacks a pattern field: {e!r}") from None


def measured_stats(d, method):
    recs = d.get("runs", {}).get(method, [])
    if not recs:
        return None
    vals = [float(r["samples_per_s"]) for r in recs]
    return {"median": harness.median_trial(recs)["samples_per_s"], "min": min(vals),
            "max": max(vals), "trials": len(vals)}


def validation_cases(results_dir):
    """(label, result dict, network) for every measured file; multihost scenarios from
    multihost_throughput.json when it exists, else a placeholder row per scenario."""
    cases = []
    for path in measured_files(results_dir):
        d = _load_json(path)
        P = int(d["ranks"])
        name = os.path.basename(path)[len("imbalance_"):-len(".json")]
        cases.append((f"this machine {name}", d, this_machine(P), path))
    mh = os.path.join(results_dir, "multihost_throughput.json")
    if os.path.exists(mh):
        d = _load_json(mh)
        scenarios = d.get("scenarios", {})
        for name in sorted(set(scenarios) | set(MULTIHOST_SCENARIOS)):
            scn = scenarios.get(name, {})
            res = scn.get("result")
            if res is None:
                cases.append((f"multihost {name}", None, None, mh))
                continue
            net = multihost_from_scenario(scn)
            if net.P != int(res["ranks"]):
                raise CalibrationError(f"{mh}: scenario {name} has {net.P} slots for "
                                       f"{res['ranks']} ranks")
            cases.append((f"multihost {name}", res, net, mh))
    else:
        for name in MULTIHOST_SCENARIOS:
            cases.append((f"multihost {name}", None, None, mh))
    return cases


def validate(calib, results_dir=RESULTS_DIR, out=print, cpu_model="fair", cpu_jitter="exp"):
    """Predicted vs measured for every measured file and method; returns the rows."""
    rows = []
    for label, d, net, path in validation_cases(results_dir):
        if d is None:
            rows.append({"case": label, "method": "all", "status": "not measured yet",
                         "file": os.path.relpath(path, ROOT)})
            continue
        scn = scenario_from_result(d, path)
        methods = [m for m in MEASURED if d.get("runs", {}).get(m)]
        pred = simulate(scn, net, calib, methods, cpu_model, cpu_jitter)
        for m in methods:
            meas = measured_stats(d, m)
            p = pred["methods"][m]["samples_per_s"]
            err = (p - meas["median"]) / meas["median"]
            rows.append({"case": label, "method": m, "measured": meas["median"],
                         "measured_min": meas["min"], "measured_max": meas["max"],
                         "trials": meas["trials"], "predicted": p, "error": err,
                         "within": abs(err) <= TOLERANCE,
                         "file": os.path.relpath(path, ROOT)})
    print_validation(rows, calib, out, f"{CPU_MODELS[cpu_model]}; CPU job lengths: "
                     + ("exponential" if cpu_jitter == "exp" else "exact"))
    return rows


def print_validation(rows, calib, out=print, host_model=""):
    out(f"Calibration (host CPU: {host_model}):")
    for line in calib.describe():
        out("  " + line)
    out("\nPredicted vs measured samples/s (measured: median trial, [min-max] over "
        f"trials); '!!' marks |error| > {TOLERANCE:.0%}")
    head = (f"  {'case':<34} {'method':<16} {'measured':>8} {'range':>13} {'predicted':>9} "
            f"{'error':>7}")
    out(head)
    out("  " + "-" * (len(head) - 2))
    for r in rows:
        if "status" in r:
            out(f"  {r['case']:<34} {'(all)':<16} {r['status']} (not in {r['file']})")
            continue
        rng = f"{r['measured_min']:.0f}-{r['measured_max']:.0f}" if r["trials"] > 1 else "1 trial"
        mark = "" if r["within"] else "  !!"
        out(f"  {r['case']:<34} {LABELS[r['method']]:<16} {r['measured']:8.0f} {rng:>13} "
            f"{r['predicted']:9.0f} {100 * r['error']:+6.1f}%{mark}")
    done = [r for r in rows if "error" in r]
    if done:
        within = sum(r["within"] for r in done)
        mae = statistics.mean(abs(r["error"]) for r in done)
        out(f"\n  {within}/{len(done)} rows within {TOLERANCE:.0%}; mean |error| "
            f"{100 * mae:.1f}%")


# -- sweeps ---------------------------------------------------------------------------
def network_for(args, P):
    if args.network == "this_machine":
        return this_machine(P)
    if args.network == "multihost":
        path = os.path.join(args.results_dir, "multihost_throughput.json")
        if os.path.exists(path):
            d = _load_json(path)
            scn = d.get("scenarios", {}).get("slow_host") or next(iter(d["scenarios"].values()))
            return multihost_from_scenario(scn, P, cpu="per_host")
        # The cluster multihost_throughput.py builds (fast links), not yet measured.
        return hosts_network("multihost", P, 2, 1e-3, 1000e6 / 8, cpu="per_host")
    return datacenter(P, args.latency_us, args.bandwidth_gbit, args.ranks_per_host,
                      overhead_us=args.overhead_us)


def scenario_for(args, P, **over):
    nd = args.num_delayed
    if args.delayed_fraction is not None:
        nd = max(1, round(args.delayed_fraction * P))
    kw = dict(pattern=args.pattern, step_time=args.step_time, delay=args.delay,
              num_delayed=nd, slow_ranks=args.slow_ranks, slow_factor=args.slow_factor,
              seed=args.seed, group_size=args.group_size, sync_period=args.sync_period,
              steps=args.steps, max_staleness=args.max_staleness, nbytes=args.model_bytes)
    kw.update(over)
    return Scenario(**kw)


def print_prediction(res, scn, calib, elapsed):
    P = res["P"]
    out = [f"Predicted throughput, {res['network']} network, P={P}, S={res['S']}, "
           f"tau={res['tau']}, pattern {scn.pattern} ({pattern_text(scn, P)}), model "
           f"{scn.nbytes / 1024:.0f} KB, {res['steps']} steps ({elapsed:.1f} s to simulate)"]
    hv = res["methods"].get("horovod", {}).get("samples_per_s")
    for m, v in res["methods"].items():
        extra = ""
        if m == "wagma_wa":
            extra = (f"  (rounds skipped/step {v['rounds_skipped_per_step']:.2f}, "
                     f"staleness waits {v['stale_waits']})")
        out.append(f"  {LABELS[m]:<22} {v['samples_per_s']:12.0f} samples/s"
                   + (f"  {v['samples_per_s'] / hv:5.2f}x Horovod" if hv else "") + extra)
    for k in ("no_wait", "ideal", "lockstep"):
        out.append(f"  {LABELS.get(k, k):<22} {res['ideals'][k]:12.0f} samples/s  (ideal, "
                   "no communication)")
    line = ratio_line(res)
    if line:
        out.append("  " + line)
    print("\n".join(out))


def pattern_text(scn, P):
    if scn.pattern == "random":
        return (f"{1e3 * scn.step_time:g} ms + {1e3 * scn.delay:g} ms on {scn.num_delayed} "
                f"ranks/step, seed {scn.seed}")
    if scn.pattern == "straggler_host":
        return f"host 0's ranks {scn.slow_factor:g}x the {1e3 * scn.step_time:g} ms step"
    return f"{scn.slow_ranks} rank(s) {scn.slow_factor:g}x the {1e3 * scn.step_time:g} ms step"


SWEEP_RANKS = [8, 16, 32, 64, 128, 256, 512, 1024]


def sweep(args, calib):
    t0 = time.time()
    points = []
    for P in SWEEP_RANKS:
        net = network_for(args, P)
        scn = scenario_for(args, P)
        res = simulate(scn, net, calib, METHODS, args.cpu_model, args.cpu_jitter)
        points.append({"P": P, "S": res["S"], "num_delayed": scn.num_delayed,
                       "ideals": res["ideals"],
                       "samples_per_s": {m: v["samples_per_s"]
                                         for m, v in res["methods"].items()}})
        r = points[-1]["samples_per_s"]
        print(f"  P={P:5d} S={res['S']:3d}: " + "  ".join(
            f"{m} {r[m]:.0f}" for m in METHODS)
            + f"  | WAGMA/Hvd {r['wagma'] / r['horovod']:.2f}x, wa/Hvd "
              f"{r['wagma_wa'] / r['horovod']:.2f}x; over the best of local SGD and "
              f"D-PSGD: WAGMA {r['wagma'] / max(r['localsgd'], r['dpsgd']):.2f}x, wa "
              f"{r['wagma_wa'] / max(r['localsgd'], r['dpsgd']):.2f}x", flush=True)
    meta = sweep_meta(args)
    stem = os.path.join(args.results_dir,
                        "simulate_sweep" + (f"_{args.tag}" if args.tag else ""))
    with open(stem + ".json", "w") as f:
        json.dump(dict(meta, points=points), f, indent=1)
    plot_sweep(points, meta, stem + ".png")
    print(f"  wrote {os.path.relpath(stem, ROOT)}.json and .png ({time.time() - t0:.0f} s)")
    return points


def sweep_meta(args):
    return {"command": "python bench/simulate.py " + " ".join(sys.argv[1:]),
            "network": args.network, "pattern": args.pattern,
            "step_time": args.step_time, "delay": args.delay,
            "num_delayed": args.num_delayed, "delayed_fraction": args.delayed_fraction,
            "slow_ranks": args.slow_ranks, "slow_factor": args.slow_factor,
            "sync_period": args.sync_period, "steps": args.steps,
            "model_bytes": args.model_bytes, "latency_us": args.latency_us,
            "bandwidth_gbit": args.bandwidth_gbit, "ranks_per_host": args.ranks_per_host,
            "overhead_us": args.overhead_us, "cpu_model": args.cpu_model,
            "cpu_jitter": args.cpu_jitter,
            "group_size": args.group_size, "seed": args.seed}


def plot_sweep(points, meta, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    Ps = [p["P"] for p in points]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for m in METHODS:
        a1.plot(Ps, [p["samples_per_s"][m] for p in points], marker="o",
                label=LABELS[m], color=harness.COLORS.get(m, "tab:purple"))
    a1.plot(Ps, [p["ideals"]["no_wait"] for p in points], "k--", label="no-wait ideal")
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    a1.set_xlabel("ranks P")
    a1.set_ylabel("samples/s (sum over ranks)")
    a1.legend(fontsize=8)
    for m, style in (("wagma", "-"), ("wagma_wa", "-")):
        a2.plot(Ps, [p["samples_per_s"][m] / p["samples_per_s"]["horovod"] for p in points],
                style, marker="o", color=harness.COLORS[m], label=f"{LABELS[m]} / Horovod")
    for m in ("wagma", "wagma_wa"):
        a2.plot(Ps, [p["samples_per_s"][m] / max(p["samples_per_s"]["localsgd"],
                                                 p["samples_per_s"]["dpsgd"])
                     for p in points], "--", marker="s", color=harness.COLORS[m],
                label=f"{LABELS[m]} / best of local SGD, D-PSGD")
    a2.axhline(2.1, color="tab:red", linestyle=":", label="paper: 2.1x at 1,024 GPUs (RL)")
    a2.set_xscale("log", base=2)
    a2.set_xlabel("ranks P")
    a2.set_ylabel("throughput ratio")
    a2.legend(fontsize=8)
    fig.suptitle(f"simulated, {meta['network']} network, pattern {meta['pattern']}, "
                 f"tau={meta['sync_period']}, model {meta['model_bytes'] / 1024:.0f} KB",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


DEFAULT_GROUP_SIZES = [2, 4, 8, 16, 32, 64]
DEFAULT_SYNC_PERIODS = [1, 2, 5, 10, 20, 32, 64]


def defaults_sweep(args, calib, P=1024):
    """Group size 2..64 (tau fixed) and sync period 1..64 (S default) at P ranks."""
    t0 = time.time()
    net = network_for(args, P)
    S0 = group_size_for(P)
    out = {"P": P, "default_group_size": S0, "default_sync_period": 10,
           "meta": sweep_meta(args), "group_size": [], "sync_period": []}
    hv = simulate(scenario_for(args, P), net, calib, ("horovod",), args.cpu_model,
                  args.cpu_jitter)
    out["horovod"] = hv["methods"]["horovod"]["samples_per_s"]   # does not depend on S
    for S in DEFAULT_GROUP_SIZES:
        res = simulate(scenario_for(args, P, group_size=S), net, calib,
                       ("wagma", "wagma_wa"), args.cpu_model, args.cpu_jitter)
        r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
        out["group_size"].append({"S": S, "phases": len(group_schedule(P, S)),
                                  "samples_per_s": r})
        print(f"  S={S:3d} ({len(group_schedule(P, S))} phases): WAGMA {r['wagma']:.0f}, "
              f"WAGMA wa {r['wagma_wa']:.0f} samples/s", flush=True)
    for tau in DEFAULT_SYNC_PERIODS:
        res = simulate(scenario_for(args, P, sync_period=tau), net, calib,
                       ("localsgd", "wagma", "wagma_wa"), args.cpu_model, args.cpu_jitter)
        r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
        out["sync_period"].append({"tau": tau, "samples_per_s": r,
                                   "ideal": res["ideals"]["ideal"]})
        print(f"  tau={tau:3d}: local SGD {r['localsgd']:.0f}, WAGMA {r['wagma']:.0f}, "
              f"WAGMA wa {r['wagma_wa']:.0f} samples/s", flush=True)
    at_default = next(x for x in out["group_size"] if x["S"] == S0)["samples_per_s"]
    at_tau = next(x for x in out["sync_period"] if x["tau"] == 10)["samples_per_s"]
    out["finding"] = {}
    for m in ("wagma", "wagma_wa"):
        best = max(out["group_size"], key=lambda x: x["samples_per_s"][m])
        out["finding"][m] = {
            "best_S": best["S"], "default_S": S0,
            "default_S_over_best_S": at_default[m] / best["samples_per_s"][m],
            "worst_S": min(out["group_size"], key=lambda x: x["samples_per_s"][m])["S"],
            "default_tau_over_best_tau": at_tau[m] / max(x["samples_per_s"][m]
                                                         for x in out["sync_period"])}
    stem = os.path.join(args.results_dir,
                        "simulate_defaults" + (f"_{args.tag}" if args.tag else ""))
    with open(stem + ".json", "w") as f:
        json.dump(out, f, indent=1)
    plot_defaults(out, stem + ".png")
    for m, f in out["finding"].items():
        print(f"  {LABELS[m]}: best S {f['best_S']}, the default S={S0} reaches "
              f"{f['default_S_over_best_S']:.3f}x of it (worst: S={f['worst_S']}); "
              f"tau=10 reaches {f['default_tau_over_best_tau']:.3f}x of the best tau")
    print(f"  wrote {os.path.relpath(stem, ROOT)}.json and .png ({time.time() - t0:.0f} s)")
    return out


def plot_defaults(d, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    gs = [x["S"] for x in d["group_size"]]
    for m in ("wagma", "wagma_wa"):
        a1.plot(gs, [x["samples_per_s"][m] for x in d["group_size"]], marker="o",
                color=harness.COLORS[m], label=LABELS[m])
    a1.axhline(d["horovod"], color=harness.COLORS["horovod"], label="Horovod")
    a1.axvline(d["default_group_size"], color="k", linestyle=":", label="default S")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("group size S")
    a1.set_ylabel("samples/s")
    a1.legend(fontsize=8)
    ts = [x["tau"] for x in d["sync_period"]]
    for m in ("localsgd", "wagma", "wagma_wa"):
        a2.plot(ts, [x["samples_per_s"][m] for x in d["sync_period"]], marker="o",
                color=harness.COLORS[m], label=LABELS[m])
    a2.plot(ts, [x["ideal"] for x in d["sync_period"]], "k--", label="ideal (global rounds)")
    a2.axvline(d["default_sync_period"], color="k", linestyle=":", label="default tau")
    a2.set_xscale("log", base=2)
    a2.set_xlabel("sync period tau")
    a2.legend(fontsize=8)
    fig.suptitle(f"simulated at P={d['P']}, {d['meta']['network']} network, pattern "
                 f"{d['meta']['pattern']} (throughput only: mixing is not modelled)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = p.add_mutually_exclusive_group()
    what.add_argument("--ranks", type=int, help="predict P ranks (default 1024)")
    what.add_argument("--validate", action="store_true",
                      help="predicted vs measured for every result file")
    what.add_argument("--sweep", action="store_true",
                      help="ranks 8..1024 -> bench/results/simulate_sweep.{png,json}")
    what.add_argument("--defaults", action="store_true",
                      help="S 2..64 and tau 1..64 at P=1024 -> simulate_defaults.*")
    p.add_argument("--network", choices=("this_machine", "multihost", "datacenter"),
                   default="datacenter", help="default datacenter")
    p.add_argument("--pattern", choices=("random", "persistent", "straggler_host"),
                   default="random")
    p.add_argument("--step-time", type=float, default=0.010)
    p.add_argument("--delay", type=float, default=0.040)
    p.add_argument("--num-delayed", type=int, default=2)
    p.add_argument("--delayed-fraction", type=float, default=None,
                   help="random: delay this fraction of the ranks per step (overrides "
                        "--num-delayed; 0.25 = the measured P=8 case's 2 of 8)")
    p.add_argument("--slow-ranks", default="1")
    p.add_argument("--slow-factor", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--group-size", type=int, default=None,
                   help="default: the library's (smallest power of 2 >= sqrt(P))")
    p.add_argument("--sync-period", type=int, default=10)
    p.add_argument("--max-staleness", type=int, default=None, help="default: tau")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--model-bytes", type=int, default=MODEL_BYTES,
                   help=f"bytes averaged per step (default {MODEL_BYTES}: the benchmark MLP)")
    p.add_argument("--latency-us", type=float, default=5.0,
                   help="datacenter: host-to-host message latency (default 5 us)")
    p.add_argument("--bandwidth-gbit", type=float, default=100.0,
                   help="datacenter: network bandwidth per GPU, one NIC each (default "
                        "100 Gbit/s)")
    p.add_argument("--overhead-us", type=float, default=0.5,
                   help="datacenter: per-message injection overhead (default 0.5 us)")
    p.add_argument("--ranks-per-host", type=int, default=4,
                   help="datacenter: ranks (GPUs) per host (default 4)")
    p.add_argument("--cores", type=float, default=None,
                   help="host cores (default os.cpu_count())")
    p.add_argument("--cpu-model", choices=tuple(CPU_MODELS), default="fair",
                   help="host CPU sharing: fair = least virtual runtime first, with the "
                        "kernel's time slice (default); rr = round robin; ps = processor "
                        "sharing")
    p.add_argument("--cpu-jitter", choices=("exp", "none"), default="exp",
                   help="CPU job lengths: exponential around the calibrated mean "
                        "(default) or exact")
    p.add_argument("--results-dir", default=RESULTS_DIR)
    p.add_argument("--tag", default="",
                   help="--sweep/--defaults: suffix of the output files (simulate_sweep_TAG.*)")
    args = p.parse_args(argv)
    if not (args.validate or args.sweep or args.defaults) and args.ranks is None:
        args.ranks = 1024
    if args.pattern == "straggler_host" and args.network == "this_machine":
        p.error("straggler_host needs hosts: --network multihost or datacenter")
    if args.sync_period < 1 or args.steps < 1 or args.step_time <= 0:
        p.error("need --sync-period >= 1, --steps >= 1, --step-time > 0")
    if args.slow_ranks != "half" and not args.slow_ranks.isdigit():
        p.error("--slow-ranks takes a number or 'half'")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        calib = read_calibration(args.results_dir, args.cores)
    except CalibrationError as e:
        raise SystemExit(f"simulate: {e}")
    if args.validate:
        validate(calib, args.results_dir, cpu_model=args.cpu_model,
                 cpu_jitter=args.cpu_jitter)
        return
    if args.sweep:
        sweep(args, calib)
        return
    if args.defaults:
        defaults_sweep(args, calib)
        return
    t0 = time.time()
    net = network_for(args, args.ranks)
    scn = scenario_for(args, args.ranks)
    res = simulate(scn, net, calib, METHODS, args.cpu_model, args.cpu_jitter)
    print_prediction(res, scn, calib, time.time() - t0)


if __name__ == "__main__":
    main()
