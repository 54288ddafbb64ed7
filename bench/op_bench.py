#!/usr/bin/env python
"""Benchmark of one WAGMA group round against MPI_Allreduce and hvd.allreduce.

Per group size S and message size, one group round of
``horovod_wagma.torch.group_allreduce`` and its baselines (``mpi``, ``mpi_hvd``,
``wagma``, ``wa``, ``inplace``, ``hvd``) over the same groups of ranks: latency and bus
bandwidth, against the targets (WAGMA busbw >= 0.9x MPI's from 1 MB up, latency at most
2x MPI's below). What each column is, how rounds and blocks are timed:
docs/benchmarks.md, "One group round".

    python bench/op_bench.py [--np 4] [--sizes 4K,64K,1M,16M,64M] [--group-sizes 2,4]
        [--iters N] [--trials 3] [--methods mpi_hvd wagma wa inplace hvd] [--json PATH]

Rank 0 prints the table.
"""
import argparse
import os
import time

import harness
from table import print_table

SYNC_PERIOD = 4096           # horovod_wagma's maximum: only round 4095 would be global
BLOCK_BYTES = 256 << 20      # default payload per timed block
MIN_ITERS, MAX_ITERS = 5, 200
AFTER_INIT = ("mpi_hvd", "wagma", "wa", "inplace", "hvd")  # methods timed once Horovod runs
SMALL_LIMIT = 1 << 20        # below: latency target; from here up: bandwidth target
BW_TARGET, LAT_TARGET = 0.9, 2.0
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


# -- command line ---------------------------------------------------------------------
def parse_size(text):
    """'4K' -> 4096, '64M' -> 67108864, '1000' -> 1000 (bytes; multiple of 4)."""
    text = text.strip().upper().removesuffix("B")
    scale = UNITS.get(text[-1:], 1)
    value = int(text[:-1] if text[-1:] in UNITS else text) * scale
    if value < 4 or value % 4:
        raise argparse.ArgumentTypeError(f"size {text!r} is not a positive multiple of 4")
    return value


def csv_of(convert):
    return lambda text: [convert(part) for part in text.split(",") if part.strip()]


def parse_args(argv=None):
    p = harness.parser(__doc__, np=4, timeout=600)
    p.add_argument("--sizes", type=csv_of(parse_size), default="4K,64K,1M,16M,64M",
                   help="message sizes in bytes, K/M suffixes allowed")
    p.add_argument("--group-sizes", type=csv_of(int), default="2,4",
                   help="WAGMA group sizes S to benchmark (default 2,4)")
    p.add_argument("--iters", type=int, default=None,
                   help="timed rounds per block (default: ~256 MB per block, in [5, 200])")
    p.add_argument("--trials", type=int, default=3,
                   help="timed blocks per method; the best is reported (default 3)")
    p.add_argument("--methods", nargs="+", choices=AFTER_INIT, default=list(AFTER_INIT),
                   help="the op's variants timed after hvd.init (default: all); mpi "
                        "(before hvd.init) is always timed")
    harness.add_outputs(p, plot=False)
    args = p.parse_args(argv)
    if any(s < 2 for s in args.group_sizes):
        p.error("group sizes must be >= 2")
    if args.iters is not None and args.iters < 1 or args.trials < 1:
        p.error("--iters and --trials must be >= 1")
    args.methods = [m for m in AFTER_INIT if m in args.methods]
    return args


def iters_for(nbytes, args):
    if args.iters is not None:
        return args.iters
    return max(MIN_ITERS, min(MAX_ITERS, BLOCK_BYTES // nbytes))


# -- the benchmark --------------------------------------------------------------------
class GroupSetup:
    """This rank's group and MPI communicator in every phase of S (built before
    hvd.init) and, once Horovod runs, its Horovod process set in every phase."""

    def __init__(self, S, phases, comm):
        self.S = S
        self.phases = phases
        self.members, self.comms, self.process_sets = [], [], []
        rank = comm.Get_rank()
        for phase in phases:
            index = next(i for i, g in enumerate(phase) if rank in g)
            self.members.append(phase[index])
            self.comms.append(comm.Split(color=index, key=rank))

    def attach_process_sets(self, hvd, process_sets):
        self.process_sets = [hvd.global_process_set if len(m) == hvd.size()
                             else process_sets[tuple(m)] for m in self.members]

    @property
    def num_phases(self):
        return len(self.phases)

    @property
    def g(self):
        """Group size used for bus bandwidth (groups of one phase may differ by one)."""
        return max(len(m) for m in self.members)


class Runner:
    """One (S, size) cell: a round function per method, each with its own round counter
    so that every method walks the phases 0, 1, ..., L-1, 0, ... identically."""

    def __init__(self, setup, nbytes, rank, size, methods, hvd=None):
        import torch
        self.hvd, self.setup, self.rank = hvd, setup, rank
        self.x = torch.full((nbytes // 4,), float(rank + 1), dtype=torch.float32)
        self.recv = torch.empty_like(self.x)
        self.x_np, self.recv_np = self.x.numpy(), self.recv.numpy()
        self.tag = f"S{setup.S}.{nbytes}"
        self.k = dict.fromkeys(methods, 0)
        self.last = None
        # Round 0 of each WAGMA stream is global: the first, untimed call.
        for method in ("wagma", "wa"):
            if method in methods:
                self._wagma(method)
        if "inplace" in methods:
            # The in-place stream averages its own tensor round after round (gossip);
            # `values` tracks every rank's value to check the warm-up rounds.
            self.xi = self.x.clone()
            self._wagma("inplace")
            self.xi.fill_(rank + 1)
            self.values = [float(r + 1) for r in range(size)]

    def _wagma(self, method):
        kwargs = dict(name=f"bench.{method}.{self.tag}", group_size=self.setup.S,
                      sync_period=SYNC_PERIOD, wait_avoiding=(method == "wa"))
        if method == "inplace":
            self.last = self.hvd.group_allreduce_(self.xi, **kwargs)
        else:
            self.last = self.hvd.group_allreduce(self.x, **kwargs)

    def round(self, method):
        phase = self.k[method] % self.setup.num_phases
        self.k[method] += 1
        if method in ("mpi", "mpi_hvd"):
            from mpi4py import MPI
            self.setup.comms[phase].Allreduce(self.x_np, self.recv_np, op=MPI.SUM)
            self.last = self.recv
        elif method == "hvd":
            self.last = self.hvd.allreduce(self.x, op=self.hvd.Average,
                                           name=f"bench.hvd.{self.tag}.p{phase}",
                                           process_set=self.setup.process_sets[phase])
        else:
            self._wagma(method)
        return phase

    def warm_up_and_check(self, method):
        """One untimed round per phase; raises if a result is not the exact group value."""
        for _ in range(self.setup.num_phases):
            phase = self.round(method)
            if method == "wa":
                continue  # a passive join may contribute an older published value
            members = self.setup.members[phase]
            if method == "inplace":
                for group in self.setup.phases[phase]:
                    mean = sum(self.values[r] for r in group) / len(group)
                    for r in group:
                        self.values[r] = mean
                expected, tol = self.values[self.rank], 1e-6 * self.values[self.rank]
            else:
                expected, tol = float(sum(r + 1 for r in members)), 0.0
                if method != "mpi" and method != "mpi_hvd":
                    expected /= len(members)
            got = self.last
            if abs(got[0].item() - expected) > tol or not bool((got == got[0]).all()):
                raise RuntimeError(f"{method} S={self.setup.S} phase {phase}: got "
                                   f"{got[0].item()}, expected {expected}")

    def time_block(self, method, iters, comm):
        from mpi4py import MPI
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            self.round(method)
        mean = (time.perf_counter() - t0) / iters
        return comm.allreduce(mean, op=MPI.MAX)


def measure(setups, args, comm, methods, hvd=None):
    """Block times of every method for every (S, size): {(S, bytes): {method: [s]}}."""
    rank = comm.Get_rank()
    times = {}
    for setup in setups:
        for nbytes in args.sizes:
            iters = iters_for(nbytes, args)
            runner = Runner(setup, nbytes, rank, comm.Get_size(), methods, hvd)
            for method in methods:
                runner.warm_up_and_check(method)
            cell = times[setup.S, nbytes] = {m: [] for m in methods}
            for _ in range(args.trials):
                for method in methods:
                    cell[method].append(runner.time_block(method, iters, comm))
            if rank == 0:
                print(f"  {'+'.join(methods)}: S={setup.S} {fmt_size(nbytes)} done "
                      f"({args.trials} x {iters} rounds)", flush=True)
            del runner
    return times


def run(args):
    from mpi4py import MPI
    import torch

    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)

    # 1. The MPI reference, before Horovod's background thread exists.
    from horovod_wagma.common.op.schedule import groups
    phases_of = {S: groups(P, S) for S in args.group_sizes}
    rounds = (max(iters_for(n, args) for n in args.sizes) * args.trials
              + max(len(phases) for phases in phases_of.values()))
    if rounds > SYNC_PERIOD - 2:  # every timed WAGMA round must be a group round
        raise SystemExit(f"{rounds} group rounds per stream exceed the {SYNC_PERIOD - 2} "
                         "available: lower --iters or --trials")
    setups = [GroupSetup(S, phases_of[S], comm) for S in args.group_sizes]
    before_hvd = measure(setups, args, comm, ("mpi",))

    # 2. Horovod + WAGMA. Every group of every phase of every S becomes a static Horovod
    # process set (hvd.init only registers the groups of its own group size).
    import horovod_wagma.torch as hvd
    process_sets = {}
    for phases in phases_of.values():
        for phase in phases:
            for members in phase:
                if len(members) < P and tuple(members) not in process_sets:
                    process_sets[tuple(members)] = hvd.ProcessSet(list(members))
    hvd.init(group_size=args.group_sizes[0], sync_period=SYNC_PERIOD,
             process_sets=list(process_sets.values()))
    for setup in setups:
        setup.attach_process_sets(hvd, process_sets)
    with_hvd = measure(setups, args, comm, args.methods, hvd)

    results = [make_record(setup.S, setup.g, nbytes, iters_for(nbytes, args),
                           {**before_hvd[setup.S, nbytes], **with_hvd[setup.S, nbytes]})
               for setup in setups for nbytes in args.sizes]
    if rank == 0:
        print_report(P, args, phases_of, results)
        harness.write_json(harness.output_path(args.json, f"op_bench_P{P}.json"), {
            "ranks": P, "trials": args.trials, "sync_period": SYNC_PERIOD,
            "horovod_cycle_time_ms": os.environ.get("HOROVOD_CYCLE_TIME"),
            "phases": {str(S): v for S, v in phases_of.items()}, "results": results}, 2)
    for setup in setups:
        for c in setup.comms:
            c.Free()
    comm.Barrier()


# -- reporting ------------------------------------------------------------------------
def busbw(nbytes, g, seconds):
    return nbytes * 2.0 * (g - 1) / g / seconds


def make_record(S, g, nbytes, iters, times):
    """Best block time, latency and bus bandwidth per method, plus the ratios to MPI."""
    rec = {"group_size": S, "g": g, "bytes": nbytes, "iters": iters, "methods": {},
           "ratios": {}}
    for m, trials in times.items():
        t = min(trials)
        rec["methods"][m] = {"time_s": t, "latency_us": t * 1e6,
                             "busbw_GBps": busbw(nbytes, g, t) / 1e9,
                             "trial_times_s": trials}
    best = {m: rec["methods"][m]["time_s"] for m in times}
    for m in best:
        if m in ("mpi", "mpi_hvd"):
            continue
        rec["ratios"][f"{m}_bw_over_mpi"] = best["mpi"] / best[m]
        rec["ratios"][f"{m}_lat_over_mpi"] = best[m] / best["mpi"]
        if "mpi_hvd" in best:
            rec["ratios"][f"{m}_lat_over_mpi_hvd"] = best[m] / best["mpi_hvd"]
    if nbytes >= SMALL_LIMIT:
        rec["target"] = f"bw >= {BW_TARGET}x"
        ratio = rec["ratios"].get("wagma_bw_over_mpi")
        rec["meets_target"] = None if ratio is None else ratio >= BW_TARGET
    else:
        rec["target"] = f"lat <= {LAT_TARGET}x"
        ratio = rec["ratios"].get("wagma_lat_over_mpi")
        rec["meets_target"] = None if ratio is None else ratio <= LAT_TARGET
    return rec


def fmt_size(nbytes):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def fmt_us(seconds):
    us = seconds * 1e6
    return f"{us:.1f}" if us < 1000 else f"{us:.0f}"


# Per method, the table shows: lat, then the listed extras (bw: bus bandwidth; bw/mpi,
# lat/mpi: ratios to the MPI reference; lat/m+h: latency ratio to mpi_hvd).
TABLE_EXTRAS = {
    "mpi": ("bw",),
    "mpi_hvd": (),
    "wagma": ("bw", "bw/mpi", "lat/mpi", "lat/m+h"),
    "wa": ("lat/mpi",),
    "inplace": ("bw", "lat/mpi"),
    "hvd": ("bw", "bw/mpi", "lat/mpi"),
}
LABELS = {"mpi_hvd": "mpi+hvd", "inplace": "in-place"}


def table_columns(methods):
    """(header, cell function) pairs: per method its latency, then its extras."""
    ratio_keys = {"bw/mpi": "bw_over_mpi", "lat/mpi": "lat_over_mpi",
                  "lat/m+h": "lat_over_mpi_hvd"}
    cols = [("size", lambda r: fmt_size(r["bytes"])), ("rounds", lambda r: r["iters"])]
    for m in methods:
        label = LABELS.get(m, m)
        cols.append((f"{label} lat", lambda r, m=m: fmt_us(r["methods"][m]["time_s"])))
        for extra in TABLE_EXTRAS[m]:
            if extra == "bw":
                cols.append((f"{label} bw",
                             lambda r, m=m: f"{r['methods'][m]['busbw_GBps']:.2f}"))
            else:
                cols.append((extra, lambda r, k=f"{m}_{ratio_keys[extra]}":
                             f"{r['ratios'][k]:.2f}" if k in r["ratios"] else "-"))
    verdicts = {True: "ok ", False: "MISS ", None: "n/a "}
    cols.append(("target", lambda r: verdicts[r["meets_target"]] + r["target"]))
    return cols


def print_report(P, args, phases_of, results):
    methods = ["mpi"] + args.methods
    print(f"""
One WAGMA group round vs MPI_Allreduce vs hvd.allreduce: P={P}, float32, max over ranks
of the mean time per round, best of {args.trials} blocks.
  lat: microseconds per round; bw: bus bandwidth in GB/s = bytes * 2(g-1)/g / time
  mpi: mpi4py Allreduce on the group's communicator, measured before hvd.init
  mpi+hvd: the same, measured while Horovod's background thread runs
  wagma: group_allreduce(wait_avoiding=False); wa: wait_avoiding=True (no straggler)
  in-place: group_allreduce_(wait_avoiding=False), no output allocation
  hvd: hvd.allreduce(op=Average) on the group's process set
  ratios are x/mpi (lat/m+h: wagma over mpi+hvd); the target compares wagma with mpi""")
    cols = table_columns(methods)
    for S in args.group_sizes:
        phases = phases_of[S]
        print(f"\nS={S}, {len(phases)} phase(s): " + "  ".join(str(p) for p in phases))
        print_table([[name for name, _ in cols]] + [[f(r) for _, f in cols] for r in results
                                                    if r["group_size"] == S], notes=False)
    misses = [r for r in results if r["meets_target"] is False]
    print(f"\ntargets: WAGMA bw >= {BW_TARGET}x MPI from {fmt_size(SMALL_LIMIT)} up, "
          f"latency <= {LAT_TARGET}x MPI below: "
          + ("all met" if not misses else
             "missed at " + ", ".join(f"S={r['group_size']} {fmt_size(r['bytes'])}"
                                      for r in misses)))


if __name__ == "__main__":
    harness.launch(__file__, parse_args(), run)
