"""Helpers for worker scripts run under mpirun by the tests."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def emit(rank, **payload):
    """Writes this rank's result for the test to read (a file per rank: mpirun may
    interleave the ranks' stdout mid-line)."""
    path = os.path.join(os.environ["WAGMA_TEST_RESULTS"], f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(dict(rank=rank, **payload), f)
    os.replace(path + ".tmp", path)


def capture(out, key, fn):
    """Runs fn() and records into out[key] its error (type and text, None on success)
    and how long it took: for workers that check errors rather than results."""
    import time
    t0 = time.monotonic()
    try:
        fn()
        out[key] = {"error": None}
    except Exception as e:  # noqa: BLE001 - the test inspects the type and text
        out[key] = {"type": type(e).__name__, "error": str(e)}
    out[key]["seconds"] = time.monotonic() - t0


def initial_value(rank, n, size):
    """A distinct, exactly representable start vector per rank (float64)."""
    k = np.arange(n, dtype=np.float64)
    return ((rank * 7 + k * 3) % (2 * size)) + 0.25 * rank


def horovod_process_set_table():
    """Horovod's own table of process sets, its global set included: the sorted rank
    lists of each, so that a test sees which sets WAGMA registered with Horovod."""
    from horovod.torch.mpi_ops import _basics
    return sorted(sorted(ranks) for ranks in _basics._get_process_set_ids_and_ranks().values())


def error(fn):
    """None if fn() returns, else "Type: message" of what it raised (for tests that
    check the error a rank reports)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test inspects the type and text
        return f"{type(e).__name__}: {e}"
    return None


def run_scenarios(table, names):
    """Runs several scenarios in one launch, so that the ranks import Python, the
    framework and start the engine once rather than once per test.

    `table` maps a scenario's name to a function returning its payload; `names` (the
    command line) says which ones run, in order. A barrier before each one starts the
    ranks together, as a fresh launch would, and keeps one scenario's traffic out of
    the next. A scenario that raises records its traceback and the others still run
    (if a peer is then stuck in a round, the test's launch timeout ends it). Emits
    {"scenarios": name -> payload, "errors": name -> traceback, "seconds": name -> s};
    conftest.Launch gives each test its scenario's results."""
    import time
    import traceback

    from world import world
    comm = world()
    payloads, errors, seconds = {}, {}, {}
    for name in names:
        comm.Barrier()
        t0 = time.monotonic()
        try:
            payloads[name] = table[name]()
        except Exception:  # noqa: BLE001 - reported to the scenario's test
            errors[name] = traceback.format_exc()
        seconds[name] = time.monotonic() - t0
    emit(comm.Get_rank(), scenarios=payloads, errors=errors, seconds=seconds)
