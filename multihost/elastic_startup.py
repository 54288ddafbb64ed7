"""How Horovod elastic starts with WAGMA against Horovod's own optimizer, across four
emulated hosts of two ranks (multihost/cluster.py; needs root). Validation tooling,
not a test: it measures, prints one JSON line per launch and a summary, and judges
nothing.

Each launch runs the test suite's elastic script (tests/workers/elastic_train.py,
launched by tests/elastic_job.py) with no fault, and records how long all 8 ranks
took to reach step `--step` and how many of Horovod's resets (`restore` records)
happened on the way: with no fault there should be none. The optimizers alternate
launch by launch, so that both see the same machine state.

    python multihost/elastic_startup.py --launches 3          # both, 3 launches each
    python multihost/elastic_startup.py --optimizers wagma --gloo-timeout 10

A reset counted is a `restore` record of the script before every rank passed the step.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from elastic_job import ElasticJob, ranks_past  # noqa: E402
from multihost.cluster import EmulatedCluster, HostSpec, Link, why_unavailable  # noqa: E402

HOSTS, SLOTS = 4, 2


def launch(cluster, optimizer, step, gloo_timeout_s, limit_s):
    """One fault-free elastic job: seconds until every rank passed `step` (None: not
    within limit_s), Horovod's resets, and the spread of the ranks' set-up ends."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"wagma_startup_{optimizer}_"))
    hosts = "".join(f"{a}:{SLOTS}\n" for a in cluster.addresses[:HOSTS])
    job = ElasticJob(tmp, hosts, np_=HOSTS * SLOTS, min_np=HOSTS, max_np=HOSTS * SLOTS,
                     steps=10 * step, step_s=0.05, gloo_timeout_s=gloo_timeout_s,
                     env_extra={"WAGMA_TEST_OPTIMIZER": optimizer}, cluster=cluster)
    t0, reached, until = time.monotonic(), None, None
    try:
        while time.monotonic() - t0 < limit_s:
            if ranks_past(job.logs(), step) >= HOSTS * SLOTS:
                reached, until = time.monotonic() - t0, time.time()
                break
            time.sleep(0.2)
    finally:
        job.kill()
        cluster.restore()
    # Records up to the step (the kill that ends the launch makes survivors reset too).
    records = [r for recs in job.logs().values() for r in recs
               if until is None or r["t"] <= until]
    ready = [r["t"] for r in records if r["kind"] == "ready"]
    return {"optimizer": optimizer, "gloo_timeout_s": gloo_timeout_s,
            "seconds_to_step": None if reached is None else round(reached, 1),
            "resets": sum(r["kind"] == "restore" for r in records),
            "setup_spread_s": round(max(ready) - min(ready), 1) if ready else None,
            "logs": str(tmp)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=3, help="per optimizer")
    parser.add_argument("--optimizers", default="horovod,wagma")
    parser.add_argument("--step", type=int, default=30)
    parser.add_argument("--gloo-timeout", type=int, default=5,
                        help="HOROVOD_GLOO_TIMEOUT_SECONDS (the README's advice: 5)")
    parser.add_argument("--limit", type=float, default=100.0, help="seconds per launch")
    args = parser.parse_args()
    reason = why_unavailable()
    if reason:
        sys.exit(f"emulated hosts unavailable: {reason}")
    optimizers = args.optimizers.split(",")
    results = []
    with EmulatedCluster([HostSpec(SLOTS, Link(1.0, 1000.0)) for _ in range(HOSTS)],
                         tempfile.mkdtemp(prefix="wagma_startup_cluster_")) as cluster:
        for _ in range(args.launches):
            for optimizer in optimizers:
                res = launch(cluster, optimizer, args.step, args.gloo_timeout, args.limit)
                print(json.dumps(res), flush=True)
                results.append(res)
    for optimizer in optimizers:
        mine = [r for r in results if r["optimizer"] == optimizer]
        times = [r["seconds_to_step"] for r in mine if r["seconds_to_step"] is not None]
        print(f"{optimizer}: step {args.step} reached in {len(times)} of {len(mine)} launches"
              + (f", median {statistics.median(times):.1f} s ({min(times):.1f}-"
                 f"{max(times):.1f})" if times else "")
              + f"; launches with a reset: {sum(r['resets'] > 0 for r in mine)}")


if __name__ == "__main__":
    main()
