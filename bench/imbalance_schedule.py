"""What the imbalance benchmarks (bench/imbalance.py for PyTorch,
bench/keras_imbalance.py for Keras) share: the command line, the seeded delay
schedule, the ideal times computed from it, and the report's table and ratios."""
import argparse


def parse_imbalance_args(description, methods, default_trials, result_name, argv=None):
    """The command line shared by the imbalance benchmarks (torch and Keras)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--np", type=int, default=8,
                   help="ranks when the script launches mpirun itself (default 8)")
    p.add_argument("--steps", type=int, default=200,
                   help="timed steps per method, rounded up to a multiple of "
                        "--sync-period (default 200)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="tau: global average every tau steps (default 10)")
    p.add_argument("--delay", type=float, default=0.040,
                   help="extra seconds slept by each delayed rank (default 0.040)")
    p.add_argument("--step-time", type=float, default=0.010,
                   help="seconds of simulated compute per step (default 0.010)")
    p.add_argument("--num-delayed", type=int, default=2,
                   help="ranks delayed at every step (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the delay schedule")
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size S (default: the library's, smallest power "
                        "of 2 >= sqrt(P))")
    p.add_argument("--methods", default=",".join(methods),
                   help="comma-separated subset of %(default)s")
    p.add_argument("--trials", type=int, default=default_trials,
                   help="timed runs per method, interleaved; best reported")
    p.add_argument("--json", metavar="PATH",
                   help=f"JSON output (default bench/results/{result_name}_P{{P}}.json)")
    p.add_argument("--plot", metavar="PATH",
                   help=f"PNG output (default bench/results/{result_name}_P{{P}}.png)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds before the self-launched mpirun kills the job")
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = set(args.methods) - set(methods)
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}; choose from {','.join(methods)}")
    args.methods = [m for m in methods if m in args.methods]
    if args.sync_period < 2 or args.steps < 1 or args.trials < 1:
        p.error("need --sync-period >= 2, --steps >= 1, --trials >= 1")
    if args.delay < 0 or args.step_time < 0 or args.num_delayed < 0:
        p.error("--delay, --step-time and --num-delayed must be >= 0")
    tau = args.sync_period
    args.steps = -(-args.steps // tau) * tau
    return args


def compute_schedule(seed, steps, P, args):
    """(steps, P) array of nominal compute seconds: step_time, plus delay for the
    num_delayed ranks drawn (without replacement) at every step."""
    import numpy as np
    rng = np.random.default_rng(seed)
    sched = np.full((steps, P), args.step_time)
    k = min(args.num_delayed, P)
    for t in range(steps):
        sched[t, rng.choice(P, size=k, replace=False)] += args.delay
    return sched


def ideal_time(sched, tau):
    """Seconds for the schedule when ranks wait only at global rounds, every tau steps
    (zero communication cost): sum over blocks of the slowest rank's block compute."""
    steps = sched.shape[0]
    return float(sum(sched[b:b + tau].sum(axis=0).max() for b in range(0, steps, tau)))


def bounds(sched, tau):
    """Seconds for the schedule under three idealised models (no communication cost)."""
    return {"ideal": ideal_time(sched, tau),
            "lockstep": float(sched.max(axis=1).sum()),     # a sync every step
            "no_wait": float(sched.sum(axis=0).max())}      # never any waiting


def print_table(rows):
    """Prints rows of strings (the first is the header) as an aligned table; the last
    column is free-form notes."""
    ncol = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(ncol)]
    for i, row in enumerate(rows):
        print("  " + "  ".join(c.rjust(w) if j else c.ljust(w)
                               for j, (c, w) in enumerate(zip(row[:ncol], widths)))
              + ("  " + row[ncol] if row[ncol] else ""))
        if i == 0:
            print("  " + "-" * (sum(widths) + 2 * (ncol - 1)))


def wagma_ratios(rate, others):
    """WAGMA's steps/s over the ideal and over each method in `others` that ran; prints
    them and returns {"wagma_over_X": ratio} (empty when WAGMA did not run)."""
    ratios = {}
    if "wagma" not in rate:
        return ratios
    w = rate["wagma"]
    ratios["wagma_over_ideal"] = w / rate["ideal"]
    if "ideal_measured" in rate:
        ratios["wagma_over_ideal_measured"] = w / rate["ideal_measured"]
    for other in others:
        if other in rate:
            ratios[f"wagma_over_{other}"] = w / rate[other]
    print("\n  ratios: " + ", ".join(f"{k.replace('_over_', '/')} {v:.2f}"
                                     for k, v in ratios.items()))
    return ratios
