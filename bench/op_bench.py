#!/usr/bin/env python
"""Benchmark of one WAGMA group round against MPI_Allreduce and hvd.allreduce.

What is measured
----------------
For every group size S (``--group-sizes``) and message size (``--sizes``, bytes of
float32), the time of one *group round* of ``horovod_wagma.torch.group_allreduce``
next to two baselines over exactly the same group of ranks:

* ``mpi``   -- mpi4py ``Allreduce(SUM)`` on a communicator of the group (one
               ``COMM_WORLD.Split`` per phase), into a preallocated receive buffer;
* ``wagma`` -- ``group_allreduce(..., wait_avoiding=False)``: synchronous group rounds;
* ``wa``    -- ``group_allreduce(..., wait_avoiding=True)`` (the default mode), with all
               ranks calling in lockstep, i.e. no straggler to avoid;
* ``hvd``   -- ``hvd.allreduce(op=hvd.Average)`` on the group's Horovod process set.

How
---
Each WAGMA stream (one per S, size and mode) uses ``sync_period=4096`` (the maximum),
so after its global round 0 (the untimed first warm-up call) every round is a group
round; the k-th group round uses phase k mod L. Every method then runs L untimed
warm-up rounds (one per phase, checked against the exact group sum/average) and the
timed rounds walk the same phase sequence for every method, so each method is timed
over the same groups. The input tensor is reused every round.

A timed block is: ``MPI_Barrier(COMM_WORLD)``, N rounds, per-rank mean time per round,
max over ranks. Methods are interleaved and the block is repeated ``--trials`` times;
the best (smallest) block is reported. N defaults to about 256 MB of payload per
block, clamped to [5, 200] rounds (``--iters`` fixes it).

Bus bandwidth is nccl-tests' allreduce definition with g the group size:
``busbw = bytes * 2 * (g - 1) / g / time``.

Targets (from the issue): WAGMA busbw >= 0.9x MPI from 1 MB up, and latency at most
2x MPI below 1 MB.

Run
---
    python bench/op_bench.py [--np 4] [--sizes 4K,64K,1M,16M,64M] [--group-sizes 2,4]
                             [--iters N] [--trials 3] [--json results.json]

Without an MPI launcher around it the script re-launches itself under
``mpirun -np NP --oversubscribe`` with the environment this machine needs
(run-as-root and ``OMPI_MCA_mpi_yield_when_idle=1``; DESIGN.md section 5). Started by
mpirun directly, it uses the world size it is given. Rank 0 prints the table.
"""
import argparse
import json
import os
import sys
import time

MPIRUN_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}
SYNC_PERIOD = 4096           # horovod_wagma's maximum: only round 4095 would be global
BLOCK_BYTES = 256 << 20      # default payload per timed block
MIN_ITERS, MAX_ITERS = 5, 200
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
        raise argparse.ArgumentTypeError(f"size {text!r} is not a positive multiple of 4 bytes")
    return value


def csv_of(convert):
    return lambda text: [convert(part) for part in text.split(",") if part.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--np", type=int, default=4,
                   help="ranks when the script launches mpirun itself (default 4)")
    p.add_argument("--sizes", type=csv_of(parse_size), default="4K,64K,1M,16M,64M",
                   help="message sizes in bytes, K/M suffixes allowed")
    p.add_argument("--group-sizes", type=csv_of(int), default="2,4",
                   help="WAGMA group sizes S to benchmark (default 2,4)")
    p.add_argument("--iters", type=int, default=None,
                   help="timed rounds per block (default: ~256 MB per block, in [5, 200])")
    p.add_argument("--trials", type=int, default=3,
                   help="timed blocks per method; the best is reported (default 3)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--timeout", type=int, default=600,
                   help="seconds before the self-launched mpirun kills the job")
    args = p.parse_args(argv)
    if any(s < 2 for s in args.group_sizes):
        p.error("group sizes must be >= 2")
    if args.iters is not None and args.iters < 1 or args.trials < 1:
        p.error("--iters and --trials must be >= 1")
    return args


def relaunch_under_mpirun(args):
    """Replaces this process by ``mpirun ... python this_script args``."""
    cmd = ["mpirun", "-np", str(args.np), "--oversubscribe", "--timeout", str(args.timeout),
           sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    print("+ " + " ".join(cmd), flush=True)
    os.execvpe(cmd[0], cmd, dict(os.environ, **MPIRUN_ENV))


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

    def __init__(self, setup, nbytes, rank, methods, hvd=None):
        import torch
        self.hvd, self.setup, self.methods = hvd, setup, methods
        self.x = torch.full((nbytes // 4,), float(rank + 1), dtype=torch.float32)
        self.recv = torch.empty_like(self.x)
        self.x_np, self.recv_np = self.x.numpy(), self.recv.numpy()
        self.tag = f"S{setup.S}.{nbytes}"
        self.k = dict.fromkeys(methods, 0)
        self.last = None
        # Round 0 of each WAGMA stream is global: the first, untimed call.
        for mode in ("wagma", "wa"):
            if mode in methods:
                self._wagma(mode)

    def _wagma(self, mode):
        self.last = self.hvd.group_allreduce(
            self.x, name=f"bench.{mode}.{self.tag}", group_size=self.setup.S,
            sync_period=SYNC_PERIOD, wait_avoiding=(mode == "wa"))

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
            expected = float(sum(r + 1 for r in members))
            if method in ("wagma", "hvd"):
                expected /= len(members)
            got = self.last
            if got[0].item() != expected or not bool((got == got[0]).all()):
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
    """Best block time of every method for every (S, size): {(S, bytes): {method: s}}."""
    rank = comm.Get_rank()
    best = {}
    for setup in setups:
        for nbytes in args.sizes:
            iters = iters_for(nbytes, args)
            runner = Runner(setup, nbytes, rank, methods, hvd)
            for method in methods:
                runner.warm_up_and_check(method)
            cell = best[setup.S, nbytes] = dict.fromkeys(methods, float("inf"))
            for _ in range(args.trials):
                for method in methods:
                    cell[method] = min(cell[method], runner.time_block(method, iters, comm))
            if rank == 0:
                print(f"  {'+'.join(methods)}: S={setup.S} {fmt_size(nbytes)} done "
                      f"({args.trials} x {iters} rounds)", flush=True)
            del runner
    return best


def run(args):
    from mpi4py import MPI
    import torch

    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)

    # 1. The MPI reference, before Horovod's background thread exists.
    from horovod_wagma.common.schedule import groups
    phases_of = {S: groups(P, S) for S in args.group_sizes}
    rounds = (max(iters_for(n, args) for n in args.sizes) * args.trials
              + max(len(phases) for phases in phases_of.values()))
    if rounds > SYNC_PERIOD - 2:  # every timed WAGMA round must be a group round
        raise SystemExit(f"{rounds} group rounds per stream exceed the {SYNC_PERIOD - 2} "
                         "available: lower --iters or --trials")
    setups = [GroupSetup(S, phases_of[S], comm) for S in args.group_sizes]
    best = measure(setups, args, comm, ("mpi",))

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
    with_hvd = measure(setups, args, comm, ("mpi_hvd", "wagma", "wa", "hvd"), hvd)

    results = [make_record(setup.S, setup.g, nbytes, iters_for(nbytes, args),
                           {**best[setup.S, nbytes], **with_hvd[setup.S, nbytes]})
               for setup in setups for nbytes in args.sizes]
    if rank == 0:
        print_table(P, args, phases_of, results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": P, "trials": args.trials, "sync_period": SYNC_PERIOD,
                           "horovod_cycle_time_ms": os.environ.get("HOROVOD_CYCLE_TIME"),
                           "phases": {str(S): v for S, v in phases_of.items()},
                           "results": results}, f, indent=2)
            print(f"wrote {args.json}")
    for setup in setups:
        for c in setup.comms:
            c.Free()
    comm.Barrier()


# -- reporting ------------------------------------------------------------------------
def busbw(nbytes, g, seconds):
    return nbytes * 2.0 * (g - 1) / g / seconds


def make_record(S, g, nbytes, iters, times):
    rec = {"group_size": S, "g": g, "bytes": nbytes, "iters": iters, "methods": {},
           "ratios": {}}
    for m, t in times.items():
        rec["methods"][m] = {"time_s": t, "latency_us": t * 1e6,
                             "busbw_GBps": busbw(nbytes, g, t) / 1e9}
    for m in ("wagma", "wa", "hvd"):
        rec["ratios"][f"{m}_bw_over_mpi"] = times["mpi"] / times[m]
        rec["ratios"][f"{m}_lat_over_mpi"] = times[m] / times["mpi"]
        rec["ratios"][f"{m}_lat_over_mpi_hvd"] = times[m] / times["mpi_hvd"]
    if nbytes >= SMALL_LIMIT:
        rec["target"] = f"bw >= {BW_TARGET}x"
        rec["meets_target"] = rec["ratios"]["wagma_bw_over_mpi"] >= BW_TARGET
    else:
        rec["target"] = f"lat <= {LAT_TARGET}x"
        rec["meets_target"] = rec["ratios"]["wagma_lat_over_mpi"] <= LAT_TARGET
    return rec


def fmt_size(nbytes):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def fmt_us(seconds):
    us = seconds * 1e6
    return f"{us:.1f}" if us < 1000 else f"{us:.0f}"


TABLE_COLUMNS = [("size", 5), ("rounds", 6), ("mpi lat", 8), ("mpi bw", 6),
                 ("mpi+hvd", 8), ("wagma lat", 9), ("wagma bw", 8), ("bw/mpi", 6),
                 ("lat/mpi", 7), ("wa lat", 8), ("lat/mpi", 7), ("hvd lat", 8),
                 ("hvd bw", 6), ("bw/mpi", 6), ("lat/mpi", 7), ("target", 16)]


def table_row(r):
    m, q = r["methods"], r["ratios"]
    verdict = ("ok " if r["meets_target"] else "MISS ") + r["target"]
    return [fmt_size(r["bytes"]), r["iters"],
            fmt_us(m["mpi"]["time_s"]), f"{m['mpi']['busbw_GBps']:.2f}",
            fmt_us(m["mpi_hvd"]["time_s"]),
            fmt_us(m["wagma"]["time_s"]), f"{m['wagma']['busbw_GBps']:.2f}",
            f"{q['wagma_bw_over_mpi']:.2f}", f"{q['wagma_lat_over_mpi']:.2f}",
            fmt_us(m["wa"]["time_s"]), f"{q['wa_lat_over_mpi']:.2f}",
            fmt_us(m["hvd"]["time_s"]), f"{m['hvd']['busbw_GBps']:.2f}",
            f"{q['hvd_bw_over_mpi']:.2f}", f"{q['hvd_lat_over_mpi']:.2f}", verdict]


def print_table(P, args, phases_of, results):
    print(f"""
One WAGMA group round vs MPI_Allreduce vs hvd.allreduce: P={P}, float32, max over ranks
of the mean time per round, best of {args.trials} blocks.
  lat: microseconds per round; bw: bus bandwidth in GB/s = bytes * 2(g-1)/g / time
  mpi: mpi4py Allreduce on the group's communicator, measured before hvd.init
  mpi+hvd: the same, measured while Horovod's background thread runs (latency)
  wagma: group_allreduce(wait_avoiding=False); wa: wait_avoiding=True (no straggler)
  hvd: hvd.allreduce(op=Average) on the group's process set
  ratios are x/mpi; the target verdict compares wagma with mpi""")
    header = "  ".join(name.rjust(w) for name, w in TABLE_COLUMNS)
    for S in args.group_sizes:
        phases = phases_of[S]
        print(f"\nS={S}, {len(phases)} phase(s): " + "  ".join(str(p) for p in phases))
        print(header)
        print("-" * len(header))
        for r in results:
            if r["group_size"] == S:
                print("  ".join(str(c).rjust(w)
                                for c, (_, w) in zip(table_row(r), TABLE_COLUMNS)))
    misses = [r for r in results if not r["meets_target"]]
    print(f"\ntargets: WAGMA bw >= {BW_TARGET}x MPI from {fmt_size(SMALL_LIMIT)} up, "
          f"latency <= {LAT_TARGET}x MPI below: "
          + ("all met" if not misses else
             "missed at " + ", ".join(f"S={r['group_size']} {fmt_size(r['bytes'])}"
                                      for r in misses)))


def main():
    args = parse_args()
    if "OMPI_COMM_WORLD_SIZE" not in os.environ and "PMI_SIZE" not in os.environ:
        relaunch_under_mpirun(args)
    run(args)


if __name__ == "__main__":
    main()
