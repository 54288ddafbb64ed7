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
METHODS = ("mpi", "wagma", "wa", "hvd")
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
    """This rank's group, MPI communicator and Horovod process set in every phase of S."""

    def __init__(self, S, phases, comm, process_sets, hvd):
        self.S = S
        self.phases = phases
        self.members, self.comms, self.process_sets = [], [], []
        rank = comm.Get_rank()
        for phase in phases:
            index = next(i for i, g in enumerate(phase) if rank in g)
            members = phase[index]
            self.members.append(members)
            self.comms.append(comm.Split(color=index, key=rank))
            self.process_sets.append(hvd.global_process_set if len(members) == comm.Get_size()
                                     else process_sets[tuple(members)])

    @property
    def num_phases(self):
        return len(self.phases)

    @property
    def g(self):
        """Group size used for bus bandwidth (groups of one phase may differ by one)."""
        return max(len(m) for m in self.members)

    def free(self):
        for c in self.comms:
            c.Free()


class Runner:
    """One (S, size) cell: a round function per method, each with its own round counter
    so that every method walks the phases 0, 1, ..., L-1, 0, ... identically."""

    def __init__(self, hvd, torch, setup, nbytes, rank):
        self.hvd, self.setup = hvd, setup
        n = nbytes // 4
        self.x = torch.full((n,), float(rank + 1), dtype=torch.float32)
        self.recv = torch.empty_like(self.x)
        self.x_np, self.recv_np = self.x.numpy(), self.recv.numpy()
        self.tag = f"S{setup.S}.{nbytes}"
        self.k = dict.fromkeys(METHODS, 0)
        self.last = None
        # Round 0 of each WAGMA stream is global: the first, untimed call.
        for mode in ("wagma", "wa"):
            self._wagma(mode)
            self.k[mode] = 0

    def _wagma(self, mode):
        self.last = self.hvd.group_allreduce(
            self.x, name=f"bench.{mode}.{self.tag}", group_size=self.setup.S,
            sync_period=SYNC_PERIOD, wait_avoiding=(mode == "wa"))

    def round(self, method):
        phase = self.k[method] % self.setup.num_phases
        self.k[method] += 1
        if method == "mpi":
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
            members = self.setup.members[phase]
            expected = float(sum(r + 1 for r in members))
            if method != "mpi":
                expected /= len(members)
            if method == "wa":
                continue  # a passive join may contribute an older published value
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


def busbw(nbytes, g, seconds):
    return nbytes * 2.0 * (g - 1) / g / seconds


def run(args):
    from mpi4py import MPI
    import torch
    import horovod_wagma.torch as hvd

    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)

    # Every group of every phase of every S, as static Horovod process sets (hvd.init only
    # registers the groups of the init group size by itself).
    phases_of = {S: hvd.groups(P, S) for S in args.group_sizes}
    process_sets = {}
    for phases in phases_of.values():
        for phase in phases:
            for members in phase:
                if len(members) < P and tuple(members) not in process_sets:
                    process_sets[tuple(members)] = hvd.ProcessSet(list(members))
    hvd.init(group_size=args.group_sizes[0], sync_period=SYNC_PERIOD,
             process_sets=list(process_sets.values()))

    results = []
    for S in args.group_sizes:
        setup = GroupSetup(S, phases_of[S], comm, process_sets, hvd)
        for nbytes in args.sizes:
            iters = iters_for(nbytes, args)
            needed = setup.num_phases + args.trials * iters
            if needed > SYNC_PERIOD - 2:
                raise SystemExit(f"{needed} group rounds per stream exceed the "
                                 f"{SYNC_PERIOD - 2} available: lower --iters or --trials")
            runner = Runner(hvd, torch, setup, nbytes, rank)
            for method in METHODS:
                runner.warm_up_and_check(method)
            best = dict.fromkeys(METHODS, float("inf"))
            for _ in range(args.trials):
                for method in METHODS:
                    best[method] = min(best[method], runner.time_block(method, iters, comm))
            results.append(make_record(S, setup, nbytes, iters, best))
            if rank == 0:
                print(f"  done S={S} {fmt_size(nbytes)} ({iters} rounds x {args.trials})",
                      flush=True)
            del runner
        setup.free()

    if rank == 0:
        print_table(P, args, phases_of, results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": P, "trials": args.trials, "sync_period": SYNC_PERIOD,
                           "phases": {str(S): v for S, v in phases_of.items()},
                           "results": results}, f, indent=2)
            print(f"wrote {args.json}")
    comm.Barrier()


# -- reporting ------------------------------------------------------------------------
def make_record(S, setup, nbytes, iters, best):
    g = setup.g
    rec = {"group_size": S, "g": g, "bytes": nbytes, "iters": iters, "methods": {}}
    for m, t in best.items():
        rec["methods"][m] = {"time_s": t, "latency_us": t * 1e6,
                             "busbw_GBps": busbw(nbytes, g, t) / 1e9}
    mpi = best["mpi"]
    rec["ratios"] = {}
    for m in ("wagma", "wa", "hvd"):
        rec["ratios"][f"{m}_bw_over_mpi"] = mpi / best[m]
        rec["ratios"][f"{m}_lat_over_mpi"] = best[m] / mpi
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


def print_table(P, args, phases_of, results):
    print(f"\nWAGMA group round vs MPI_Allreduce vs hvd.allreduce: P={P}, float32, "
          f"best of {args.trials} blocks, max over ranks of mean per round")
    print("lat = microseconds per round; bw = bus bandwidth GB/s = bytes*2(g-1)/g/time")
    print("wagma = wait_avoiding=False, wa = wait_avoiding=True (no straggler), "
          "ratios are x/MPI")
    cols = [("size", 6), ("rounds", 6),
            ("mpi lat", 9), ("mpi bw", 7),
            ("wagma lat", 9), ("wagma bw", 8), ("bw/mpi", 6), ("lat/mpi", 7),
            ("wa lat", 9), ("lat/mpi", 7),
            ("hvd lat", 9), ("hvd bw", 7), ("bw/mpi", 6), ("lat/mpi", 7),
            ("target", 14)]
    header = "  ".join(name.rjust(w) for name, w in cols)
    for S in args.group_sizes:
        phases = phases_of[S]
        print(f"\nS={S}: {len(phases)} phase(s): "
              + "  ".join(str(p) for p in phases))
        print(header)
        print("-" * len(header))
        for r in (r for r in results if r["group_size"] == S):
            m, q = r["methods"], r["ratios"]
            verdict = ("ok " if r["meets_target"] else "MISS ") + r["target"]
            cells = [fmt_size(r["bytes"]), r["iters"],
                     f"{m['mpi']['latency_us']:.1f}", f"{m['mpi']['busbw_GBps']:.2f}",
                     f"{m['wagma']['latency_us']:.1f}", f"{m['wagma']['busbw_GBps']:.2f}",
                     f"{q['wagma_bw_over_mpi']:.2f}", f"{q['wagma_lat_over_mpi']:.2f}",
                     f"{m['wa']['latency_us']:.1f}", f"{q['wa_lat_over_mpi']:.2f}",
                     f"{m['hvd']['latency_us']:.1f}", f"{m['hvd']['busbw_GBps']:.2f}",
                     f"{q['hvd_bw_over_mpi']:.2f}", f"{q['hvd_lat_over_mpi']:.2f}",
                     verdict]
            print("  ".join(str(c).rjust(w) for c, (_, w) in zip(cells, cols)))
    misses = [r for r in results if not r["meets_target"]]
    print(f"\ntargets: WAGMA bw >= {BW_TARGET}x MPI from {fmt_size(SMALL_LIMIT)} up, "
          f"latency <= {LAT_TARGET}x MPI below; "
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
