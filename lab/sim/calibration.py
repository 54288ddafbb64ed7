"""The model's constants, read from the benchmarks' output files.

Each constant names the file and field it came from (``Calibration.sources``):

* C: os.cpu_count() (``--cores`` overrides).
* B: lab/calibration/op_bench_P*.json, results[].methods.{mpi,mpi_hvd}.time_s at the
  largest message size, mean over the file's group sizes; a run at P ranks uses the
  file nearest in ranks (as for the round times). Horovod's background threads cycle
  every 1 ms on every rank even when idle: an MPI allreduce slows from T_mpi to
  T_mpi+hvd once they run, so B = C (1 - T_mpi / T_mpi+hvd), and C_eff = C - B cores
  are left to the training loops and engines.
* T(method, g, n): lab/calibration/op_bench_P*.json, results[].methods.<m>.time_s
  (wa: WAGMA group rounds and wait-avoiding global rounds; wagma at g = P: blocking
  global rounds; hvd at g = P: Horovod's allreduce; mpi_hvd at g = P: local SGD's gloo
  allreduce, which op_bench does not time); linear in the message size and in log2 of
  the group size g between measured points. op_bench measured it with P_b ranks all in
  rounds on the same cores, so the CPU work per member of one round is T de-contended:
  w = T * min(1, C_eff / P_b).
* w_app(method): lab/calibration/imbalance_*_P*.json, runs.<method>[]
  .thread_cpu_ms_per_rank_step.main, the median over every file and trial: the CPU
  time of the training loop's thread per step (forward, backward, optimizer step,
  fusion-buffer packing, the op call). One constant per method, shared by every
  pattern and P. Horovod's loop polls while it waits in synchronize() (its main-thread
  CPU grows with the wait: 1.7 ms per step at P=16, 8.7 ms at P=8 under random
  delays), so Horovod and D-PSGD take local SGD's. These are the only inputs taken
  from the files that are validated against; samples/s and wall times never are.

The multihost links come from multihost_throughput.json (network.py). Horovod's
collective on them, where measured: op_bench_multihost_<scenario>.json,
results[g = P].methods.hvd.time_s (``read_horovod_across_hosts``). The datacenter
constants are flags.
"""
import bisect
import dataclasses
import glob
import math
import os
import statistics
from typing import Dict, List

from .common import CALIBRATION_DIR, ROOT, CalibrationError, interp_bytes, load_json, measured_runs


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
            return interp_bytes(by_g[g if g in by_g else gs[0]], nbytes)
        x = math.log2(g)
        i = bisect.bisect_left(gs, g)
        lo, hi = (gs[i - 1], gs[i]) if 0 < i < len(gs) else \
            (gs[0], gs[1]) if i == 0 else (gs[-2], gs[-1])
        ylo, yhi = interp_bytes(by_g[lo], nbytes), interp_bytes(by_g[hi], nbytes)
        y = ylo + (yhi - ylo) * (x - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
        nearest = ylo if abs(x - math.log2(lo)) < abs(x - math.log2(hi)) else yhi
        return y if 0 < i < len(gs) else max(y, nearest)


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


def read_op_bench(paths):
    """OpTable from op_bench JSON files (bench/op_bench.py --json)."""
    if not paths:
        raise CalibrationError(
            f"no op_bench results in {CALIBRATION_DIR}: run e.g. python bench/op_bench.py "
            "--np 8 --sizes 4K,256K,1M --group-sizes 2,4,8 --json "
            "lab/calibration/op_bench_P8.json")
    table, files = {}, {}
    for path in paths:
        d = load_json(path)
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


def read_horovod_across_hosts(path, P):
    """[(bytes, seconds)] of Horovod's allreduce over all P ranks, measured alone across
    emulated hosts (op_bench_multihost_<scenario>.json, written by
    lab/multihost_throughput.py: results[g = P].methods.hvd.time_s); None when the
    file does not exist."""
    if not os.path.exists(path):
        return None
    d = load_json(path)
    try:
        if int(d["ranks"]) != P:
            raise CalibrationError(f"{path}: {d['ranks']} ranks, the scenario has {P}")
        pts = sorted((int(r["bytes"]), float(r["methods"]["hvd"]["time_s"]))
                     for r in d["results"] if int(r["g"]) == P)
    except (KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"{path}: not an op_bench result with an hvd column "
                               f"(results[].g/bytes/methods.hvd.time_s): {e!r}") from None
    if not pts:
        raise CalibrationError(f"{path}: no result over all {P} ranks (g = {P})")
    return pts


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
        d = load_json(path)
        for m in set(APP_CPU_FROM.values()):
            for rec in measured_runs(d, m):
                try:
                    v = float(rec["thread_cpu_ms_per_rank_step"]["main"]) / 1e3
                except (KeyError, TypeError, ValueError):
                    raise CalibrationError(f"{path}: runs.{m}[] lacks "
                                           "thread_cpu_ms_per_rank_step.main") from None
                vals.setdefault(m, []).append(v)
    missing = sorted(set(APP_CPU_FROM.values()) - set(vals))
    if missing:
        raise CalibrationError(f"no imbalance result with a {'/'.join(missing)} run "
                               "(lab/calibration/imbalance_*_P*.json): run bench/imbalance.py and copy its JSON there")
    return ({m: statistics.median(vals[src]) for m, src in APP_CPU_FROM.items()},
            {m: len(v) for m, v in vals.items()})


def read_calibration(results_dir=CALIBRATION_DIR, cores=None):
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
