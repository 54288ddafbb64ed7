"""The shared harness of the imbalance benchmarks: bench/imbalance.py (PyTorch) and
bench/keras_imbalance.py (Keras) hold only their framework's part (model, data, how a
method is built and stepped); everything else is here and documented here.

Patterns (``--pattern``); a sleep stands in for accelerator compute (DESIGN.md §6)
---------------------------------------------------------------------------------
* ``random`` (the paper's): every step takes ``--step-time`` (10 ms) on every rank,
  and ``--num-delayed`` ranks (2), drawn at every step by a seeded RNG that every rank
  shares, sleep ``--delay`` (40 ms) more. The delay comes before the forward pass.
* ``persistent``: fixed slow ranks. Ranks 0..K-1 (K = ``--slow-ranks``, default 1;
  ``half`` = P/2) always take ``--slow-factor`` F (2.0) times ``--step-time``; the
  others take ``--step-time``. ``--delay``, ``--num-delayed`` and ``--seed`` do not
  apply. The issue's two cases: one rank 2x slower (``--slow-ranks 1
  --slow-factor 2``) and half the ranks 1.5x slower (``--slow-ranks half
  --slow-factor 1.5``).

The schedule is a table (step, rank) -> nominal seconds; step t of every method uses
row t (warm-up steps use rows of a second table, drawn with seed + 1).

Figure of merit: samples/s summed over ranks
--------------------------------------------
Every rank processes B = 16 samples per step. samples/s = (sum over ranks of the
steps each completed in the timed window) x B / window seconds. Two kinds of window:

* lockstep methods (``horovod``, ``localsgd``, ``wagma``, ``wagma_sync``) keep every
  rank at the same step count. After its warm-up, a method runs an MPI barrier,
  ``--steps`` N timed steps (rounded up to a multiple of tau) and a barrier; rank 0's
  wall time between the barriers is the window, and samples/s = P x N x B / window.
  The warm-up (tau steps; tau + 1 for PeriodicModelAverager, which averages at calls
  0, tau, 2tau, ...) makes the last warm-up step and the last timed step synchronising
  steps of the method, so timed step t synchronises when t % tau == tau - 1.
* ``wagma_wa`` (wait-avoiding global rounds) lets fast ranks run ahead, so ranks
  complete different numbers of steps: it runs in a wall-time window instead. After
  the warm-up and a barrier, every rank steps until a deadline W seconds after it left
  the barrier and counts the steps it completed by the deadline (the step under way
  at the deadline is finished but not counted); then it calls the optimizer's
  ``join()``, so that no rank waits forever for one that has stopped, and a barrier.
  The join is outside the window. samples/s = (sum of the counted steps) x B / W.
* ``wagma_loop`` (the optimizer's defaults in a user's loop) keeps every rank at the
  same step count like a lockstep method, but through Horovod: ``hvd.barrier()``
  after the warm-up, N steps, then ``hvd.allreduce`` of each rank's rate; rank 0's
  wall time from the barrier to that allreduce's return is the window. Before the
  staleness bound left stale values out, this loop could deadlock (a rank in the
  allreduce, a slower one's round waiting for that rank's app).
  **The rule for W:** ``--window`` seconds when given; otherwise the wall time that
  the blocking ``wagma`` method took for its N steps in the same trial (so
  ``wagma_wa`` without ``--window`` needs ``wagma`` in ``--methods``; methods run in
  the fixed order of the framework's method list, where ``wagma`` precedes
  ``wagma_wa``). The per-rank step counts go to the JSON (``steps_per_rank``).

Ideals (computed from the nominal schedule, not run; zero communication cost)
-----------------------------------------------------------------------------
* ``no_wait``: every rank at its own pace, never waiting: the sum over ranks of
  B / (that rank's mean nominal step time over the N timed steps).
* ``ideal``: waiting only at global rounds, every tau steps (the bound of blocking
  WAGMA and local SGD; the random pattern's ideal in the paper's sense): all
  ranks wait for the one with the most compute since the previous global round, so
  the time is the sum over blocks of tau steps of the largest per-rank block compute;
  as samples/s, P x N x B / that time. Under the persistent pattern it equals the
  slowest rank's pace, the bound of every lockstep method (the plot shows it for the
  random pattern only).
* ``lockstep``: a synchronisation at every step (printed with the ideals).

Measured variants: ``ideal(meas)`` recomputes ``ideal`` from the blocking ``wagma``
run's measured per-step work (every phase of a step but the last, the optimizer
step), ``no_wait(meas)`` recomputes ``no_wait`` from ``wagma_wa``'s measured work;
sleeps overshoot on an oversubscribed host, so these are the fairer bars.

Targets (from the issue): persistent pattern with one rank 2x slower:
``wagma_wa >= 1.6x horovod``; random pattern: ``wagma_wa >= 0.8x no_wait`` (and the
earlier ``wagma >= 0.9x ideal``). Each is printed as "met" or "MISSED"; the persistent
pattern in other configurations (e.g. half the ranks 1.5x slower) has no target.

Diagnostics per method: mean time per step in each of the framework's phases (the
last one, the optimizer step with averaging and any waiting, also on steps between
synchronisations and on synchronising steps); CPU time per rank and step, overall and
per thread (training loop / WAGMA engine thread / other: Horovod's background thread,
MPI, gloo, TensorFlow's pools), and all ranks' CPU as a share of the host's cores
("host CPU bound": cores / CPU per rank-step x B, the samples/s at which a WAGMA
method's own CPU use would saturate the host; at P=16 on 2 cores it binds); for
WAGMA methods the engine counters during the window summed over ranks, and the
per-stream statistics of the streams active in the window (``hvd.stats()``; counters
as differences over the window, ``*_mean``/``*_max`` as of the window's end), per
rank in the JSON. With ``--trials`` > 1 the methods are interleaved trial by trial; the
table shows each method's median trial (by samples/s), followed by the range over the
trials and the per-trial ratios to Horovod; all trials are in the JSON.

Outputs (rank 0): the table, then bench/results/<name>_<pattern>_P{P}.json and a PNG
bar chart of samples/s per method, the ideals as hatched bars and the targets as
dashed lines (``--json``/``--plot`` override the paths).
"""
import argparse
import json
import math
import os
import time

from mpi_launch import relaunch_under_mpirun
from thread_cpu import thread_cpu_seconds

BATCH = 16   # samples per rank and step, both frameworks
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
WALL_METHODS = ("wagma_wa",)   # measured in a wall-time window
# Measured in a user's loop: a Horovod barrier after the warm-up, the same N steps on
# every rank, then a Horovod allreduce of each rank's rate (Window's `horovod`).
HOROVOD_LOOP_METHODS = ("wagma_loop",)
LABELS = {"horovod": "Horovod", "localsgd": "local SGD", "wagma": "WAGMA",
          "wagma_wa": "WAGMA wa-global", "wagma_sync": "WAGMA sync",
          "wagma_loop": "WAGMA defaults, loop",
          "no_wait": "no-wait ideal", "ideal": "ideal (global rounds)",
          "ideal_measured": "ideal(meas)", "no_wait_measured": "no_wait(meas)"}
COLORS = {"horovod": "tab:gray", "localsgd": "tab:orange", "wagma": "tab:blue",
          "wagma_wa": "tab:green", "wagma_sync": "tab:cyan", "wagma_loop": "tab:olive"}
PERSISTENT_TARGET = 1.6   # wagma_wa / horovod, one rank 2x slower
RANDOM_TARGET = 0.8       # wagma_wa / no_wait
BLOCKING_TARGET = 0.9     # wagma / ideal (random)


class Benchmark:
    """What a framework supplies; bench/imbalance.py and bench/keras_imbalance.py
    subclass it. The harness calls, on every rank: ``setup`` once, then per trial and
    method ``run_method``, then ``teardown``."""
    name = ""                 # results file stem
    framework = ""            # for titles
    methods = ()              # in the order they run
    default_methods = ()
    default_trials = 1
    phases = ()               # per-step phases Window.record() gets; the last is the
                              # optimizer step (averaging, waiting)
    env = {}                  # extra environment for the self-launched mpirun

    def setup(self, args, comm):
        """Imports the framework, initialises Horovod; returns a line describing the
        model for the header."""
        raise NotImplementedError

    def stream_stats(self):
        """{stream name: stats} of this rank's WAGMA streams (``hvd.stats()``)."""
        return {}

    def run_method(self, name, trial, args, warm_sched, window):
        """Builds method ``name`` (in the same order on every rank: WAGMA streams are
        named by creation order), runs its warm-up steps on ``warm_sched``, then
        ``window.open()``, steps (sleeping ``window.nominal(t)`` first) calling
        ``window.record(*phase_seconds)`` until it returns False, then
        ``window.finish(join)`` with the optimizer's join for a wall-time window.
        Returns a dict of this rank's extras (gathered into ``rec["extra"]``)."""
        raise NotImplementedError

    def horovod_collectives(self):
        """(barrier, allreduce of a float) through Horovod, for HOROVOD_LOOP_METHODS."""
        raise NotImplementedError

    def progress(self, rec):
        """Extra text for the per-trial line."""
        return ""

    def notes(self, rec):
        """Extra notes for the table row."""
        return ""

    def teardown(self, args):
        pass


# -- command line ---------------------------------------------------------------------
def parse_args(bench, description, argv=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--np", type=int, default=8,
                   help="ranks when the script launches mpirun itself (default 8)")
    p.add_argument("--steps", type=int, default=200,
                   help="timed steps of the lockstep methods, rounded up to a multiple "
                        "of --sync-period (default 200)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="tau: global average every tau steps (default 10)")
    add_pattern_args(p)
    p.add_argument("--window", type=float, default=None,
                   help="seconds of wagma_wa's wall-time window (default: the blocking "
                        "wagma method's wall time for --steps steps in the same trial)")
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size S (default: the library's, smallest power "
                        "of 2 >= sqrt(P))")
    p.add_argument("--methods", default=",".join(bench.default_methods),
                   help=f"comma-separated subset of {','.join(bench.methods)} "
                        "(default %(default)s)")
    p.add_argument("--trials", type=int, default=bench.default_trials,
                   help="timed runs per method, interleaved; the median is reported "
                        "(default %(default)s)")
    p.add_argument("--json", metavar="PATH",
                   help=f"JSON output (default bench/results/{bench.name}_<pattern>_P{{P}}"
                        ".json)")
    p.add_argument("--plot", metavar="PATH",
                   help=f"PNG output (default bench/results/{bench.name}_<pattern>_P{{P}}"
                        ".png)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds before the self-launched mpirun kills the job")
    args = p.parse_args(argv)
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = set(chosen) - set(bench.methods)
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}; choose from {','.join(bench.methods)}")
    args.methods = [m for m in bench.methods if m in chosen]
    if "wagma_wa" in args.methods and args.window is None and "wagma" not in args.methods:
        p.error("wagma_wa's window is the wagma method's wall time: add wagma to "
                "--methods or give --window")
    if args.sync_period < 2 or args.steps < 1 or args.trials < 1:
        p.error("need --sync-period >= 2, --steps >= 1, --trials >= 1")
    check_pattern_args(p, args)
    if args.window is not None and args.window <= 0:
        p.error("need --window > 0")
    args.steps = -(-args.steps // args.sync_period) * args.sync_period
    return args


# -- patterns and ideals --------------------------------------------------------------
def add_pattern_args(p, one_pattern=True):
    """The imbalance pattern's options (see the module docstring), shared by every
    benchmark that injects imbalance. ``one_pattern=False``: the benchmark runs
    several patterns and seeds itself (no ``--pattern``, ``--seed``)."""
    if one_pattern:
        p.add_argument("--pattern", choices=("random", "persistent"), default="random",
                       help="random: --num-delayed ranks drawn per step sleep --delay "
                            "more; persistent: ranks 0..K-1 always take --slow-factor x "
                            "--step-time (default random)")
        p.add_argument("--seed", type=int, default=0,
                       help="random: seed of the schedule")
    p.add_argument("--step-time", type=float, default=0.010,
                   help="seconds of simulated compute per step (default 0.010)")
    p.add_argument("--delay", type=float, default=0.040,
                   help="random: extra seconds slept by each delayed rank (default 0.040)")
    p.add_argument("--num-delayed", type=int, default=2,
                   help="random: ranks delayed at every step (default 2)")
    p.add_argument("--slow-ranks", default="1",
                   help="persistent: number K of slow ranks (ranks 0..K-1), or 'half' "
                        "for P/2 (default 1)")
    p.add_argument("--slow-factor", type=float, default=2.0,
                   help="persistent: slow ranks' step time over --step-time (default 2)")


def check_pattern_args(p, args):
    if args.step_time <= 0 or args.delay < 0 or args.num_delayed < 0:
        p.error("need --step-time > 0, --delay >= 0, --num-delayed >= 0")
    if args.slow_factor <= 0:
        p.error("need --slow-factor > 0")
    if args.slow_ranks != "half" and not (args.slow_ranks.isdigit()):
        p.error("--slow-ranks takes a number or 'half'")


def slow_ranks(args, P):
    """K, the number of persistently slow ranks (ranks 0..K-1)."""
    return P // 2 if args.slow_ranks == "half" else min(int(args.slow_ranks), P)


def compute_schedule(args, P, steps, seed):
    """(steps, P) array of nominal compute seconds per step and rank. Rows do not
    depend on ``steps``: a longer table extends a shorter one."""
    import numpy as np
    if args.pattern == "persistent":
        per_rank = np.full(P, args.step_time)
        per_rank[:slow_ranks(args, P)] *= args.slow_factor
        return np.tile(per_rank, (steps, 1))
    rng = np.random.default_rng(seed)
    sched = np.full((steps, P), args.step_time)
    k = min(args.num_delayed, P)
    for t in range(steps):
        sched[t, rng.choice(P, size=k, replace=False)] += args.delay
    return sched


def ideal_time(sched, tau):
    """Seconds for the schedule when ranks wait only at global rounds, every tau steps
    (zero communication cost): sum over blocks of the slowest rank's block compute."""
    steps = sched.shape[0]
    return float(sum(sched[b:b + tau].sum(axis=0).max() for b in range(0, steps, tau)))


def no_wait_rate(per_rank_mean_s):
    """samples/s with every rank at its own pace and no waiting at all."""
    return float(sum(BATCH / s for s in per_rank_mean_s))


def ideals(sched, tau):
    """The computed ideals of a (steps, P) schedule, in samples/s."""
    steps, P = sched.shape
    samples = steps * P * BATCH
    return {"no_wait": no_wait_rate(sched.mean(axis=0)),
            "ideal": samples / ideal_time(sched, tau),
            # The same N steps on every rank, waiting once at the end (wagma_loop's
            # bound): the rank with the most compute in total sets the time.
            "equal_steps": samples / float(sched.sum(axis=0).max()),
            "lockstep": samples / float(sched.max(axis=1).sum())}


def describe_pattern(args, P):
    ms = 1e3 * args.step_time
    if args.pattern == "persistent":
        k = slow_ranks(args, P)
        who = "no rank takes" if k == 0 else "rank 0 takes" if k == 1 else \
            f"ranks 0..{k - 1} take"
        return f"persistent: {who} {args.slow_factor:g}x the {ms:g} ms step"
    seed = f" (seed {args.seed})" if hasattr(args, "seed") else ""
    return (f"random: {ms:g} ms step + {1e3 * args.delay:g} ms on {args.num_delayed} "
            f"ranks/step{seed}")


def wagma_global_rounds(method):
    """The global-round mode of a WAGMA method, always passed explicitly: the
    optimizers default to wait-avoiding, and "wagma" is the paper's blocking mode."""
    return "wait_avoiding" if method in ("wagma_wa", "wagma_loop") else "blocking"


# -- launching ------------------------------------------------------------------------
def init_gloo(comm):
    """torch.distributed with gloo over the MPI job's ranks, at a free port chosen by
    rank 0 (for PyTorch's model averagers). Rank 0's address is 127.0.0.1 unless
    WAGMA_BENCH_MASTER_ADDR names another (ranks on several hosts: rank 0's address on
    the network the job uses, with GLOO_SOCKET_IFNAME set to its interface)."""
    import socket
    import torch.distributed as dist
    if dist.is_initialized():
        return
    rank, size = comm.Get_rank(), comm.Get_size()
    addr = os.environ.get("WAGMA_BENCH_MASTER_ADDR", "127.0.0.1")
    port = None
    if rank == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((addr, 0))
            port = s.getsockname()[1]
    port = comm.bcast(port, root=0)
    os.environ.update(MASTER_ADDR=addr, MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(size))
    if addr == "127.0.0.1":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(backend="gloo", init_method="env://", rank=rank,
                            world_size=size)


# -- the timed window -----------------------------------------------------------------
def thread_cpu():
    """CPU seconds of this process's threads, by role: "main" (the training loop),
    "engine" (the WAGMA progress thread, named wagma-engine) and "other"."""
    import threading
    main_tid = threading.main_thread().native_id
    out = {"main": 0.0, "engine": 0.0, "other": 0.0}
    for tid, name, seconds in thread_cpu_seconds():
        role = ("main" if tid == main_tid else
                "engine" if name == "wagma-engine" else "other")
        out[role] += seconds
    return out


def engine_counters():
    from horovod_wagma.common import engine_lib
    return engine_lib.stats() if engine_lib.started() else {}


def window_diff(before, after):
    """Counters over a window: differences, except maxima and means (as of the end:
    they cannot be windowed). Non-numeric values are dropped."""
    return {k: v if k.endswith(("_max", "_mean")) else v - before.get(k, 0)
            for k, v in after.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def active_stream_stats(before, after):
    """This rank's summary of the streams that ran rounds in the window: counters
    summed, ``*_max`` the max, ``*_mean`` the mean over those streams."""
    active = [window_diff(before.get(n, {}), s) for n, s in after.items()
              if s.get("rounds", 0) > before.get(n, {}).get("rounds", 0)]
    out = {"streams": len(active)}
    for k in sorted({k for s in active for k in s}):
        vals = [s[k] for s in active if k in s]
        out[k] = (max(vals) if k.endswith("_max") else
                  sum(vals) / len(vals) if k.endswith("_mean") else sum(vals))
    return out


class Window:
    """One rank's timed window for one method: ``steps`` mode (lockstep methods: a
    fixed number of steps between two barriers) or ``wall`` mode (wagma_wa: steps
    until a deadline W seconds after the opening barrier)."""

    def __init__(self, comm, sched, tau, wall_s=None, wagma=False, stream_stats=None,
                 horovod=None):
        self.comm, self.sched, self.tau, self.wall_s = comm, sched, tau, wall_s
        # (barrier, allreduce) of Horovod: steps mode opens with the barrier and closes
        # with an allreduce of this rank's rate, as a user's loop would, instead of MPI
        # barriers.
        self.horovod = horovod
        self.rank = comm.Get_rank()
        self.wagma, self.stream_stats = wagma, stream_stats
        self.times = []       # phase seconds of each counted step
        self.t_end = None
        self.own_rate = None  # steps/s over this rank's own steps (Horovod's loop only)

    @property
    def lockstep(self):
        return self.wall_s is None

    @property
    def planned_steps(self):
        """Steps to plan for (e.g. Keras' steps_per_epoch): exact in steps mode, more
        than the deadline allows in wall mode."""
        return len(self.sched)

    def nominal(self, t):
        """Nominal compute seconds of this rank's step t of the window."""
        return float(self.sched[t % len(self.sched), self.rank])

    def open(self):
        self._engine0 = engine_counters() if self.wagma else {}
        self._streams0 = self.stream_stats() if self.wagma else {}
        if self.horovod:
            self.horovod[0]()
        else:
            self.comm.Barrier()
        self._threads0, self._cpu0 = thread_cpu(), time.process_time()
        self.t0 = time.perf_counter()
        self.deadline = None if self.lockstep else self.t0 + self.wall_s

    def record(self, *phases):
        """Records a finished step's phase seconds; returns False when the window is
        over for this rank (steps mode: after the closing barrier)."""
        if self.lockstep:
            self.times.append(phases)
            if len(self.times) < len(self.sched):
                return True
            if self.horovod:
                # The rate a user's loop computes and allreduces: its own steps over its
                # own time, before the collective's wait for the others.
                self.own_rate = len(self.times) / (time.perf_counter() - self.t0)
                self.horovod[1](self.own_rate)
            else:
                self.comm.Barrier()
        elif time.perf_counter() <= self.deadline:
            self.times.append(phases)
            return True
        self._stop()
        return False

    def _stop(self):
        self.t_end = time.perf_counter()
        self.cpu = time.process_time() - self._cpu0   # all threads of this process
        threads1 = thread_cpu()
        self.threads = {k: threads1[k] - self._threads0[k] for k in threads1}
        self.engine = window_diff(self._engine0, engine_counters()) if self.wagma else {}
        self.streams = (active_stream_stats(self._streams0, self.stream_stats())
                        if self.wagma else {})

    def finish(self, join=None):
        """Ends this rank's part: ``join`` (wall mode: the optimizer's join, outside
        the window) lets every rank stop without waiting for the others' rounds; then
        a barrier."""
        if self.t_end is None:   # the planned steps ran out before the window ended
            self._stop()
        if join is not None:
            join()
        self.comm.Barrier()

    def collect(self, extra, phases):
        """Gathers every rank's measurements; on rank 0 returns the method's record."""
        import numpy as np
        g = self.comm.gather(dict(times=np.array(self.times, dtype=float).reshape(
                                      -1, len(phases)),
                                  t0=self.t0, t_end=self.t_end, cpu=self.cpu,
                                  own_rate=self.own_rate,
                                  threads=self.threads, engine=self.engine,
                                  streams=self.streams, extra=extra), root=0)
        if self.rank != 0:
            return None
        P, tau = len(g), self.tau
        steps = [len(x["times"]) for x in g]
        total = sum(steps)
        wall = g[0]["t_end"] - g[0]["t0"] if self.lockstep else self.wall_s
        work = [x["times"][:, :-1].sum(axis=1) for x in g]      # all but the opt step
        last = [x["times"][:, -1] for x in g]
        allsteps = np.concatenate([x["times"] for x in g])
        total_cpu = sum(x["cpu"] for x in g)
        rec = {"window": "steps" if self.lockstep else "wall", "wall_s": wall,
               "steps_per_rank": steps, "samples_per_s": total * BATCH / wall,
               "steps_per_s": total / P / wall,
               "rank_window_s": [x["t_end"] - x["t0"] for x in g],
               "mean_ms": {ph: 1e3 * float(allsteps[:, i].mean())
                           for i, ph in enumerate(phases)},
               "mean_nominal_ms": 1e3 * float(np.mean(np.concatenate(
                   [self.sched[np.arange(n) % len(self.sched), r]
                    for r, n in enumerate(steps)]))),
               "per_rank_last_phase_ms": [1e3 * float(v.mean()) for v in last],
               "no_wait_measured": no_wait_rate([float(w.mean()) if len(w) else math.inf
                                                 for w in work]),
               "cpu_ms_per_rank_step": 1e3 * total_cpu / total,
               "thread_cpu_ms_per_rank_step": {
                   k: 1e3 * sum(x["threads"][k] for x in g) / total for k in g[0]["threads"]},
               "host_cpu_share": total_cpu / wall / (os.cpu_count() or 1),
               "extra": [x["extra"] for x in g]}
        if self.horovod:
            # Horovod's synthetic benchmark reports this sum: each rank's own rate.
            rec["own_rates_samples_per_s"] = sum(x["own_rate"] for x in g) * BATCH
        if self.lockstep:
            work, last = np.stack(work, axis=1), np.stack(last, axis=1)   # (steps, P)
            sync_rows = np.arange(tau - 1, len(last), tau)
            rec["ideal_measured"] = len(work) * P * BATCH / ideal_time(work, tau)
            rec["last_phase_between_syncs_ms"] = 1e3 * float(
                np.delete(last, sync_rows, axis=0).mean())
            rec["last_phase_at_syncs_ms"] = 1e3 * float(last[sync_rows].mean())
        if self.wagma:
            # Summed over ranks (maxima: max over ranks).
            rec["engine_stats_sum"] = {
                k: (max if k.endswith("_max") else sum)(x["engine"].get(k, 0) for x in g)
                for k in g[0]["engine"]}
            rec["stream_stats_per_rank"] = [x["streams"] for x in g]
        return rec


# -- the driver -----------------------------------------------------------------------
def main(bench, script, description):
    """Entry point of a benchmark script: parses, re-launches under mpirun, runs."""
    args = parse_args(bench, description)
    relaunch_under_mpirun(script, args.np, args.timeout, bench.env)
    for k, v in bench.env.items():
        os.environ.setdefault(k, v)
    abort_on_error(run, bench, args)


def abort_on_error(fn, *args):
    """Runs fn(*args) on this rank; an exception aborts the whole MPI job: one rank's
    error (a WAGMA stall, a bug in the report) would otherwise leave the others
    waiting at a barrier until mpirun's timeout."""
    try:
        fn(*args)
    except BaseException:
        import traceback
        from mpi4py import MPI
        traceback.print_exc()
        MPI.COMM_WORLD.Abort(1)


def run(bench, args):
    from mpi4py import MPI  # MPI_THREAD_MULTIPLE, before Horovod and the engine
    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    model_line = bench.setup(args, comm)
    from horovod_wagma.common.schedule import default_group_size, groups
    S = args.group_size or default_group_size(P)
    tau = args.sync_period
    timed = compute_schedule(args, P, args.steps, args.seed)
    warm = compute_schedule(args, P, tau + 1, args.seed + 1)
    if rank == 0:
        print(f"{bench.framework}: P={P}, S={S} (phases {groups(P, S)}), tau={tau}, "
              f"{describe_pattern(args, P)}; {args.steps} timed steps (lockstep "
              f"methods), batch {BATCH}/rank; {model_line}; {args.trials} trial(s)",
              flush=True)

    trials = {m: [] for m in args.methods}
    t_start = time.perf_counter()
    for trial in range(args.trials):
        walls = {}
        for name in args.methods:
            wall_s, sched = None, timed
            if name in WALL_METHODS:
                wall_s = args.window or walls["wagma"]
                # Enough rows that no rank runs out before the deadline.
                rows = max(len(timed), math.ceil(wall_s / timed.min()) + tau)
                sched = compute_schedule(args, P, rows, args.seed)
            window = Window(comm, sched, tau, wall_s, wagma=name.startswith("wagma"),
                            stream_stats=bench.stream_stats,
                            horovod=bench.horovod_collectives()
                            if name in HOROVOD_LOOP_METHODS else None)
            comm.Barrier()
            extra = bench.run_method(name, trial, args, warm, window)
            rec = window.collect(extra, bench.phases)
            walls[name] = comm.bcast(rec["wall_s"] if rank == 0 else None, root=0)
            if rank == 0:
                trials[name].append(rec)
                print(f"  trial {trial}: {LABELS[name]:>15}: {rec['samples_per_s']:7.0f} "
                      f"samples/s ({rec['window']} window {rec['wall_s']:.2f} s, "
                      f"steps/rank {steps_text(rec)}; "
                      + ", ".join(f"{ph} {v:.1f}" for ph, v in rec["mean_ms"].items())
                      + f" ms vs {rec['mean_nominal_ms']:.1f} nominal"
                      + bench.progress(rec) + ")", flush=True)
    if rank == 0:
        report(bench, args, P, S, trials, ideals(timed, tau), time.perf_counter() - t_start)
    comm.Barrier()
    bench.teardown(args)


# -- reporting ------------------------------------------------------------------------
def print_table(rows):
    """Prints rows of strings (the first is the header) as an aligned table; the last
    column is free-form notes."""
    ncol = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(ncol)]
    for i, row in enumerate(rows):
        print("  " + "  ".join(c.rjust(w) if j else c.ljust(w)
                               for j, (c, w) in enumerate(zip(row[:ncol], widths)))
              + ("  " + row[ncol] if row[ncol] else ""))
        if i == 0:
            print("  " + "-" * (sum(widths) + 2 * (ncol - 1)))


def steps_text(rec):
    s = rec["steps_per_rank"]
    return f"{min(s)}" if min(s) == max(s) else f"{min(s)}-{max(s)}"


def method_notes(rec):
    s = rec.get("engine_stats_sum")
    if s is None:
        return ""
    notes = (f"passive_joins={s.get('passive_joins', 0)} "
             f"rounds={s.get('rounds_completed', 0)}")
    if "call_wait_us" in s:
        notes += f" call_wait={s['call_wait_us'] / 1e3 / sum(rec['steps_per_rank']):.1f}ms/step"
    if rec["window"] == "wall":
        per_rank = rec["stream_stats_per_rank"]
        skipped = [r.get("rounds_skipped") for r in per_rank]
        if any(v is not None for v in skipped):
            notes += f" rounds_skipped/rank={skipped}"
        ages = [r["contribution_age_mean"] for r in per_rank if "contribution_age_mean" in r]
        if ages:
            notes += (f" contribution age: mean {max(ages):.2f} (worst rank), max "
                      f"{max(r.get('contribution_age_max', 0) for r in per_rank)}")
    return notes


def targets(args, P, rate):
    """The issue's targets for this run's pattern: [{target, method, base, threshold,
    achieved (None when a method did not run), verdict}]."""
    if args.pattern == "persistent":
        if slow_ranks(args, P) != 1 or args.slow_factor != 2.0:
            return []
        wanted = [("wagma_wa", "horovod", PERSISTENT_TARGET, "(one rank 2x slower)")]
    else:
        wanted = [("wagma_wa", "no_wait", RANDOM_TARGET, "ideal"),
                  ("wagma_loop", "no_wait", RANDOM_TARGET, "ideal (defaults, user's loop)"),
                  ("wagma", "ideal", BLOCKING_TARGET, "(global rounds only)")]
    out = []
    for method, base, threshold, suffix in wanted:
        got = rate[method] / rate[base] if method in rate and rate.get(base) else None
        out.append({"target": f"{method} >= {threshold}x {base} {suffix}",
                    "method": method, "base": base, "threshold": threshold,
                    "achieved": got, "verdict": "not run" if got is None else
                    "met" if got >= threshold else "MISSED"})
    return out


def median_trial(recs):
    """The trial with the median samples/s (the lower middle one for an even count)."""
    ordered = sorted(recs, key=lambda r: r["samples_per_s"])
    return ordered[(len(ordered) - 1) // 2]


def print_spread(trials):
    """Each method's samples/s range over the trials, and the per-trial ratio of each
    WAGMA method to Horovod (trials interleave the methods, so a trial's ratio pairs
    runs made under the same host conditions)."""
    if max(len(recs) for recs in trials.values()) < 2:
        return
    ranges = "; ".join(
        f"{LABELS[m]} {min(r['samples_per_s'] for r in recs):.0f}-"
        f"{max(r['samples_per_s'] for r in recs):.0f}" for m, recs in trials.items())
    print(f"  spread over trials (samples/s min-max): {ranges}")
    if "wagma_loop" in trials:
        own = [r["own_rates_samples_per_s"] for r in trials["wagma_loop"]]
        print(f"  {LABELS['wagma_loop']}: sum of the ranks' own rates (each over its own "
              f"steps, before the final allreduce) per trial: "
              + ", ".join(f"{x:.0f}" for x in own))
    for m in ("wagma", "wagma_wa", "wagma_loop"):
        if m in trials and "horovod" in trials:
            per_trial = [a["samples_per_s"] / b["samples_per_s"]
                         for a, b in zip(trials[m], trials["horovod"])]
            print(f"  {LABELS[m]} / Horovod per trial: "
                  + ", ".join(f"{x:.2f}" for x in per_trial))


def report(bench, args, P, S, trials, ideal, elapsed):
    # The median trial of each method: one lucky run must not decide a target.
    best = {m: median_trial(recs) for m, recs in trials.items()}
    rate = {m: r["samples_per_s"] for m, r in best.items()}
    rate.update(ideal)
    for m, key in (("wagma", "ideal_measured"), ("wagma_wa", "no_wait_measured")):
        if key in best.get(m, {}):
            rate[key] = best[m][key]
    hv = rate.get("horovod")

    print(f"\n{bench.framework} throughput, {describe_pattern(args, P)}: P={P}, S={S}, "
          f"tau={args.sync_period}, batch {BATCH}/rank, median of {args.trials} (methods "
          f"{elapsed:.0f} s)")
    print(f"  ideals (nominal schedule, samples/s): no-wait {ideal['no_wait']:.0f}; wait "
          f"only at global rounds {ideal['ideal']:.0f}; the same steps on every rank, "
          f"one wait at the end {ideal['equal_steps']:.0f}; sync every step "
          f"{ideal['lockstep']:.0f}")
    print(f"  window: lockstep methods {args.steps} steps between barriers; wagma_wa "
          + (f"{args.window:g} s (--window)" if args.window else
             "the wagma run's wall time in the same trial")
          + f"\n  phases ({', '.join(bench.phases)}): mean ms per step over ranks and "
          f"steps; '{bench.phases[-1]}' also between / at synchronising steps;\n  cpu "
          "ms: CPU per rank-step, all threads and main/engine/other; host cpu: all "
          "ranks' CPU / window / cores")
    rows = [("method", "samples/s", "x no-wait", "x Horovod", "steps/rank",
             *(f"{ph} ms" for ph in bench.phases), "between", "at sync", "cpu ms",
             "main/engine/other", "host cpu", "notes")]
    idle = ("-",) * (len(bench.phases) + 6)
    for m in list(best) + ["no_wait", "ideal", "ideal_measured", "no_wait_measured"]:
        if m not in rate:
            continue
        r = best.get(m)
        head = (LABELS[m], f"{rate[m]:.0f}", f"{rate[m] / rate['no_wait']:.2f}",
                f"{rate[m] / hv:.2f}" if hv else "-")
        if r is None:
            note = {"ideal_measured": "from the wagma run's measured work",
                    "no_wait_measured": "from the wagma_wa run's measured work"}.get(m, "")
            rows.append(head + idle + (note,))
            continue
        rows.append(head + (
            steps_text(r), *(f"{v:.1f}" for v in r["mean_ms"].values()),
            f"{r['last_phase_between_syncs_ms']:.1f}" if r["window"] == "steps" else "-",
            f"{r['last_phase_at_syncs_ms']:.1f}" if r["window"] == "steps" else "-",
            f"{r['cpu_ms_per_rank_step']:.2f}",
            "/".join(f"{r['thread_cpu_ms_per_rank_step'][k]:.1f}"
                     for k in ("main", "engine", "other")),
            f"{100 * r['host_cpu_share']:.0f}%",
            (method_notes(r) + " " + bench.notes(r)).strip()))
    print_table(rows)
    print_spread(trials)

    ratios = {f"{m}_over_{d}": rate[m] / rate[d] for m in best
              for d in ("no_wait", "ideal", "horovod") if d in rate and d != m}
    cores = os.cpu_count() or 1
    for m in ("wagma", "wagma_wa"):
        if m in best:
            bound = cores / (best[m]["cpu_ms_per_rank_step"] / 1e3) * BATCH
            print(f"  host CPU bound for {LABELS[m]}'s CPU use: {bound:.0f} samples/s "
                  f"({cores} cores / {best[m]['cpu_ms_per_rank_step']:.2f} ms CPU per "
                  f"rank-step x {BATCH}); reached {rate[m] / bound:.2f}x of it")
    checked = targets(args, P, rate)
    for t in checked:
        print(f"  target {t['target']}: {t['verdict']}"
              + (f" ({t['achieved']:.2f}x)" if t["achieved"] is not None else ""))
    if not checked:
        print("  (no target from the issue for this configuration)")

    stem = f"{bench.name}_{args.pattern}_P{P}"
    json_path = args.json or os.path.join(RESULTS_DIR, stem + ".json")
    plot_path = args.plot or os.path.join(RESULTS_DIR, stem + ".png")
    for path in (json_path, plot_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump({"framework": bench.framework, "ranks": P, "group_size": S,
                   "sync_period": args.sync_period, "pattern": args.pattern,
                   "step_time_s": args.step_time, "delay_s": args.delay,
                   "num_delayed": args.num_delayed, "seed": args.seed,
                   "slow_ranks": slow_ranks(args, P), "slow_factor": args.slow_factor,
                   "batch_per_rank": BATCH, "steps": args.steps,
                   "window_s_arg": args.window, "trials": args.trials,
                   "horovod_cycle_time_ms": os.environ.get("HOROVOD_CYCLE_TIME"),
                   "samples_per_s": rate, "ratios": ratios, "targets": checked,
                   "runs": trials}, f, indent=2)
    plot(bench, args, P, S, rate, checked, plot_path)
    print(f"  wrote {json_path}\n  wrote {plot_path}")


def plot(bench, args, P, S, rate, checked, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    methods = [m for m in bench.methods if m in rate]
    ideal_keys = ["no_wait"] + (["ideal"] if args.pattern == "random" else [])
    keys = methods + ideal_keys
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    bars = ax.bar([LABELS[k].replace(" ", "\n", 1) for k in keys], [rate[k] for k in keys],
                  color=[COLORS.get(k, "white") for k in keys], edgecolor="black")
    for bar, k in zip(bars[len(methods):], ideal_keys):
        bar.set_hatch("//" if k == "no_wait" else "..")
    hv = rate.get("horovod")
    for bar, k in zip(bars, keys):
        text = f"{rate[k]:.0f}" + (f"\n{rate[k] / hv:.2f}x Hvd" if hv else "")
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    for t, style in zip(checked, ("--", ":")):
        if rate.get(t["base"]):
            ax.axhline(t["threshold"] * rate[t["base"]], color="tab:red", linestyle=style,
                       linewidth=1, label=f"target for {LABELS[t['method']]}: {t['threshold']}x "
                       f"{LABELS[t['base']]}")
    ax.set_ylabel("samples / s (sum over ranks)")
    ax.set_title(f"{bench.framework}, P={P}, S={S}, tau={args.sync_period}: "
                 f"{describe_pattern(args, P)}", fontsize=9)
    if checked:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_ylim(0, 1.3 * max(rate[k] for k in keys))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
