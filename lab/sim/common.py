"""What every part of the simulator shares: paths, the benchmark's constants, the
method names and labels, and the error for bad calibration files.

Per step each rank processes BATCH = 16 samples (bench/harness.py); the model it
averages is bench/imbalance.py's MLP, MODEL_BYTES = ((128 + 1) 512 + (512 + 1) 10)
float32s = 278 KB.
"""
import bisect
import json
import os
import sys

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(LAB)
BENCH = os.path.join(ROOT, "bench")
for _p in (BENCH, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import harness  # noqa: E402  (bench/harness.py: BATCH, compute_schedule, ideals)

BATCH = harness.BATCH
# Inputs: measured files, committed; `make bench` writes to bench/results/, never here.
CALIBRATION_DIR = os.path.join(LAB, "calibration")
RESULTS_DIR = os.path.join(LAB, "results")     # what the simulator writes
MODEL_BYTES = ((128 + 1) * 512 + (512 + 1) * 10) * 4   # bench/imbalance.py's MLP
MEASURED = ("horovod", "localsgd", "wagma", "wagma_wa")
METHODS = MEASURED + ("dpsgd",)
LABELS = {"horovod": "Horovod", "localsgd": "local SGD", "wagma": "WAGMA",
          "wagma_wa": "WAGMA wa-global", "dpsgd": "D-PSGD (ring)",
          "lockstep": "sync every step", "no_wait": "no-wait ideal",
          "ideal": "ideal (global rounds)"}
COLORS = {"horovod": "tab:gray", "localsgd": "tab:orange", "wagma": "tab:blue",
          "wagma_wa": "tab:green"}
# The simulator's method names and bench/imbalance.py's method specs: results written
# since the benchmarks took one method syntax name their runs by spec.
SPEC_OF = {"horovod": "horovod", "localsgd": "localsgd", "wagma": "wagma:rounds=blocking",
           "wagma_wa": "wagma:rounds=wa"}


def measured_runs(d, method):
    """The trials of ``method`` in an imbalance result file, under either naming."""
    runs = d.get("runs", {})
    return runs.get(method) or runs.get(SPEC_OF.get(method), [])


class CalibrationError(RuntimeError):
    """A calibration file is missing or does not have the fields the model needs."""


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CalibrationError(f"calibration file {path} is missing") from None
    except (OSError, ValueError) as e:
        raise CalibrationError(f"calibration file {path} is unreadable: {e}") from None


def interp_bytes(points, nbytes):
    """Seconds at ``nbytes`` from measured [(bytes, seconds)] (sorted by bytes): linear
    between points and beyond the last two; the first point's value below it."""
    xs = [b for b, _ in points]
    ys = [t for _, t in points]
    if len(xs) == 1 or nbytes <= xs[0]:
        return ys[0]
    i = min(bisect.bisect_left(xs, nbytes), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return max(0.0, y0 + (y1 - y0) * (nbytes - x0) / (x1 - x0))
