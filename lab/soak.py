#!/usr/bin/env python
"""Soak test: many rounds of interleaved WAGMA streams under a random straggler.

What is run
-----------
P ranks (``--np``, 4) each drive 1 + N streams of ``group_allreduce`` for ``--rounds``
rounds (10000): one big float32 stream (``--big-bytes``, 1 MB) and N small streams
(``--small-streams``, 3), cycling through 1 KB float16, 16 KB float64 and 100 float32
elements. The big stream and the even-numbered small streams are out of place (a new
output tensor every round), the odd-numbered small streams are in place
(``group_allreduce_async_``), so both engine paths and the allocation churn of the
out-of-place one are exercised.

Every round, on every rank:

1. A straggler: a rank drawn by an RNG seeded with ``--seed``, the same draw on every
   rank, sleeps ``--straggle-ms`` (2 ms) before enqueueing anything.
2. All streams are enqueued asynchronously in a random order that differs per rank
   and per round (a per-rank RNG), so the engine sees the streams interleaved in a
   different order on every rank.
3. Every handle is polled once, then synchronized, in another per-rank random order.
4. Every result is checked: finite and inside the interval the update below keeps the
   values in. At global rounds (round 0 and every r with (r + 1) % sync_period == 0)
   every rank also allgathers a CRC32 of each result (mpi4py): all ranks must hold
   bit-identical values.
5. Gossip feedback with a local step: the next input is ``0.5 * result + b_i``, with
   ``b_i[j] = rank + 1 + (j mod 8) / 8``. Averages are convex combinations, so every
   value stays in [2, 2(P + 7/8)] and the ranks never agree between global rounds.

Measured: every ``--sample-every`` (250) rounds, after the round's handles are
synchronized, each rank records its resident memory (VmRSS from /proc/self/status),
its number of threads (/proc/self/task) and of open file descriptors (/proc/self/fd),
the torch binding's handles still holding tensors (``ops._pending_tensors``) and the
engine counters (``horovod_wagma.common.op.engine_lib.stats()``). The counters
``pending_handles``, ``rounds_held`` and ``queue_depth`` and the Python pending count
are also read after every round. At the end each rank stops the engine (timed) and
checks that its thread ("wagma-engine") is gone.

Criteria (the exit code is non-zero if one fails):

* results: every value finite and in bounds, every global round bit-identical;
* RSS: max over ranks of (RSS_end - RSS_warmup) / RSS_warmup < 5 % (``--rss-limit``),
  where RSS_warmup is the sample after ``--warmup`` rounds (1000);
* threads and file descriptors: the same count at every sample from warm-up on;
* handles: no Python-side pending handle after any round's synchronize, and the engine's
  ``pending_handles`` and ``queue_depth`` 0 after every synchronize (when the engine
  reports them); ``rounds_held`` at most streams x sync_period (rounds other ranks
  may already have activated ahead of this one);
* shutdown: the engine stops within 30 s and leaves no engine thread behind.

Reported as figures: rounds/s (overall and after warm-up, rank 0's wall time between
barriers), passive joins and staleness summed over ranks, total time.

Never hangs: the self-launched ``mpirun --timeout`` defaults to 0.1 s per round +
120 s, and a watchdog (SIGALRM, re-armed every round, handled by faulthandler: no extra
thread) dumps every thread's Python stack and kills the rank if a round takes longer
than ``--stall-timeout`` (120 s); mpirun then reports a rank "exited on signal 14
(Alarm clock)".

Run
---
    python lab/soak.py [--np 4] [--rounds 10000] [--warmup 1000] [--big-bytes 1048576]
                         [--small-streams 3] [--straggle-ms 2] [--sync-period 10]
                         [--group-size S] [--sample-every 250] [--seed 0] [--json PATH]

Run directly, the script re-launches itself under ``mpirun -np NP --oversubscribe``
with the environment this machine needs (run-as-root, ``OMPI_MCA_mpi_yield_when_idle=1``;
docs/launching.md). Started by mpirun, it uses the world size it is given. Rank 0
prints the table and the verdicts. It is not part of ``make test``.
"""
import argparse
import faulthandler
import json
import os
import random
import signal
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from harness import relaunch_under_mpirun  # noqa: E402  (the Open MPI settings)

from horovod_wagma.common.optimizer.rounds import is_global_round  # noqa: E402

# Small streams cycle through these (label, bytes, dtype name).
SMALL_SPECS = (("1K", 1024, "float16"), ("16K", 16 << 10, "float64"),
               ("100f", 400, "float32"))
ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8}
ENGINE_THREAD = "wagma-engine"
# Engine counters that must be 0 after every round's synchronize, and the one that
# may stay positive but bounded (see the module docstring).
ZERO_AFTER_SYNC = ("pending_handles", "queue_depth")
BOUNDED_AFTER_SYNC = ("rounds_held",)
SHUTDOWN_LIMIT_S = 30.0
MB = 1 << 20


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--np", type=int, default=4,
                   help="ranks when the script launches mpirun itself (default 4)")
    p.add_argument("--rounds", type=int, default=10000, help="rounds per stream")
    p.add_argument("--warmup", type=int, default=1000,
                   help="rounds before the baseline sample of RSS, threads and fds")
    p.add_argument("--big-bytes", type=int, default=1 << 20,
                   help="bytes of the big float32 stream (default 1 MB)")
    p.add_argument("--small-streams", type=int, default=3,
                   help="small streams interleaved with the big one (default 3)")
    p.add_argument("--straggle-ms", type=float, default=2.0,
                   help="sleep of the round's random straggler before enqueueing")
    p.add_argument("--sync-period", type=int, default=10)
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size S (default: the library's for P ranks)")
    p.add_argument("--averaging", choices=("fresh", "paper"), default="fresh")
    p.add_argument("--sample-every", type=int, default=250,
                   help="rounds between samples of RSS, threads, fds and counters")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rss-limit", type=float, default=0.05,
                   help="maximum RSS growth after warm-up, as a fraction (default 0.05)")
    p.add_argument("--stall-timeout", type=float, default=120.0,
                   help="seconds without progress before the watchdog dumps stacks and exits")
    p.add_argument("--timeout", type=int, default=None,
                   help="seconds before the self-launched mpirun kills the job "
                        "(default 0.1 s per round + 120 s)")
    p.add_argument("--json", metavar="PATH", help="also write samples and verdicts as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1 or not 0 < args.warmup < args.rounds:
        p.error("need --rounds >= 1 and 0 < --warmup < --rounds")
    if args.big_bytes < 4 or args.big_bytes % 4 or args.small_streams < 0:
        p.error("--big-bytes must be a positive multiple of 4, --small-streams >= 0")
    if args.sample_every < 1 or args.straggle_ms < 0:
        p.error("--sample-every must be >= 1 and --straggle-ms >= 0")
    if args.timeout is None:
        args.timeout = int(0.1 * args.rounds + 120)
    return args


# -- /proc ----------------------------------------------------------------------------
def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def thread_names():
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass  # the thread ended meanwhile
    return sorted(names)


def num_threads():
    return len(os.listdir("/proc/self/task"))


def num_fds():
    return len(os.listdir("/proc/self/fd"))


# -- the soak -------------------------------------------------------------------------
class Stream:
    """One WAGMA stream: its tensor, the local step b, the bounds its values keep."""

    def __init__(self, name, numel, dtype_name, inplace, rank, size, torch):
        self.name, self.dtype_name, self.inplace = name, dtype_name, inplace
        self.nbytes = numel * ITEMSIZE[dtype_name]
        dtype = getattr(torch, dtype_name)
        j = torch.arange(numel, dtype=torch.float64)
        self.b = (rank + 1 + torch.remainder(j, 8) / 8).to(dtype)
        self.x = 2 * self.b                       # this rank's own fixed point
        tol = 1e-3 if dtype_name == "float16" else 1e-6
        self.lo, self.hi = 2.0 * (1 - tol), 2.0 * (size + 0.875) * (1 + tol)
        self.y = None

    def enqueue(self, hvd):
        op = hvd.group_allreduce_async_ if self.inplace else hvd.group_allreduce_async
        return op(self.x, name=self.name)

    def check(self):
        """None if the last result is finite and in bounds, else a description."""
        lo, hi = (float(v) for v in self.y.aminmax())
        if lo >= self.lo and hi <= self.hi:    # False for NaN
            return None
        return f"{self.name}: values in [{lo}, {hi}], expected within [{self.lo}, {self.hi}]"

    def checksum(self):
        return zlib.crc32(self.y.numpy())

    def step(self):
        """Next input = 0.5 * result + b (in place on the result tensor)."""
        self.x = self.y.mul_(0.5).add_(self.b)
        self.y = None


def make_streams(args, rank, size, torch):
    streams = [Stream("soak.big", args.big_bytes // 4, "float32", False, rank, size, torch)]
    for i in range(args.small_streams):
        label, nbytes, dtype_name = SMALL_SPECS[i % len(SMALL_SPECS)]
        streams.append(Stream(f"soak.small{i}.{label}.{dtype_name}",
                              max(1, nbytes // ITEMSIZE[dtype_name]), dtype_name,
                              i % 2 == 1, rank, size, torch))
    return streams


class Monitor:
    """Samples of this rank's resources and engine counters, plus the per-round maxima
    of the counters that must drop back after synchronize."""

    def __init__(self, engine_lib, ops, t0):
        self.engine_lib, self.ops, self.t0 = engine_lib, ops, t0
        self.samples = []
        self.max_after_sync = {}     # key -> max value seen after a round's synchronize
        self.first_nonzero = {}      # key -> (round, value) of the first bad reading

    def py_pending(self):
        """Handles of the torch binding still holding their tensors (0 after sync)."""
        return len(getattr(self.ops, "_pending_tensors", ()))

    def after_round(self, r):
        stats = self.engine_lib.stats()
        values = {k: stats[k] for k in ZERO_AFTER_SYNC + BOUNDED_AFTER_SYNC if k in stats}
        values["py_pending"] = self.py_pending()
        for k, v in values.items():
            if v > self.max_after_sync.get(k, -1):
                self.max_after_sync[k] = v
            if v and k != "rounds_held" and k not in self.first_nonzero:
                self.first_nonzero[k] = (r, v)
        return stats

    def sample(self, rounds_done, stats=None):
        self.samples.append({
            "round": rounds_done, "t": time.perf_counter() - self.t0, "rss_kb": rss_kb(),
            "threads": num_threads(), "fds": num_fds(),
            "py_pending": self.py_pending(),
            "stats": stats if stats is not None else self.engine_lib.stats()})


def run(args):
    from mpi4py import MPI
    import torch

    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)

    import horovod_wagma.torch as hvd
    from horovod_wagma.common.op import engine_lib
    from horovod_wagma.torch import ops
    hvd.init(group_size=args.group_size, sync_period=args.sync_period,
             averaging=args.averaging)

    streams = make_streams(args, rank, P, torch)
    n = len(streams)
    straggler_rng = random.Random(args.seed)                 # same draws on every rank
    order_rng = random.Random(args.seed * 1_000_003 + rank + 1)  # differs per rank
    sample_at = {1, args.warmup, args.rounds}
    sample_at.update(range(args.sample_every, args.rounds + 1, args.sample_every))

    bad_values, first_bad = 0, None
    global_checks, global_mismatches, first_mismatch = 0, 0, None
    straggles = 0
    names_warmup = None

    # Watchdog without a thread of its own (it would show in the thread counts): SIGALRM
    # makes faulthandler dump every thread's stack, then the default action ends the
    # process. Re-armed every round; works even while a C call holds the GIL.
    faulthandler.register(signal.SIGALRM, all_threads=True, chain=True)
    signal.setitimer(signal.ITIMER_REAL, args.stall_timeout)
    comm.Barrier()
    t0 = time.perf_counter()
    mon = Monitor(engine_lib, ops, t0)
    t_warm = None
    for r in range(args.rounds):
        signal.setitimer(signal.ITIMER_REAL, args.stall_timeout)
        if straggler_rng.randrange(P) == rank and args.straggle_ms > 0:
            straggles += 1
            time.sleep(args.straggle_ms / 1000)
        handles = [None] * n
        for i in order_rng.sample(range(n), n):
            handles[i] = streams[i].enqueue(hvd)
        sync_order = order_rng.sample(range(n), n)
        for i in sync_order:
            hvd.poll(handles[i])
        for i in sync_order:
            streams[i].y = hvd.synchronize(handles[i])
        del handles
        for s in streams:
            problem = s.check()
            if problem:
                bad_values += 1
                first_bad = first_bad or f"round {r}: {problem}"
        if is_global_round(r, args.sync_period):
            sums = [s.checksum() for s in streams]
            everyone = comm.allgather(sums)
            global_checks += 1
            if any(other != sums for other in everyone):
                global_mismatches += 1
                if first_mismatch is None:
                    bad = [s.name for i, s in enumerate(streams)
                           if len({e[i] for e in everyone}) > 1]
                    first_mismatch = f"round {r}: ranks differ on {', '.join(bad)}"
        for s in streams:
            s.step()
        stats = mon.after_round(r)
        done = r + 1
        if done in sample_at:
            mon.sample(done, stats)
            if done == args.warmup:
                t_warm = mon.samples[-1]["t"]
                names_warmup = thread_names()
    comm.Barrier()
    loop_time = time.perf_counter() - t0
    names_end = thread_names()
    final_stats = engine_lib.stats()

    # Stop the engine: its thread must end (atexit's second shutdown is a no-op).
    signal.setitimer(signal.ITIMER_REAL, 2 * SHUTDOWN_LIMIT_S)
    t = time.perf_counter()
    engine_lib.shutdown()
    shutdown_s = time.perf_counter() - t
    signal.setitimer(signal.ITIMER_REAL, args.stall_timeout)  # for the gather below
    names_after_shutdown = thread_names()

    local = {
        "rank": rank, "samples": mon.samples, "max_after_sync": mon.max_after_sync,
        "first_nonzero": mon.first_nonzero, "bad_values": bad_values,
        "first_bad": first_bad, "global_checks": global_checks,
        "global_mismatches": global_mismatches, "first_mismatch": first_mismatch,
        "straggles": straggles, "loop_time_s": loop_time, "warmup_time_s": t_warm,
        "final_stats": final_stats, "shutdown_s": shutdown_s,
        "threads_warmup": names_warmup, "threads_end": names_end,
        "threads_after_shutdown": names_after_shutdown,
    }
    everyone = comm.gather(local, root=0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    code = 0
    if rank == 0:
        report = evaluate(args, P, hvd, streams, everyone)
        print_report(args, P, report, everyone)
        code = 0 if all(v["ok"] is not False for v in report["verdicts"]) else 1
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"args": vars(args), "ranks": P, "report": report,
                           "per_rank": everyone}, f, indent=1)
            print(f"wrote {args.json}")
    return comm.bcast(code, root=0)


# -- verdicts and report --------------------------------------------------------------
def _constant_after(per_rank, key, warmup):
    """Per rank, the distinct values of `key` at samples from warm-up on."""
    return {d["rank"]: sorted({s[key] for s in d["samples"] if s["round"] >= warmup})
            for d in per_rank}


def _at(samples, rnd):
    return next(s for s in samples if s["round"] == rnd)


def evaluate(args, P, hvd, streams, per_rank):
    verdicts = []

    def verdict(name, ok, detail):
        verdicts.append({"criterion": name, "ok": ok, "detail": detail})

    # Results.
    bad = sum(d["bad_values"] for d in per_rank)
    mism = sum(d["global_mismatches"] for d in per_rank)
    checks = per_rank[0]["global_checks"]
    detail = (f"{args.rounds} rounds x {len(streams)} streams x {P} ranks checked, "
              f"{bad} out of bounds; {checks} global rounds, {mism} not bit-identical")
    firsts = [d["first_bad"] for d in per_rank if d["first_bad"]] + \
             [d["first_mismatch"] for d in per_rank if d["first_mismatch"]]
    if firsts:
        detail += f"; first: {firsts[0]}"
    verdict("results finite, bounded, identical at global rounds", bad == 0 and mism == 0,
            detail)

    # RSS.
    growth = {}
    for d in per_rank:
        warm, end = _at(d["samples"], args.warmup), _at(d["samples"], args.rounds)
        growth[d["rank"]] = (end["rss_kb"] - warm["rss_kb"]) / warm["rss_kb"]
    worst = max(growth, key=growth.get)
    verdict(f"RSS growth after warm-up < {100 * args.rss_limit:g}%",
            growth[worst] < args.rss_limit,
            f"max {100 * growth[worst]:+.2f}% (rank {worst}); per rank "
            + ", ".join(f"{100 * g:+.2f}%" for _, g in sorted(growth.items())))

    # Threads and fds.
    for key, label in (("threads", "thread count"), ("fds", "open fds")):
        seen = _constant_after(per_rank, key, args.warmup)
        ok = all(len(v) == 1 for v in seen.values())
        detail = "per rank " + ", ".join("/".join(map(str, v)) for _, v in sorted(seen.items()))
        if key == "threads" and not ok:
            for d in per_rank:
                if len(seen[d["rank"]]) > 1:
                    names = {n: (d["threads_warmup"] or []).count(n) for n in
                             set(d["threads_end"]) | set(d["threads_warmup"] or [])}
                    changed = {n: f"{c}->{d['threads_end'].count(n)}"
                               for n, c in names.items() if c != d["threads_end"].count(n)}
                    detail += (f"; rank {d['rank']} threads by name, warm-up->end: {changed}"
                               if changed else "")
                    break
        verdict(f"{label} constant after warm-up", ok, detail)

    # Handles and requests.
    maxima = {}
    for d in per_rank:
        for k, v in d["max_after_sync"].items():
            maxima[k] = max(maxima.get(k, v), v)
    missing = [k for k in ZERO_AFTER_SYNC + BOUNDED_AFTER_SYNC if k not in maxima]
    zero_keys = [k for k in ("py_pending",) + ZERO_AFTER_SYNC if k in maxima]
    held_limit = len(streams) * args.sync_period
    ok = all(maxima[k] == 0 for k in zero_keys) and \
        all(maxima[k] <= held_limit for k in BOUNDED_AFTER_SYNC if k in maxima)
    detail = "max after synchronize over all rounds and ranks: " + ", ".join(
        f"{k} {maxima[k]}" for k in zero_keys + [k for k in BOUNDED_AFTER_SYNC if k in maxima])
    if any(k in maxima for k in BOUNDED_AFTER_SYNC):
        detail += f" (rounds_held limit {held_limit})"
    if missing:
        detail += f"; engine does not report {', '.join(missing)}"
    firsts = [f"rank {d['rank']} {k} = {v} after round {r}"
              for d in per_rank for k, (r, v) in d["first_nonzero"].items()]
    if firsts:
        detail += f"; first: {firsts[0]}"
    verdict("no handle or request left after synchronize", ok, detail)

    # Shutdown.
    slowest = max(d["shutdown_s"] for d in per_rank)
    left = {d["rank"]: d["threads_after_shutdown"].count(ENGINE_THREAD) for d in per_rank}
    had = sum(d["threads_end"].count(ENGINE_THREAD) for d in per_rank)
    verdict("engine stops, no engine thread left",
            slowest < SHUTDOWN_LIMIT_S and not any(left.values()),
            f"shutdown max {1e3 * slowest:.1f} ms; '{ENGINE_THREAD}' threads: {had} before, "
            f"{sum(left.values())} after (all ranks)")

    # Figures.
    r0 = per_rank[0]
    loop = r0["loop_time_s"]
    after = loop - r0["warmup_time_s"]
    sums = {k: sum(d["final_stats"].get(k, 0) for d in per_rank)
            for k in r0["final_stats"]}
    figures = {
        "rounds": args.rounds, "streams": len(streams), "loop_time_s": loop,
        "rounds_per_s": args.rounds / loop,
        "rounds_per_s_after_warmup": (args.rounds - args.warmup) / after,
        "stream_rounds_completed_all_ranks": sums.get("rounds_completed"),
        "passive_joins_all_ranks": sums.get("passive_joins"),
        "passive_join_fraction": (sums.get("passive_joins", 0)
                                  / max(1, sums.get("rounds_completed", 0))),
        "staleness_max": max(d["final_stats"].get("staleness_max", 0) for d in per_rank),
        "staleness_mean": sums.get("staleness_sum", 0) / max(1, sums.get("passive_joins", 0)),
        "straggles": sum(d["straggles"] for d in per_rank),
        "rss_growth_after_warmup": growth,
        "engine_counters_all_ranks": sums,
    }
    return {"verdicts": verdicts, "figures": figures,
            "streams": [{"name": s.name, "bytes": s.nbytes, "dtype": s.dtype_name,
                         "inplace": s.inplace} for s in streams],
            "group_size": max(len(g) for phase in hvd.groups(P, args.group_size)
                              for g in phase)}


def print_report(args, P, report, per_rank):
    fig = report["figures"]
    print(f"\nWAGMA soak: P={P}, {args.rounds} rounds, group size "
          f"{report['group_size']}, sync_period {args.sync_period}, averaging "
          f"{args.averaging}, straggler {args.straggle_ms:g} ms/round (seed {args.seed})")
    for s in report["streams"]:
        print(f"  stream {s['name']}: {s['bytes']} B {s['dtype']}"
              f"{' in place' if s['inplace'] else ''}")
    many = P > 8
    head = ["round", "time s"] + (["RSS MB max", "RSS MB min"] if many else
                                  [f"RSS MB r{d['rank']}" for d in per_rank])
    head += ["threads", "fds", "py pend", "eng pend", "queue", "held", "joins"]
    rows = []
    rounds = [s["round"] for s in per_rank[0]["samples"]]
    for i, rnd in enumerate(rounds):
        ss = [d["samples"][i] for d in per_rank]
        rss = [s["rss_kb"] / 1024 for s in ss]
        row = [f"{rnd}{'*' if rnd == args.warmup else ''}", f"{ss[0]['t']:.1f}"]
        row += ([f"{max(rss):.1f}", f"{min(rss):.1f}"] if many else [f"{v:.1f}" for v in rss])

        def span(vals):
            lo, hi = min(vals), max(vals)
            return str(lo) if lo == hi else f"{lo}-{hi}"

        def counter(key):
            vals = [s["stats"].get(key) for s in ss]
            return "-" if any(v is None for v in vals) else span(vals)
        row += [span([s["threads"] for s in ss]), span([s["fds"] for s in ss]),
                span([s["py_pending"] for s in ss]), counter("pending_handles"),
                counter("queue_depth"), counter("rounds_held"),
                str(sum(s["stats"].get("passive_joins", 0) for s in ss))]
        rows.append(row)
    widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(head)]
    print("\nsamples (after the round's synchronize; * = warm-up baseline; a-b = min-max "
          "over ranks; joins = passive joins, all ranks)")
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))

    print("\nverdicts")
    for v in report["verdicts"]:
        mark = {True: "PASS", False: "FAIL", None: "n/a "}[v["ok"]]
        print(f"  {mark}  {v['criterion']}: {v['detail']}")
    print("\nfigures")
    print(f"  rounds/s: {fig['rounds_per_s']:.1f} overall, "
          f"{fig['rounds_per_s_after_warmup']:.1f} after warm-up "
          f"({fig['streams']} streams per round, rank 0 wall time)")
    print(f"  total time of the {fig['rounds']} rounds: {fig['loop_time_s']:.1f} s")
    print(f"  stream rounds completed (all ranks): {fig['stream_rounds_completed_all_ranks']}, "
          f"passive joins: {fig['passive_joins_all_ranks']} "
          f"({100 * fig['passive_join_fraction']:.1f}%), staleness mean "
          f"{fig['staleness_mean']:.2f} max {fig['staleness_max']} rounds; "
          f"straggler sleeps: {fig['straggles']}")
    failed = [v["criterion"] for v in report["verdicts"] if v["ok"] is False]
    print("\nsoak: " + ("all criteria met" if not failed else "FAILED: " + "; ".join(failed)))


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout)
    code = run(args)
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
