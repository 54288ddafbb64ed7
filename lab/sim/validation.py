"""Predicted vs measured (``--validate``): every lab/calibration/imbalance_*_P*.json on
this machine and every scenario of multihost_throughput.json on its emulated hosts.

Each file's pattern and knobs make a Scenario; the measured value is the median
trial's samples/s, with the [min-max] over trials. A row is within when
|predicted - measured| / measured <= 15% (TOLERANCE). A multihost scenario not yet
measured shows as a "not measured yet" row.
"""
import os
import statistics

from .calibration import measured_files, read_horovod_across_hosts
from .common import (CALIBRATION_DIR, LABELS, MEASURED, ROOT, CalibrationError, load_json,
                     measured_runs)
from .cpu import CPU_MODELS
from .network import multihost_from_scenario, this_machine
from .run import Scenario, simulate

TOLERANCE = 0.15                # the validation target
MULTIHOST_SCENARIOS = ("slow_link", "slow_host")   # lab/multihost_throughput.py


def scenario_from_result(d, source):
    """A Scenario with the pattern and knobs a measured result file recorded."""
    try:
        return Scenario(pattern=d["pattern"], step_time=float(d["step_time_s"]),
                        delay=float(d["delay_s"]), num_delayed=int(d["num_delayed"]),
                        slow_ranks=str(int(d["slow_ranks"])),
                        slow_factor=float(d["slow_factor"]), seed=int(d.get("seed", 0)),
                        group_size=int(d["group_size"]), sync_period=int(d["sync_period"]),
                        steps=int(d["steps"]))
    except (KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"{source}: result lacks a pattern field: {e!r}") from None


def median_trial(recs):
    """The trial with the median samples/s (the lower middle one for an even count),
    as bench/imbalance.py reports it."""
    return sorted(recs, key=lambda r: r["samples_per_s"])[(len(recs) - 1) // 2]


def measured_stats(d, method):
    recs = measured_runs(d, method)
    if not recs:
        return None
    vals = [float(r["samples_per_s"]) for r in recs]
    return {"median": median_trial(recs)["samples_per_s"], "min": min(vals),
            "max": max(vals), "trials": len(vals)}


def validation_cases(results_dir):
    """(label, result dict, network) for every measured file; multihost scenarios from
    multihost_throughput.json when it exists, else a placeholder row per scenario."""
    cases = []
    for path in measured_files(results_dir):
        d = load_json(path)
        P = int(d["ranks"])
        name = os.path.basename(path)[len("imbalance_"):-len(".json")]
        cases.append((f"this machine {name}", d, this_machine(P), path))
    mh = os.path.join(results_dir, "multihost_throughput.json")
    if os.path.exists(mh):
        d = load_json(mh)
        scenarios = d.get("scenarios", {})
        for name in sorted(set(scenarios) | set(MULTIHOST_SCENARIOS)):
            scn = scenarios.get(name, {})
            res = scn.get("result")
            if res is None:
                cases.append((f"multihost {name}", None, None, mh))
                continue
            net = multihost_from_scenario(scn)
            if net.P != int(res["ranks"]):
                raise CalibrationError(f"{mh}: scenario {name} has {net.P} slots for "
                                       f"{res['ranks']} ranks")
            measured = os.path.join(results_dir, f"op_bench_multihost_{name}.json")
            net.horovod_measured = read_horovod_across_hosts(measured, net.P)
            net.horovod_measured_from = os.path.basename(measured)
            cases.append((f"multihost {name}", res, net, mh))
    else:
        for name in MULTIHOST_SCENARIOS:
            cases.append((f"multihost {name}", None, None, mh))
    return cases


def validate(calib, results_dir=CALIBRATION_DIR, out=print, cpu_model="fair", cpu_jitter="exp"):
    """Predicted vs measured for every measured file and method; returns the rows."""
    rows, multihost, measured = [], None, []
    for label, d, net, path in validation_cases(results_dir):
        if net is not None and net.name == "multihost":
            multihost = multihost or net
            if net.horovod_measured:
                measured.append(f"{label}: Horovod's allreduce measured alone across the "
                                "hosts, " + ", ".join(f"{b} B {1e3 * t:.1f} ms"
                                                      for b, t in net.horovod_measured)
                                + f" ({net.horovod_measured_from})")
        if d is None:
            rows.append({"case": label, "method": "all", "status": "not measured yet",
                         "file": os.path.relpath(path, ROOT)})
            continue
        scn = scenario_from_result(d, path)
        methods = [m for m in MEASURED if measured_runs(d, m)]
        pred = simulate(scn, net, calib, methods, cpu_model, cpu_jitter)
        for m in methods:
            meas = measured_stats(d, m)
            p = pred["methods"][m]["samples_per_s"]
            err = (p - meas["median"]) / meas["median"]
            rows.append({"case": label, "method": m, "measured": meas["median"],
                         "measured_min": meas["min"], "measured_max": meas["max"],
                         "trials": meas["trials"], "predicted": p, "error": err,
                         "within": abs(err) <= TOLERANCE,
                         "file": os.path.relpath(path, ROOT)})
    print_validation(rows, calib, out, f"{CPU_MODELS[cpu_model]}; CPU job lengths: "
                     + ("exponential" if cpu_jitter == "exp" else "exact"),
                     ([] if multihost is None else [describe_links(multihost)]) + measured)
    return rows


def describe_links(net):
    """The multihost network's link constants, for the calibration listing."""
    burst = ("none" if net.burst_B is None else
             f"{net.burst_B[0] / 1024:.0f} KiB per link direction")
    return (f"multihost token bucket: {burst} (hosts[].burst_kb, else "
            "multihost/cluster.py's LINK_BURST_BYTES); MPI eager limit "
            f"{net.eager_B // 1024} KiB (btl_tcp_eager_limit default)")


def print_validation(rows, calib, out=print, host_model="", extra=()):
    out(f"Calibration (host CPU: {host_model}):")
    for line in list(calib.describe()) + list(extra):
        out("  " + line)
    out("\nPredicted vs measured samples/s (measured: median trial, [min-max] over "
        f"trials); '!!' marks |error| > {TOLERANCE:.0%}")
    head = (f"  {'case':<34} {'method':<16} {'measured':>8} {'range':>13} {'predicted':>9} "
            f"{'error':>7}")
    out(head)
    out("  " + "-" * (len(head) - 2))
    for r in rows:
        if "status" in r:
            out(f"  {r['case']:<34} {'(all)':<16} {r['status']} (not in {r['file']})")
            continue
        rng = f"{r['measured_min']:.0f}-{r['measured_max']:.0f}" if r["trials"] > 1 else "1 trial"
        mark = "" if r["within"] else "  !!"
        out(f"  {r['case']:<34} {LABELS[r['method']]:<16} {r['measured']:8.0f} {rng:>13} "
            f"{r['predicted']:9.0f} {100 * r['error']:+6.1f}%{mark}")
    done = [r for r in rows if "error" in r]
    if done:
        within = sum(r["within"] for r in done)
        mae = statistics.mean(abs(r["error"]) for r in done)
        out(f"\n  {within}/{len(done)} rows within {TOLERANCE:.0%}; mean |error| "
            f"{100 * mae:.1f}%")
