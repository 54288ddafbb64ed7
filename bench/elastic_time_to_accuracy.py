#!/usr/bin/env python
"""Time to accuracy under Horovod elastic, across four emulated hosts of two ranks
(multihost/cluster.py: network namespaces, real TCP; needs root).

Does losing a host cost WAGMA less than it costs Horovod? For each method and seed,
two runs of the mlp task (bench/tasks.py, target 84.5% held-out) under
``hvd.elastic.run`` (bench/elastic_worker.py, each method's defaults):

* **killed**: 8 ranks on 4 hosts, one host (neither rank 0's nor horovodrun's) killed
  with SIGKILL once every rank passed ``--kill-step`` (a third of the run);
* **six**: 6 ranks on 3 hosts from the start.

WAGMA goes on from each survivor's replica; Horovod's ``TorchState`` restores the last
commit (every 5 steps) and broadcasts from rank 0. ``torchft_localsgd`` (the real
peer, ``make bench-peers``): torchft's ``LocalSGD`` with one replica group per rank,
its lighthouse on host 1 (bench/torchft_elastic_job.py); the survivors' next quorum
leaves the killed replicas out once their heartbeats stop (5 s), and a
synchronisation that failed is discarded. The time to accuracy is the seconds
from the first step of any rank to the first evaluation of rank 0's replica (every
``--eval-every`` steps) at or above the target. The issue's target: WAGMA's killed run
within 1.10x of its six run.

    python bench/elastic_time_to_accuracy.py [--seeds 3] [--methods wagma,horovod]
        [--steps 600] [--kill-step 100] [--step-s 0.05] (methods: wagma, horovod,
        torchft_localsgd)

Prints one JSON line per run, then a table; writes bench/results/elastic_time_to_accuracy.json.
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import harness  # noqa: E402
from elastic_job import ElasticJob, host_without_rank_0, ranks_at_step  # noqa: E402
from multihost.cluster import EmulatedCluster, HostSpec, Link, why_unavailable  # noqa: E402
from table import fmt_spread, print_table, spread  # noqa: E402
from tasks import MLPTask  # noqa: E402
from torchft_elastic_job import TorchftJob  # noqa: E402

HOSTS, SLOTS = 4, 2
WORKER = os.path.join(HERE, "elastic_worker.py")


def run_once(cluster, method, seed, layout, args):
    """One elastic job; its time to accuracy and what happened."""
    hosts = HOSTS if layout == "killed" else HOSTS - 1
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"wagma_elastic_tta_{method}_{layout}_"))
    if method == "torchft_localsgd":
        job = TorchftJob(tmp, cluster, hosts, SLOTS, seed, args.steps, args.step_s,
                         args.eval_every, args.tau, args.gloo_timeout)
    else:
        job = ElasticJob(tmp, "".join(f"{a}:{SLOTS}\n" for a in cluster.addresses[:hosts]),
                         np_=hosts * SLOTS, min_np=4, max_np=hosts * SLOTS,
                         steps=args.steps, step_s=args.step_s,
                         gloo_timeout_s=args.gloo_timeout, cluster=cluster, script=WORKER,
                         argv=[method, seed, args.steps, args.step_s, args.eval_every])
    killed_at = None
    try:
        if layout == "killed":
            rank_of = ranks_at_step(job, hosts * SLOTS, args.kill_step, timeout=300)
            host = host_without_rank_0(rank_of, launcher=cluster.addresses[0])
            killed_at = time.time()
            cluster.kill_host(int(host.split(".")[2]))
        job.end(args.limit)
        ok = job.proc.returncode == 0
    finally:
        job.kill()
        cluster.restore()
    steps = [r for recs in job.logs().values() for r in recs if r["kind"] == "step"]
    start = min(r["t"] for r in steps)
    hits = sorted(r["t"] for r in steps if r.get("acc", 0.0) >= MLPTask.target)
    evals = sorted((r["t"], r["acc"]) for r in steps if "acc" in r)
    return {"method": method, "seed": seed, "layout": layout, "ok": ok,
            "tta_s": round(hits[0] - start, 2) if hits else None,
            "kill_after_s": None if killed_at is None else round(killed_at - start, 2),
            "final_acc": evals[-1][1] if evals else None,
            "restores": sum(r["kind"] == "restore" for recs in job.logs().values()
                            for r in recs),
            "logs": str(tmp)}


def report(results, methods, seeds):
    rows = [["method", "six: tta s", "killed: tta s", "killed/six", "notes"]]
    summary = {}
    for m in methods:
        six = {r["seed"]: r["tta_s"] for r in results if r["method"] == m and r["layout"] == "six"}
        killed = {r["seed"]: r["tta_s"] for r in results
                  if r["method"] == m and r["layout"] == "killed"}
        ratios = [killed[s] / six[s] for s in seeds if six.get(s) and killed.get(s)]
        missing = [s for s in seeds if not (six.get(s) and killed.get(s))]
        summary[m] = spread(ratios)
        rows.append([m, fmt_spread(spread(six.values()), " s"),
                     fmt_spread(spread(killed.values()), " s"), fmt_spread(summary[m], "x"),
                     f"target not reached in seeds {missing}" if missing else ""])
    print_table(rows)
    if summary.get("wagma"):
        med = summary["wagma"][0]
        print(f"target: WAGMA killed/six <= 1.10x: {'met' if med <= 1.10 else 'MISSED'} "
              f"(median {med:.2f}x)")
    return summary


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", default="wagma,horovod")
    p.add_argument("--seeds", type=int, default=3, help="how many seeds")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=600, help="steps per run")
    p.add_argument("--kill-step", type=int, default=100, help="a third of the run")
    p.add_argument("--step-s", type=float, default=0.05, help="sleep per step")
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--tau", type=int, default=10,
                   help="torchft_localsgd's sync_every (default 10)")
    p.add_argument("--gloo-timeout", type=int, default=5,
                   help="HOROVOD_GLOO_TIMEOUT_SECONDS (the README's advice: 5)")
    p.add_argument("--limit", type=float, default=400.0, help="seconds per run")
    p.add_argument("--out", default=os.path.join(harness.RESULTS_DIR,
                                                 "elastic_time_to_accuracy.json"))
    args = p.parse_args()
    reason = why_unavailable()
    if reason:
        sys.exit(f"emulated hosts unavailable: {reason}")
    methods = args.methods.split(",")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    results = []
    with EmulatedCluster([HostSpec(SLOTS, Link(1.0, 1000.0)) for _ in range(HOSTS)],
                         tempfile.mkdtemp(prefix="wagma_elastic_tta_cluster_")) as cluster:
        for seed in seeds:
            for layout in ("six", "killed"):
                for method in methods:  # side by side: the methods alternate
                    res = run_once(cluster, method, seed, layout, args)
                    print(json.dumps(res), flush=True)
                    results.append(res)
    summary = report(results, methods, seeds)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "runs": results, "killed_over_six": summary}, f,
                  indent=1)


if __name__ == "__main__":
    main()
