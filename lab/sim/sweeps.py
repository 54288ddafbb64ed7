"""``--sweep`` (8 to 1,024 ranks, every method) and ``--defaults`` (group size S and
sync period tau at 1,024 ranks): simulate, print, and write JSON and a figure to the
results directory (simulate_sweep[_TAG].*, simulate_defaults[_TAG].*)."""
import json
import os
import sys
import time

from .common import LABELS, METHODS, ROOT
from .flags import network_for, scenario_for
from .methods.wagma import group_schedule, group_size_for
from .plots import plot_defaults, plot_sweep
from .run import simulate


SWEEP_RANKS = [8, 16, 32, 64, 128, 256, 512, 1024]


def sweep(args, calib):
    t0 = time.time()
    points = []
    for P in SWEEP_RANKS:
        net = network_for(args, P)
        scn = scenario_for(args, P)
        res = simulate(scn, net, calib, METHODS, args.cpu_model, args.cpu_jitter)
        points.append({"P": P, "S": res["S"], "num_delayed": scn.num_delayed,
                       "ideals": res["ideals"],
                       "samples_per_s": {m: v["samples_per_s"]
                                         for m, v in res["methods"].items()}})
        r = points[-1]["samples_per_s"]
        print(f"  P={P:5d} S={res['S']:3d}: " + "  ".join(
            f"{m} {r[m]:.0f}" for m in METHODS)
            + f"  | WAGMA/Hvd {r['wagma'] / r['horovod']:.2f}x, wa/Hvd "
              f"{r['wagma_wa'] / r['horovod']:.2f}x; over the best of local SGD and "
              f"D-PSGD: WAGMA {r['wagma'] / max(r['localsgd'], r['dpsgd']):.2f}x, wa "
              f"{r['wagma_wa'] / max(r['localsgd'], r['dpsgd']):.2f}x", flush=True)
    meta = sweep_meta(args)
    stem = os.path.join(args.results_dir,
                        "simulate_sweep" + (f"_{args.tag}" if args.tag else ""))
    with open(stem + ".json", "w") as f:
        json.dump(dict(meta, points=points), f, indent=1)
    plot_sweep(points, meta, stem + ".png")
    print(f"  wrote {os.path.relpath(stem, ROOT)}.json and .png ({time.time() - t0:.0f} s)")
    return points


def sweep_meta(args):
    return {"command": "python lab/simulate.py " + " ".join(sys.argv[1:]),
            "network": args.network, "pattern": args.pattern,
            "step_time": args.step_time, "delay": args.delay,
            "num_delayed": args.num_delayed, "delayed_fraction": args.delayed_fraction,
            "slow_ranks": args.slow_ranks, "slow_factor": args.slow_factor,
            "sync_period": args.sync_period, "steps": args.steps,
            "model_bytes": args.model_bytes, "latency_us": args.latency_us,
            "bandwidth_gbit": args.bandwidth_gbit, "ranks_per_host": args.ranks_per_host,
            "overhead_us": args.overhead_us, "cpu_model": args.cpu_model,
            "cpu_jitter": args.cpu_jitter,
            "group_size": args.group_size, "seed": args.seed}


DEFAULT_GROUP_SIZES = [2, 4, 8, 16, 32, 64]
DEFAULT_SYNC_PERIODS = [1, 2, 5, 10, 20, 32, 64]


def defaults_sweep(args, calib, P=1024):
    """Group size 2..64 (tau fixed) and sync period 1..64 (S default) at P ranks."""
    t0 = time.time()
    net = network_for(args, P)
    S0 = group_size_for(P)
    out = {"P": P, "default_group_size": S0, "default_sync_period": 10,
           "meta": sweep_meta(args), "group_size": [], "sync_period": []}
    hv = simulate(scenario_for(args, P), net, calib, ("horovod",), args.cpu_model,
                  args.cpu_jitter)
    out["horovod"] = hv["methods"]["horovod"]["samples_per_s"]   # does not depend on S
    for S in DEFAULT_GROUP_SIZES:
        res = simulate(scenario_for(args, P, group_size=S), net, calib,
                       ("wagma", "wagma_wa"), args.cpu_model, args.cpu_jitter)
        r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
        out["group_size"].append({"S": S, "phases": len(group_schedule(P, S)),
                                  "samples_per_s": r})
        print(f"  S={S:3d} ({len(group_schedule(P, S))} phases): WAGMA {r['wagma']:.0f}, "
              f"WAGMA wa {r['wagma_wa']:.0f} samples/s", flush=True)
    for tau in DEFAULT_SYNC_PERIODS:
        res = simulate(scenario_for(args, P, sync_period=tau), net, calib,
                       ("localsgd", "wagma", "wagma_wa"), args.cpu_model, args.cpu_jitter)
        r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
        out["sync_period"].append({"tau": tau, "samples_per_s": r,
                                   "ideal": res["ideals"]["ideal"]})
        print(f"  tau={tau:3d}: local SGD {r['localsgd']:.0f}, WAGMA {r['wagma']:.0f}, "
              f"WAGMA wa {r['wagma_wa']:.0f} samples/s", flush=True)
    at_default = next(x for x in out["group_size"] if x["S"] == S0)["samples_per_s"]
    at_tau = next(x for x in out["sync_period"] if x["tau"] == 10)["samples_per_s"]
    out["finding"] = {}
    for m in ("wagma", "wagma_wa"):
        best = max(out["group_size"], key=lambda x: x["samples_per_s"][m])
        out["finding"][m] = {
            "best_S": best["S"], "default_S": S0,
            "default_S_over_best_S": at_default[m] / best["samples_per_s"][m],
            "worst_S": min(out["group_size"], key=lambda x: x["samples_per_s"][m])["S"],
            "default_tau_over_best_tau": at_tau[m] / max(x["samples_per_s"][m]
                                                         for x in out["sync_period"])}
    stem = os.path.join(args.results_dir,
                        "simulate_defaults" + (f"_{args.tag}" if args.tag else ""))
    with open(stem + ".json", "w") as f:
        json.dump(out, f, indent=1)
    plot_defaults(out, stem + ".png")
    for m, f in out["finding"].items():
        print(f"  {LABELS[m]}: best S {f['best_S']}, the default S={S0} reaches "
              f"{f['default_S_over_best_S']:.3f}x of it (worst: S={f['worst_S']}); "
              f"tau=10 reaches {f['default_tau_over_best_tau']:.3f}x of the best tau")
    print(f"  wrote {os.path.relpath(stem, ROOT)}.json and .png ({time.time() - t0:.0f} s)")
    return out
