#!/usr/bin/env python
"""A discrete-event model of one training run: Horovod vs local SGD vs WAGMA, to 1,024 ranks.

The command line of the simulator in lab/sim/ (the model, its calibration and its
validation; each module's docstring states its part of the model). Results and their
discussion: docs/simulator.md.

Run
---
    python lab/simulate.py --ranks 1024 [--network datacenter|multihost|this_machine]
        [--pattern random|persistent|straggler_host] [--step-time 0.010] [--delay 0.040]
        [--num-delayed 2 | --delayed-fraction F] [--slow-ranks 1|half]
        [--slow-factor 2] [--group-size S] [--sync-period 10] [--steps 200] [--seed 0]
        [--model-bytes N] [--latency-us 5] [--bandwidth-gbit 100] [--ranks-per-host 4]
        [--cpu-model fair|rr|ps] [--cpu-jitter exp|none]
    python lab/simulate.py --validate       # predicted vs measured, every result file
    python lab/simulate.py --sweep          # 8..1024 ranks -> simulate_sweep.{png,json}
    python lab/simulate.py --defaults       # S and tau at P=1024 -> simulate_defaults.*
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.join(os.path.dirname(HERE), "bench")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import harness  # noqa: E402  (bench/harness.py: the benchmarks' pattern flags)
from sim.calibration import read_calibration  # noqa: E402
from sim.common import CALIBRATION_DIR, METHODS, MODEL_BYTES, RESULTS_DIR, CalibrationError  # noqa: E402
from sim.cpu import CPU_MODELS  # noqa: E402
from sim.flags import network_for, scenario_for  # noqa: E402
from sim.report import print_prediction  # noqa: E402
from sim.run import simulate  # noqa: E402
from sim.sweeps import defaults_sweep, sweep  # noqa: E402
from sim.validation import validate  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = p.add_mutually_exclusive_group()
    what.add_argument("--ranks", type=int, help="predict P ranks (default 1024)")
    what.add_argument("--validate", action="store_true",
                      help="predicted vs measured for every result file")
    what.add_argument("--sweep", action="store_true",
                      help="ranks 8..1024 -> lab/results/simulate_sweep.{png,json}")
    what.add_argument("--defaults", action="store_true",
                      help="S 2..64 and tau 1..64 at P=1024 -> simulate_defaults.*")
    p.add_argument("--network", choices=("this_machine", "multihost", "datacenter"),
                   default="datacenter", help="default datacenter")
    p.add_argument("--pattern", choices=("random", "persistent", "straggler_host"),
                   default="random")
    harness.add_pattern_args(p, one_pattern=False)   # the benchmarks' own flags
    p.add_argument("--delayed-fraction", type=float, default=None,
                   help="random: delay this fraction of the ranks per step (overrides "
                        "--num-delayed; 0.25 = the measured P=8 case's 2 of 8)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--group-size", type=int, default=None,
                   help="default: the library's (smallest power of 2 >= sqrt(P))")
    p.add_argument("--sync-period", type=int, default=10)
    p.add_argument("--max-staleness", type=int, default=None, help="default: tau")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--model-bytes", type=int, default=MODEL_BYTES,
                   help=f"bytes averaged per step (default {MODEL_BYTES}: the benchmark MLP)")
    p.add_argument("--latency-us", type=float, default=5.0,
                   help="datacenter: host-to-host message latency (default 5 us)")
    p.add_argument("--bandwidth-gbit", type=float, default=100.0,
                   help="datacenter: network bandwidth per GPU, one NIC each (default "
                        "100 Gbit/s)")
    p.add_argument("--overhead-us", type=float, default=0.5,
                   help="datacenter: per-message injection overhead (default 0.5 us)")
    p.add_argument("--ranks-per-host", type=int, default=4,
                   help="datacenter: ranks (GPUs) per host (default 4)")
    p.add_argument("--cores", type=float, default=None,
                   help="host cores (default os.cpu_count())")
    p.add_argument("--cpu-model", choices=tuple(CPU_MODELS), default="fair",
                   help="host CPU sharing: fair = least virtual runtime first, with the "
                        "kernel's time slice (default); rr = round robin; ps = processor "
                        "sharing")
    p.add_argument("--cpu-jitter", choices=("exp", "none"), default="exp",
                   help="CPU job lengths: exponential around the calibrated mean "
                        "(default) or exact")
    p.add_argument("--calibration-dir", default=CALIBRATION_DIR,
                   help="the measured files the model is calibrated and validated on "
                        "(default lab/calibration)")
    p.add_argument("--results-dir", default=RESULTS_DIR,
                   help="where --sweep/--defaults write (default lab/results)")
    p.add_argument("--tag", default="",
                   help="--sweep/--defaults: suffix of the output files (simulate_sweep_TAG.*)")
    args = p.parse_args(argv)
    if not (args.validate or args.sweep or args.defaults) and args.ranks is None:
        args.ranks = 1024
    if args.pattern == "straggler_host" and args.network == "this_machine":
        p.error("straggler_host needs hosts: --network multihost or datacenter")
    if args.sync_period < 1 or args.steps < 1:
        p.error("need --sync-period >= 1, --steps >= 1")
    harness.check_pattern_args(p, args)
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        run(args)
    except CalibrationError as e:
        raise SystemExit(f"simulate: {e}")


def run(args):
    calib = read_calibration(args.calibration_dir, args.cores)
    if args.validate:
        validate(calib, args.calibration_dir, cpu_model=args.cpu_model,
                 cpu_jitter=args.cpu_jitter)
        return
    if args.sweep:
        sweep(args, calib)
        return
    if args.defaults:
        defaults_sweep(args, calib)
        return
    t0 = time.time()
    net = network_for(args, args.ranks)
    scn = scenario_for(args, args.ranks)
    res = simulate(scn, net, calib, METHODS, args.cpu_model, args.cpu_jitter)
    print_prediction(res, scn, calib, time.time() - t0)


if __name__ == "__main__":
    main()
