#!/usr/bin/env python
"""Time to accuracy, as a matrix: tasks x data x imbalance patterns x methods x seeds.

The product's verdict: does a user of WAGMA reach the same accuracy sooner than with
Horovod or local SGD, on ranks of uneven speed? Every case (task, data, pattern) runs
every method (bench/tta_methods.py) on every seed, side by side in one launch; the
order of the methods is reversed from one seed to the next so slow drift of the host's
background load does not favour one method.

Cases
-----
* tasks (bench/tasks.py): ``mlp`` (Gaussian mixture), ``cnn`` (scikit-learn digits),
  ``seq`` (variable-length sequences: a batch's compute grows with its padded length).
  Each has a target accuracy fixed in advance.
* data: ``iid``, or ``noniid`` (80% of each rank's batch from its 2 home classes).
* patterns (bench/harness.py; a sleep stands in for accelerator compute, scaled by the
  task's ``compute_scale`` of the batch): ``random`` (the paper's: every step
  ``--step-time``, ``--num-delayed`` ranks drawn per step sleep ``--delay`` more) and
  ``persistent`` (rank 0 always takes ``--slow-factor`` x the step).
* seeds: each seed changes the data, the initial model (the same on every rank), the
  batches and the imbalance schedule; every method of a seed gets the same ones.

The clock and the accuracy
--------------------------
After a barrier every rank trains for ``--budget`` seconds of wall time. Like a user's
script, every ``--eval-every`` steps (25) every rank evaluates (the loss of one batch)
and averages the number through a Horovod allreduce, at the same step count on every
rank; the evaluation's compute is taken off the clock, the collective (with any wait
there for slower ranks) stays on it, so a method that waits, or hangs, beside a
Horovod collective shows it in the verdict. That allreduce also carries "past the
budget?": every method stops at the first evaluation past the budget. (With
``--eval-every 0``, lockstep methods check the budget where they synchronise anyway
and wait-avoiding global rounds stop each rank at its own deadline and then
``join()``.) Nothing stops the clock: every
``--interval`` seconds each rank keeps a copy of its model *as it was at that moment*
(the model before the step under way). After the run, outside the clock, the copies
are averaged over the ranks and the held-out accuracy of each averaged model is
measured. That is the model a user gets by averaging (``sync()``) at that time; for
Horovod all copies are equal. Time to target = the first snapshot time whose accuracy
reaches the task's target (resolution ``--interval``); "inf" when never reached.

Report
------
Per case: for every method the median time to target over the seeds with its range,
how many seeds reached it, the ratios to Horovod and to the best local-SGD baseline
(the member of {localsgd, hier, diloco} with the lowest median time in that case), each
computed per seed and reported as median [min-max], steps/s (median over ranks of each
rank's steps per second, median over seeds) and the final accuracy (mean of the last 3
snapshots). Then a summary table: one row per case, the ratios of each WAGMA variant,
and the verdict of the issue's targets for ``wagma`` (the library's defaults): random
imbalance <= 0.7x Horovod and <= 0.8x the best local-SGD baseline; persistent <= 0.7x
Horovod. Outputs (rank 0): bench/results/time_to_accuracy.json (every curve) and an
accuracy-against-wall-time PNG of one case (``--plot-case``).

Run
---
    python bench/time_to_accuracy.py [--np 8] [--tasks mlp,cnn,seq] [--data iid,noniid]
        [--patterns random,persistent] [--seeds 3] [--budget 12]
        [--methods horovod localsgd hier diloco wagma 'wagma:rule=local' ...]

Run directly, the script re-launches itself under ``mpirun --oversubscribe``.
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
import argparse  # noqa: E402
import json
import math
import os
import statistics
import time

import harness
import tasks as task_lib
import tta_methods
from mpi_launch import relaunch_under_mpirun

DEFAULT_METHODS = ["horovod", "localsgd", "hier", "diloco", "wagma"]
TARGET_VS_HOROVOD, TARGET_VS_LOCAL = 0.7, 0.8
# Seconds of training per run: Horovod, whose step lasts the slowest rank's (50 ms
# random, 20 ms persistent), needs ~200-280 steps to reach the targets (bench/tasks.py).
BUDGET = {"random": 16.0, "persistent": 8.0}


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--np", type=int, default=8,
                   help="ranks when the script launches mpirun itself (default 8)")
    p.add_argument("--tasks", default=",".join(task_lib.TASKS),
                   help=f"comma-separated subset of {','.join(task_lib.TASKS)}")
    p.add_argument("--data", default="iid,noniid", help="iid, noniid or both (comma)")
    p.add_argument("--patterns", default="random,persistent",
                   help="random, persistent or both (comma)")
    p.add_argument("--methods", nargs="+", default=DEFAULT_METHODS,
                   help="method specs (bench/tta_methods.py); horovod is always run")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of training per run (default: random "
                        f"{BUDGET['random']:g}, persistent {BUDGET['persistent']:g}: about "
                        "320 of Horovod's steps with the default pattern options)")
    p.add_argument("--interval", type=float, default=0.25,
                   help="seconds between model snapshots (default 0.25)")
    p.add_argument("--eval-every", type=int, default=25,
                   help="every this many steps every rank evaluates and averages the "
                        "metric through a Horovod allreduce, as Horovod's examples do "
                        "each epoch; its compute is off the clock (default 25; 0: never)")
    p.add_argument("--tau", type=int, default=10,
                   help="period of the local-SGD baselines and of Horovod's budget "
                        "checks (default 10; WAGMA's own default applies to wagma)")
    harness.add_pattern_args(p, one_pattern=False)
    p.add_argument("--json", metavar="PATH",
                   default=os.path.join(harness.RESULTS_DIR, "time_to_accuracy.json"))
    p.add_argument("--plot", metavar="PATH",
                   default=os.path.join(harness.RESULTS_DIR, "time_to_accuracy.png"))
    p.add_argument("--plot-case", default=None,
                   help="task/data/pattern of the plotted case (default: the first)")
    p.add_argument("--timeout", type=int, default=3600,
                   help="seconds before the self-launched mpirun kills the job")
    args = p.parse_args(argv)
    harness.check_pattern_args(p, args)
    args.tasks = _choices(p, "--tasks", args.tasks, task_lib.TASKS)
    args.data = _choices(p, "--data", args.data, ("iid", "noniid"))
    args.patterns = _choices(p, "--patterns", args.patterns, ("random", "persistent"))
    for spec in args.methods:
        try:
            tta_methods.parse_spec(spec)
        except ValueError as e:
            p.error(str(e))
    args.methods = ["horovod"] + [m for m in dict.fromkeys(args.methods) if m != "horovod"]
    if args.seeds < 1 or args.interval <= 0 or (args.budget is not None and args.budget <= 0):
        p.error("need --seeds >= 1, --interval > 0, --budget > 0")
    return args


def _choices(p, flag, text, allowed):
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in chosen if c not in allowed]
    if bad or not chosen:
        p.error(f"{flag}: choose from {','.join(allowed)}, got {text!r}")
    return chosen


def pattern_args(args, pattern):
    """The harness's pattern options for one pattern of the matrix."""
    return argparse.Namespace(**dict(vars(args), pattern=pattern))


# -- one run ----------------------------------------------------------------------------
class Snapshots:
    """Copies of the model at times interval, 2 interval, ..., budget (and 0): at the
    end of each step, every slot time the step spanned gets the model from before the
    step, which is the model the rank had at that time. ``flatten(out)`` writes the
    model into ``out``, a float32 numpy vector of ``numel`` elements (any framework)."""

    def __init__(self, flatten, numel, interval, budget):
        import numpy as np
        self.flatten = flatten
        self.interval = interval
        self.slots = int(budget / interval + 1e-9)
        self.store = np.empty((self.slots + 1, numel), np.float32)
        self.prev = 0   # the slot holding the model from before the step under way
        self.flatten(self.store[0])
        self.filled = 1

    def before_step(self):
        self.prev = self.filled if self.filled <= self.slots else None
        if self.prev is not None:
            self.flatten(self.store[self.prev])

    def after_step(self, now):
        if self.prev is None:
            return
        while self.filled <= self.slots and self.filled * self.interval <= now:
            if self.filled != self.prev:
                self.store[self.filled] = self.store[self.prev]
            self.filled += 1

    def finish(self):
        """Slots after the rank's last step: its final model."""
        while self.filled <= self.slots:
            self.flatten(self.store[self.filled])
            self.filled += 1


def torch_flatten(model):
    """(flatten, numel) of a torch model's parameters, for Snapshots."""
    import torch
    params = list(model.parameters())

    def flatten(out):
        with torch.no_grad():
            torch.cat([p.detach().reshape(-1) for p in params], out=torch.from_numpy(out))
    return flatten, sum(p.numel() for p in params)


def train(spec, task, case, seed, args, ctx):
    """One method on one case and seed; returns the accuracy curve (rank 0) and the
    per-rank pace."""
    comm, rank, size = ctx["comm"], ctx["rank"], ctx["size"]
    hvd = ctx["hvd"]
    _, data, pattern = case
    model = task.make_model(seed)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    method = tta_methods.build(spec, model, task, ctx)
    budget = ctx["budget"]
    sched, batches = ctx["sched"], ctx["batches"]
    snaps = Snapshots(*torch_flatten(model), args.interval, budget)

    def one_step(i):
        b = batches[i % len(batches)]
        time.sleep(sched[i % len(sched), rank] * task.compute_scale(b))
        method.zero_grad()
        task.loss(model, b).backward()
        method.step()
    evaluation = torch_evaluation(args, hvd, model, task, batches[0])
    steps, wall = clocked_run(comm, budget, snaps, one_step, method.lockstep,
                              method.synced, evaluation)
    method.finish()
    snaps.finish()
    curve = evaluate(snaps, task, seed, comm)
    rates = comm.gather(steps / wall, root=0)
    waits = comm.gather(evaluation.collective_s if evaluation else 0.0, root=0)
    del method
    if rank == 0:
        return {"method": spec, "task": case[0], "data": data, "pattern": pattern,
                "seed": seed, "curve": curve, "steps_per_s_per_rank": rates,
                "steps_per_s": statistics.median(rates),
                "eval_collective_s_per_rank": waits}
    return None


class Evaluation:
    """The common loop shape: every ``every`` steps, on every rank at the same step
    count, an evaluation whose metric is averaged through a Horovod collective (as
    Horovod's examples' ``metric_average`` does). ``metric()`` computes this rank's
    number; ``allreduce(values)`` sums a list of floats over the ranks through
    Horovod. The collective also carries "past the budget?", so every rank stops at
    the same evaluation."""

    def __init__(self, every, metric, allreduce):
        self.every, self.metric, self.allreduce = every, metric, allreduce
        self.compute_s = 0.0  # the metric's own compute, kept off the clock
        self.collective_s = 0.0  # time in the collective, waits included: on the clock

    def __call__(self, past_budget):
        """Runs one evaluation; returns whether any rank is past the budget."""
        t0 = time.perf_counter()
        value = self.metric()
        t1 = time.perf_counter()
        total = self.allreduce([value, 1.0 if past_budget else 0.0])
        self.compute_s += t1 - t0
        self.collective_s += time.perf_counter() - t1
        return total[1] > 0


def clocked_run(comm, budget, snaps, one_step, lockstep, synced, evaluation=None):
    """The clock of a run (module docstring): a barrier, then ``one_step(i)`` (the
    compute sleep and the training step i) until the budget; lockstep methods agree
    on stopping where ``synced(i)``. With an ``Evaluation``, every method runs it
    every ``evaluation.every`` steps and all stop together at the first one past the
    budget; its compute time is taken off the clock, its collective (including any
    wait there for slower ranks) stays on it. Returns (steps, wall seconds)."""
    from mpi4py import MPI
    steps = 0
    comm.Barrier()
    t0 = time.perf_counter()
    while True:
        snaps.before_step()
        one_step(steps)
        now = time.perf_counter() - t0 - (evaluation.compute_s if evaluation else 0.0)
        snaps.after_step(now)
        steps += 1
        if evaluation is not None:
            if steps % evaluation.every == 0 and evaluation(now >= budget):
                break
        elif lockstep:
            if synced(steps - 1) and comm.allreduce(now >= budget, op=MPI.LOR):
                break
        elif now >= budget:
            break
    return steps, time.perf_counter() - t0 - (evaluation.compute_s if evaluation else 0.0)


def torch_evaluation(args, hvd, model, task, batch):
    """An Evaluation of the held-out loss on one batch (or None with --eval-every 0)."""
    if not args.eval_every:
        return None
    import torch

    def metric():
        with torch.no_grad():
            return float(task.loss(model, batch))
    return Evaluation(args.eval_every, metric, lambda values: hvd.allreduce(
        torch.tensor(values, dtype=torch.float64), op=hvd.Sum, name="tta.eval").tolist())


def evaluate(snaps, task, seed, comm):
    """Held-out accuracy of the rank-averaged model at every snapshot time: the
    averages are split over the ranks, rank 0 gets the curve."""
    import torch
    from torch.nn.utils import vector_to_parameters
    model = task.make_model(seed)

    def accuracy(flat):
        vector_to_parameters(torch.from_numpy(flat), model.parameters())
        return task.accuracy(model)
    return evaluate_snapshots(snaps, accuracy, comm)


def evaluate_snapshots(snaps, accuracy, comm):
    """[[time, accuracy(rank-averaged snapshot)], ...] on rank 0 (None elsewhere);
    ``accuracy(flat)`` evaluates one flat model, the snapshots are split over ranks."""
    import numpy as np
    from mpi4py import MPI
    rank, size = comm.Get_rank(), comm.Get_size()
    avg = np.empty_like(snaps.store)
    comm.Allreduce(snaps.store, avg, op=MPI.SUM)
    avg /= size
    mine = {k: accuracy(avg[k]) for k in range(rank, len(avg), size)}
    parts = comm.gather(mine, root=0)
    if rank != 0:
        return None
    accs = {k: a for part in parts for k, a in part.items()}
    return [[k * snaps.interval, accs[k]] for k in range(len(avg))]


# -- analysis -------------------------------------------------------------------------
def time_to_target(run, target):
    return next((t for t, acc in run["curve"] if acc >= target), math.inf)


def final_accuracy(run):
    accs = [acc for _, acc in run["curve"][-3:]]
    return sum(accs) / len(accs)


def spread(values):
    """(median, min, max); inf counts as the largest value."""
    vals = sorted(values)
    return statistics.median(vals), vals[0], vals[-1]


def ratio(a, b):
    if b == math.inf or b == 0:
        return math.nan
    return a / b


def analyse_case(runs, methods, target):
    """Per-method rows of one case (runs: every method and seed of it)."""
    by = {m: {r["seed"]: r for r in runs if r["method"] == m} for m in methods}
    times = {m: {s: time_to_target(r, target) for s, r in by[m].items()} for m in methods}
    med = {m: spread(times[m].values())[0] for m in methods}
    baselines = [m for m in methods if tta_methods.family(m) in tta_methods.BASELINES]
    best_local = min(baselines, key=lambda m: (med[m], m)) if baselines else None
    rows = {}
    for m in methods:
        seeds = sorted(times[m])
        vs_h = [ratio(times[m][s], times["horovod"][s]) for s in seeds]
        vs_l = [ratio(times[m][s], times[best_local][s]) for s in seeds] \
            if best_local else []
        rows[m] = {
            "time": spread(times[m].values()),
            "reached": sum(t < math.inf for t in times[m].values()),
            "seeds": len(seeds),
            "x_horovod": _ratio_spread(vs_h),
            "x_best_local": _ratio_spread(vs_l),
            "steps_per_s": statistics.median(by[m][s]["steps_per_s"] for s in seeds),
            "final_acc": statistics.median(final_accuracy(by[m][s]) for s in seeds),
        }
    return rows, best_local


def _ratio_spread(values):
    vals = [v for v in values if not math.isnan(v)]
    return spread(vals) if vals else None


def verdict(case, row, best_local):
    """The issue's targets for the library's defaults ('wagma'); random imbalance with
    no local-SGD baseline in the case (best_local None): the target vs Horovod only."""
    _, _, pattern = case
    h = row["x_horovod"]
    ok_h = h is not None and h[0] <= TARGET_VS_HOROVOD
    if pattern == "persistent":
        return "met" if ok_h else "MISSED"
    if best_local is None:
        return ("met" if ok_h else "MISSED") + " (x Horovod only)"
    l_ = row["x_best_local"]
    ok_l = l_ is not None and l_[0] <= TARGET_VS_LOCAL
    return "met" if ok_h and ok_l else "MISSED"


def fmt_time(t):
    return "inf" if t == math.inf else f"{t:.2f}"


def fmt_spread(s, unit=""):
    if s is None:
        return "-"
    med, lo, hi = s
    return f"{fmt_time(med)}{unit} [{fmt_time(lo)}-{fmt_time(hi)}]"


def case_name(case):
    return "/".join(case)


def print_case(case, rows, best_local, target, budget):
    print(f"\n{case_name(case)}: target {target:g}%, budget {budget:g} s; "
          f"best local-SGD baseline: {best_local}")
    table = [["method", "time to target s", "reached", "x Horovod", "x best local",
              "steps/s", "final acc %", ""]]
    for m, r in rows.items():
        table.append([m, fmt_spread(r["time"]), f"{r['reached']}/{r['seeds']}",
                      fmt_spread(r["x_horovod"]), fmt_spread(r["x_best_local"]),
                      f"{r['steps_per_s']:.1f}", f"{r['final_acc']:.2f}",
                      verdict(case, r, best_local) if m == "wagma" else ""])
    harness.print_table(table)


def print_summary(results, methods):
    wagmas = [m for m in methods if tta_methods.family(m) == "wagma"]
    print("\nSummary: median over seeds of each WAGMA variant's time to target, "
          "x Horovod / x best local-SGD baseline")
    table = [["case", "best local"] + wagmas + ["verdict (wagma)"]]
    for name, res in results.items():
        rows = res["rows"]
        cells = []
        for m in wagmas:
            h, l_ = rows[m]["x_horovod"], rows[m]["x_best_local"]
            cells.append(f"{fmt_time(h[0]) if h else '-'} / "
                         f"{fmt_time(l_[0]) if l_ else '-'}")
        table.append([name, res["best_local"] or "-"] + cells +
                     [verdict(tuple(name.split("/")), rows["wagma"], res["best_local"])
                      if "wagma" in rows else ""])
    harness.print_table(table)


def plot(case, runs, methods, target, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colours = plt.cm.tab10.colors
    for i, m in enumerate(methods):
        mine = sorted((r for r in runs if r["method"] == m), key=lambda r: r["seed"])
        for j, r in enumerate(mine):
            t = time_to_target(r, target)
            label = f"{m} (seed {r['seed']}: {fmt_time(t)} s)" if j == 0 else None
            ax.plot([p[0] for p in r["curve"]], [p[1] for p in r["curve"]],
                    color=colours[i % 10], lw=1.8 if j == 0 else 0.8,
                    alpha=1.0 if j == 0 else 0.45, label=label)
    ax.axhline(target, color="red", ls=":", lw=1, label=f"target {target:g}%")
    ax.set_xlabel("wall time, s")
    ax.set_ylabel("held-out accuracy of the rank-averaged model, %")
    ax.set_title(f"Time to accuracy, {case_name(case)}, P={runs[0]['ranks']} "
                 f"(thin: other seeds)")
    lo = min(p[1] for r in runs for p in r["curve"][len(r["curve"]) // 5:])
    ax.set_ylim(max(0, lo - 3), min(100, target + 6))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def jsonable(obj):
    if isinstance(obj, float) and (math.isinf(obj) or math.isnan(obj)):
        return str(obj)
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


# -- the driver -----------------------------------------------------------------------
def run(args):
    from mpi4py import MPI  # MPI_THREAD_MULTIPLE, before Horovod and the engine
    import torch
    import torch.distributed as dist
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    hvd.init()
    harness.init_gloo(comm)
    ctx = dict(hvd=hvd, comm=comm, rank=rank, size=size, tau=args.tau,
               default_group_size=hvd.default_group_size(size))
    if rank == 0:
        print(f"P={size}; methods {' '.join(args.methods)}; seeds {args.first_seed}.."
              f"{args.first_seed + args.seeds - 1}; "
              f"{harness.describe_pattern(pattern_args(args, 'random'), size)}; "
              f"{harness.describe_pattern(pattern_args(args, 'persistent'), size)}",
              flush=True)
    started = time.time()
    all_runs, results = [], {}
    for task_name in args.tasks:
        for data in args.data:
            for pattern in args.patterns:
                case = (task_name, data, pattern)
                runs = run_case(case, args, ctx)
                if rank == 0:
                    all_runs += runs
                    task_cls = task_lib.TASKS[task_name]
                    rows, best = analyse_case(runs, args.methods, task_cls.target)
                    results[case_name(case)] = {"rows": rows, "best_local": best,
                                                "target": task_cls.target}
                    print_case(case, rows, best, task_cls.target, runs[0]["budget"])
    if rank == 0:
        print_summary(results, args.methods)
        print(f"\ntotal {time.time() - started:.0f} s")
        plotted = args.plot_case or next(iter(results))
        runs = [r for r in all_runs if case_name((r["task"], r["data"], r["pattern"]))
                == plotted]
        if runs and args.plot:
            plot(tuple(plotted.split("/")), runs, args.methods,
                 results[plotted]["target"], args.plot)
            print(f"wrote {args.plot}")
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as f:
                json.dump(jsonable({"ranks": size, "args": vars(args), "results": results,
                                    "runs": all_runs}), f, indent=1)
            print(f"wrote {args.json}")
    comm.Barrier()
    dist.destroy_process_group()


def run_case(case, args, ctx):
    task_name, data, pattern = case
    comm, rank, size = ctx["comm"], ctx["rank"], ctx["size"]
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        task = task_lib.TASKS[task_name](seed)
        ctx["budget"] = args.budget or BUDGET[pattern]
        rows = int(ctx["budget"] / (0.5 * args.step_time)) + 1
        ctx["sched"] = harness.compute_schedule(pattern_args(args, pattern), size, rows,
                                                seed)
        ctx["batches"] = task.batches(rank, size, data, rows, seed)
        order = args.methods if seed % 2 == 0 else list(reversed(args.methods))
        for spec in order:
            rec = train(spec, task, case, seed, args, ctx)
            if rank == 0:
                runs.append(finished(rec, case, size, ctx["budget"], task.target))
    return runs


def finished(rec, case, ranks, budget, target):
    """Completes a run's record (rank 0) and prints its progress line."""
    rec.update(ranks=ranks, budget=budget, target=target)
    print(f"  {case_name(case)} seed {rec['seed']} {rec['method']:28s} target "
          f"{fmt_time(time_to_target(rec, target)):>5} s, final "
          f"{final_accuracy(rec):.2f}%, {rec['steps_per_s']:.1f} steps/s", flush=True)
    return rec


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout)
    harness.abort_on_error(run, args)


if __name__ == "__main__":
    main()
