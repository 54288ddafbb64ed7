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

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
for _p in (BENCH, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import harness  # noqa: E402  (bench/harness.py: BATCH, compute_schedule, ideals)

BATCH = harness.BATCH
RESULTS_DIR = harness.RESULTS_DIR
MODEL_BYTES = ((128 + 1) * 512 + (512 + 1) * 10) * 4   # bench/imbalance.py's MLP
MEASURED = ("horovod", "localsgd", "wagma", "wagma_wa")
METHODS = MEASURED + ("dpsgd",)
LABELS = dict(harness.LABELS, dpsgd="D-PSGD (ring)", lockstep="sync every step")


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
