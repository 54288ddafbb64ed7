"""Runs several worker scripts in turn in one launch: every rank imports Python, the
framework and Horovod and starts the engine once, instead of once per worker.

Usage: resident.py PLAN, a JSON file listing the items in order, each
{"name", "worker", "args", "results"}. Each item runs as its script would as a
launch of its own (``runpy`` as ``__main__``, with its own ``sys.argv`` and its own
results directory in WAGMA_TEST_RESULTS), except that Horovod and the engine are
already running: the worker's own ``init()`` call then only sets the WAGMA defaults
its streams take, as in a fresh launch.

Before an item a rank writes ``progress.rank{R}`` (the item it is in) in the launch's
directory, and after it ``done.rank{R}`` in the item's: the test side reads them to
name the item a hang or a crash happened in (conftest.py: ResidentLaunch). An item
that raises records its traceback (``error.rank{R}.txt``) and the next one still runs;
if a peer is then stuck in a round, the item's timeout ends the launch.
"""
import json
import os
import runpy
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH_DIR = os.environ["WAGMA_TEST_RESULTS"]

if os.environ.get("WAGMA_TEST_FRAMEWORK") == "tensorflow":
    # Keras workers need Keras 2, which must be chosen before TensorFlow is imported
    # (horovod_wagma.keras); TensorFlow's own workers run the same on it.
    import horovod_wagma.keras  # noqa: E402,F401
import frameworks  # noqa: E402 - imports the frontend and framework once

if frameworks.NAME == "tensorflow":
    # What the Keras workers ask for (ranks outnumber cores); it cannot be changed
    # once TensorFlow has started, which init() below does.
    frameworks.tf.config.threading.set_intra_op_parallelism_threads(1)
from world import launch_rank, world  # noqa: E402

frameworks.hvd.init()
comm = world()  # on Gloo its file store stays in the launch's directory
rank = launch_rank()

with open(sys.argv[1]) as f:
    plan = json.load(f)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


for item in plan:
    # Every rank starts the item together, as a fresh launch would, and one item's
    # traffic stays out of the next.
    comm.Barrier()
    # The WAGMA defaults a fresh launch has: an earlier item's init(group_size=2, ...)
    # would otherwise reach a worker that calls Horovod's plain init() (seen:
    # optimizer_checks.py after uneven.py).
    frameworks.hvd.init()
    write(os.path.join(LAUNCH_DIR, f"progress.rank{rank}"), item["name"])
    os.environ["WAGMA_TEST_RESULTS"] = item["results"]
    sys.argv = [os.path.join(HERE, item["worker"])] + [str(a) for a in item["args"]]
    t0 = time.monotonic()
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            write(os.path.join(item["results"], f"error.rank{rank}.txt"),
                  f"exited with {e.code!r}\n")
    except Exception:  # noqa: BLE001 - reported to the item's test
        write(os.path.join(item["results"], f"error.rank{rank}.txt"), traceback.format_exc())
    finally:
        os.environ["WAGMA_TEST_RESULTS"] = LAUNCH_DIR
    write(os.path.join(item["results"], f"done.rank{rank}"), f"{time.monotonic() - t0:.3f}")
comm.Barrier()
