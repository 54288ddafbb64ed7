#!/usr/bin/env python
"""Training throughput across emulated hosts: Horovod vs WAGMA (both global-round
modes) vs local SGD, with a slow link and then a slow host.

What is measured
----------------
bench/imbalance.py (the PyTorch MLP, its methods, timed windows and table; see its
docstring and bench/harness.py) launched by ``mpirun`` across three emulated hosts of
two ranks each (multihost/cluster.py: network namespaces, per-host latency and a
bandwidth cap, ranks on different hosts over TCP only). Ranks 2h-2 and 2h-1 run on
host h. Two scenarios, one cluster each:

* ``slow_link``  hosts 1 and 2 on 1 ms / 1 Gbit/s links, host 3 on 4 ms / 100 Mbit/s;
                 every rank computes the same 10 ms step (no compute imbalance): the
                 network is the imbalance. Horovod's every-step allreduce crosses the
                 slow link each step; WAGMA's group rounds cross it only in the phases
                 whose groups span it, and do not wait for it.
* ``slow_host``  every link 1 ms / 1 Gbit/s; host 1's ranks (0 and 1) take 2x the 10 ms
                 step (a throttled node): persistent heterogeneity by host.

Each scenario is one launch with every method side by side (``--trials`` interleaved
trials, median reported). The figure is samples/s summed over ranks, next to the
pattern's ideals. Results: lab/results/multihost_<scenario>.json/.png (imbalance.py's
schema) and lab/results/multihost_throughput.json, which gathers both with each
cluster's hosts and measured round trips (lab/simulate.py validates against it once
copied to lab/calibration/).

Horovod's collective alone (``--collectives``, also part of every full run): in each
scenario's cluster, bench/op_bench.py with one group of all ranks (``--group-sizes
P``) times ``hvd.allreduce`` (negotiation + MPI_Allreduce) and MPI_Allreduce at the
benchmark's gradient size and at 8 bytes (Horovod's coordination word), with nothing
else running. Results: lab/results/op_bench_multihost_<scenario>.json, which
lab/simulate.py reads (from lab/calibration/) as the cost of Horovod's collective across those hosts, the
way it reads op_bench_P{8,16}.json on one host.

Engine settings side by side (``--variant``): each trial launches once per variant,
in turn, inside the same cluster, so that the variants share the machine's state; the
table gives each variant's median samples/s with the min-max over trials. E.g. cutting
cross-host messages under the TCP eager limit against not cutting them:

    python lab/multihost_throughput.py --scenarios slow_link \
        --methods wagma:rounds=blocking wagma:rounds=wa \
        --variant cut: --variant whole:HOROVOD_WAGMA_FRAGMENT_BYTES=0

Run (root; iproute2 and gcc; a few minutes)
---
    python lab/multihost_throughput.py [--scenarios slow_link,slow_host] [--trials 3]
        [--steps 200] [--collectives]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, ROOT)

from multihost.cluster import (EmulatedCluster, HostSpec, Link,  # noqa: E402
                              LINK_BURST_BYTES, why_unavailable)  # noqa: E402

RESULTS = os.path.join(HERE, "results")
# The imbalance MLP's gradient (bench/imbalance.py: 71,178 float32) and Horovod's
# coordination word; op_bench --sizes.
COLLECTIVE_SIZES = "8,284712"
FAST, SLOW = Link(1.0, 1000.0), Link(4.0, 100.0)
METHODS = ["horovod", "localsgd", "wagma:rounds=blocking", "wagma:rounds=wa"]

SCENARIOS = {
    "slow_link": dict(hosts=[HostSpec(2, FAST), HostSpec(2, FAST), HostSpec(2, SLOW)],
                      pattern=["--pattern", "persistent", "--slow-ranks", "0"]),
    "slow_host": dict(hosts=[HostSpec(2, FAST), HostSpec(2, FAST), HostSpec(2, FAST)],
                      pattern=["--pattern", "persistent", "--slow-ranks", "2",
                               "--slow-factor", "2"]),
}


def scenario_args(name, args):
    """The scenario's imbalance.py arguments, with --slow-factor/--methods applied;
    and the suffix of its output files (empty for the defaults, which the simulator
    validates against)."""
    pattern = list(SCENARIOS[name]["pattern"])
    suffix = ""
    if args.slow_factor is not None and "--slow-factor" in pattern:
        pattern[pattern.index("--slow-factor") + 1] = f"{args.slow_factor:g}"
        suffix += f"_f{args.slow_factor:g}"
    if args.methods:
        pattern += ["--methods", *args.methods]
        suffix += "_" + "-".join(args.methods).replace(":", "_").replace("=", "")
    return pattern, suffix


def parse_variant(text):
    """'NAME:K=V;K=V' (or 'NAME:' for the defaults) -> (NAME, {K: V})."""
    name, _, settings = text.partition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME:K=V;K=V")
    env = {}
    for item in filter(None, settings.split(";")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise argparse.ArgumentTypeError(f"--variant {text!r}: {item!r} is not K=V")
        env[key] = value
    return name, env


def launch(cluster, name, pattern, trials, out, extra_env, args):
    """One imbalance.py launch across the cluster; its JSON result."""
    env = cluster.env(dict(os.environ, PYTHONUNBUFFERED="1",
                           WAGMA_BENCH_MASTER_ADDR=cluster.addresses[0],
                           GLOO_SOCKET_IFNAME="eth0", **extra_env))
    cmd = cluster.mpirun([sys.executable, os.path.join(BENCH, "imbalance.py"),
                          *pattern, "--trials", str(trials),
                          "--steps", str(args.steps), "--json", out + ".json",
                          "--plot", out + ".png"])
    proc = subprocess.run(cmd, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: the launch failed (exit {proc.returncode})")
    with open(out + ".json") as f:
        return json.load(f)


def time_collectives(cluster, name, args):
    """op_bench across the cluster, one group of every rank: hvd.allreduce and
    MPI_Allreduce at COLLECTIVE_SIZES, alone on the hosts."""
    out = os.path.join(RESULTS, f"op_bench_multihost_{name}.json")
    cmd = cluster.mpirun([sys.executable, os.path.join(BENCH, "op_bench.py"),
                          "--group-sizes", str(cluster.size), "--sizes", COLLECTIVE_SIZES,
                          "--methods", "mpi_hvd", "hvd", "--iters", "20", "--trials", "5",
                          "--json", out])
    proc = subprocess.run(cmd, env=cluster.env(dict(os.environ, PYTHONUNBUFFERED="1")),
                          timeout=args.timeout)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: op_bench across the hosts failed (exit {proc.returncode})")


def run_scenario(name, spec, args):
    pattern, suffix = scenario_args(name, args)
    out = os.path.join(RESULTS, f"multihost_{name}{suffix}")
    with EmulatedCluster(spec["hosts"], args.work_dir) as cluster:
        rtt = {f"h1->h{j}": round(cluster.rtt_ms(1, j), 2)
               for j in range(2, len(spec["hosts"]) + 1)}
        print(f"== {name}: hosts {[(h.slots, h.link.latency_ms, h.link.rate_mbit) for h in spec['hosts']]}"
              f" (slots, one-way ms, Mbit/s); measured TCP round trips {rtt} ms", flush=True)
        if not suffix and not args.variant:
            time_collectives(cluster, name, args)
        if args.collectives:
            return None
        if args.variant:
            result = compare_variants(cluster, name, pattern, out, args)
        else:
            result = launch(cluster, name, pattern, args.trials, out, {}, args)
    hosts = [{"slots": h.slots, "latency_ms": h.link.latency_ms,
              "rate_mbit": h.link.rate_mbit, "burst_kb": LINK_BURST_BYTES / 1024}
             for h in spec["hosts"]]
    return {"hosts": hosts, "rtt_ms": rtt, "result": result}


def compare_variants(cluster, name, pattern, out, args):
    """Each trial launches every variant in turn (one trial each), in the same cluster;
    per variant and method: the median samples/s over trials and the min-max."""
    per = {v: [] for v, _ in args.variant}
    for trial in range(args.trials):
        for v, env in args.variant:
            print(f"-- {name} trial {trial} variant {v} {env}", flush=True)
            res = launch(cluster, name, pattern, 1, f"{out}_{v}_t{trial}", env, args)
            per[v].append(res["samples_per_s"])
    methods = [m for m in per[args.variant[0][0]][0] if m in METHODS]
    table = {v: {m: {"median": statistics.median(t[m] for t in trials),
                     "min": min(t[m] for t in trials), "max": max(t[m] for t in trials),
                     "trials": [t[m] for t in trials]} for m in methods}
             for v, trials in per.items()}
    print(f"\n{name}: samples/s by variant, median (min-max) of {args.trials} interleaved trials")
    for v, env in args.variant:
        cells = "  ".join(f"{m} {c['median']:.0f} ({c['min']:.0f}-{c['max']:.0f})"
                          for m, c in table[v].items())
        print(f"  {v:>10} {env}: {cells}")
    return {"variants": {v: env for v, env in args.variant}, "samples_per_s": table,
            "command": "python lab/multihost_throughput.py " + " ".join(sys.argv[1:])}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default=",".join(SCENARIOS),
                   help="comma-separated subset of %(default)s")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--timeout", type=int, default=1200, help="seconds per scenario")
    p.add_argument("--work-dir", default="/tmp/wagma-multihost")
    p.add_argument("--slow-factor", type=float, default=None,
                   help="slow_host only: the slow ranks' step-time factor (default 2); "
                        "results go to multihost_slow_host_f<F>.json, not the gathered file")
    p.add_argument("--methods", nargs="+", default=None,
                   help="imbalance.py method specs (default: its four); results go to "
                        "files with the methods in their name")
    p.add_argument("--variant", action="append", type=parse_variant, default=[],
                   metavar="NAME:K=V;K=V",
                   help="engine settings to compare side by side (repeat; 'NAME:' is "
                        "the defaults); results go to multihost_<scenario>_variants.json")
    p.add_argument("--collectives", action="store_true",
                   help="only time Horovod's collective across each scenario's hosts "
                        "(op_bench_multihost_<scenario>.json); no training runs")
    args = p.parse_args()
    if args.collectives and (args.variant or args.methods or args.slow_factor is not None):
        p.error("--collectives takes no --variant, --methods or --slow-factor")
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        p.error(f"unknown scenarios {sorted(unknown)}; choose from {','.join(SCENARIOS)}")
    reason = why_unavailable()
    if reason:
        raise SystemExit(f"multihost_throughput: cannot run: {reason}")
    path = os.path.join(RESULTS, "multihost_throughput.json")
    gathered = {"scenarios": {}}
    if os.path.exists(path):  # keep the scenarios not rerun
        with open(path) as f:
            gathered = json.load(f)
    t0 = time.monotonic()
    for name in names:
        result = run_scenario(name, SCENARIOS[name], args)
        if args.collectives:
            continue
        if args.variant:
            suffix = scenario_args(name, args)[1]
            with open(os.path.join(RESULTS, f"multihost_{name}{suffix}_variants.json"),
                      "w") as f:
                json.dump(result, f, indent=1)
            continue
        gathered["scenarios"][name] = result
        if scenario_args(name, args)[1]:
            continue  # a variation: its own files only
        gathered["command"] = "python lab/multihost_throughput.py " + " ".join(sys.argv[1:])
        with open(path, "w") as f:
            json.dump(gathered, f, indent=1)
    if args.variant or args.collectives:
        return
    print(f"\nsamples/s summed over ranks (median of {args.trials} trials); "
          f"{time.monotonic() - t0:.0f} s")
    methods = METHODS
    print(f"{'scenario':>10} " + " ".join(f"{m:>9}" for m in ("horovod", "localsgd", "blocking", "wa"))
          + f" {'ideal':>7} {'no_wait':>7}  wa/blocking wagma")
    nan = float("nan")
    for name in names:
        r = gathered["scenarios"][name]["result"]["samples_per_s"]
        print(f"{name:>10} " + " ".join(f"{r.get(m, nan):9.0f}" for m in methods)
              + f" {r['ideal']:7.0f} {r['no_wait']:7.0f}  "
              f"{r.get(METHODS[3], nan) / r.get(METHODS[2], nan):.2f}x")
    if any(not scenario_args(name, args)[1] for name in names):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
