#!/usr/bin/env python
"""Time to accuracy, as a matrix: tasks x data x imbalance patterns x methods x seeds.

Does a user of WAGMA reach the same accuracy sooner than with Horovod or local SGD, on
ranks of uneven speed? The protocol (tasks, clock, snapshots, report, targets):
docs/benchmarks.md, "Time to accuracy".

    python bench/time_to_accuracy.py [--framework torch|keras] [--np 8]
        [--tasks mlp,cnn,seq] [--data iid,noniid] [--patterns random,persistent]
        [--seeds 3] [--budget S] [--methods horovod localsgd hier diloco wagma ...]
        [--time-scale 4]

``--time-scale X`` multiplies every sleep, the budget and the snapshot interval; each
run records the host's CPU busy share (bench/host_load.py), printed beside it.

Rank 0 writes bench/results/[keras_]time_to_accuracy.json (every curve) and a PNG of
accuracy against wall time for one case (``--plot-case``).
"""
import math
import os
import statistics
import time

from adapters import keras_accuracy, keras_flatten, keras_mlp_and_optimizer, keras_sum, \
    torch_accuracy, torch_flatten, torch_sum
import harness
from host_load import fmt_busy
from measure import Evaluation, Snapshots, after_clock, clocked_run, final_accuracy, ratio, \
    time_to_target
import methods as registry
import plot
import tasks as task_lib
from table import fmt_spread, fmt_time, print_table, spread

TARGET_VS_HOROVOD, TARGET_VS_LOCAL = 0.7, 0.8
TARGET_VS_PEER = 0.8   # random imbalance: WAGMA's time over each real peer's
# Seconds of training per run: Horovod, whose step lasts the slowest rank's (50 ms
# random, 20 ms persistent), needs ~200-280 steps to reach the targets (bench/tasks.py).
BUDGET = {"random": 16.0, "persistent": 8.0}
DEFAULTS = {  # per framework: tasks, data, patterns, methods
    "torch": ("mlp,cnn,seq", "iid,noniid", "random,persistent",
              ["horovod", "localsgd", "hier", "diloco", "wagma"]),
    "keras": ("mlp", "noniid", "random", ["horovod", "wagma"])}


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = harness.parser(__doc__, np=8, timeout=3600)
    harness.add_framework(p)
    harness.add_methods(p)
    p.add_argument("--tasks", help="comma-separated subset of mlp,cnn,seq and the held-out "
                        "tasks of bench/tasks.py (Keras: mlp)")
    p.add_argument("--data", help="iid, noniid or both (comma)")
    p.add_argument("--patterns", help="random, persistent or both (comma)")
    harness.add_seeds(p)
    p.add_argument("--budget", type=float, default=None,
                   help=f"seconds of training per run (default: random "
                        f"{BUDGET['random']:g}, persistent {BUDGET['persistent']:g})")
    p.add_argument("--interval", type=float, default=0.25,
                   help="seconds between model snapshots (default 0.25)")
    p.add_argument("--eval-every", type=int, default=25,
                   help="steps between evaluations averaged through a Horovod "
                        "allreduce; their compute is off the clock (default 25; 0: never)")
    p.add_argument("--tau", type=int, default=10,
                   help="period of the local-SGD baselines and of Horovod's budget "
                        "checks (default 10; WAGMA's own default applies to wagma)")
    harness.add_pattern_args(p, one_pattern=False)
    harness.add_time_scale(p)
    harness.add_outputs(p)
    p.add_argument("--plot-case", default=None,
                   help="task/data/pattern of the plotted case (default: the first)")
    args = p.parse_args(argv)
    harness.check_pattern_args(p, args)
    harness.scale_times(p, args, "budget", "interval", "step_time", "delay")
    tasks, data, patterns, specs = DEFAULTS[args.framework]
    keras = args.framework == "keras"
    args.tasks = harness.choices(p, "--tasks", args.tasks or tasks,
                                 ("mlp",) if keras else tuple(task_lib.ALL_TASKS))
    args.data = harness.choices(p, "--data", args.data or data, ("iid", "noniid"))
    args.patterns = harness.choices(p, "--patterns", args.patterns or patterns,
                                    ("random", "persistent"))
    supported = ("horovod", "wagma") if keras else tuple(registry.KEYS)
    specs = harness.check_methods(p, args.methods or specs, supported,
                                  registry.KERAS_UNSUPPORTED if keras else ())
    args.methods = ["horovod"] + [m for m in specs if m != "horovod"]
    if args.seeds < 1 or args.interval <= 0 or (args.budget is not None and args.budget <= 0):
        p.error("need --seeds >= 1, --interval > 0, --budget > 0")
    stem = ("keras_" if keras else "") + "time_to_accuracy"
    args.json = harness.output_path(args.json, stem + ".json")
    args.plot = harness.output_path(args.plot, stem + ".png")
    return args


# -- the frameworks (the shared pieces: adapters.py) ----------------------------------
class Torch:
    def setup(self, comm):
        self.hvd = harness.start_torch()
        harness.init_gloo(comm)
        return ""

    def batches(self, task, rank, size, data, rows, seed):
        return task.batches(rank, size, data, rows, seed)

    def train(self, spec, j, task, seed, args, run):
        """One method on one seed; returns the run's curve and pace (rank 0)."""
        import torch
        hvd, comm, rank = self.hvd, run["comm"], run["rank"]
        model, method = registry.build_for_task(spec, task, seed, hvd, comm.Get_size(),
                                                args.tau)
        sched, batches = run["sched"], run["batches"]
        snaps = Snapshots(*torch_flatten(model), args.interval, run["budget"])

        def one_step(i):
            b = batches[i % len(batches)]
            time.sleep(sched[i % len(sched), rank] * task.compute_scale(b))
            method.zero_grad()
            task.loss(model, b).backward()
            method.step()

        def metric():
            with torch.no_grad():
                return float(task.loss(model, batches[0]))
        evaluation = Evaluation(args.eval_every, metric,
                                lambda values: torch_sum(hvd, values, "tta.eval")) \
            if args.eval_every and getattr(method, "meets_collectives", True) else None
        steps, wall, busy = clocked_run(comm, run["budget"], snaps, one_step,
                                        method.lockstep, method.synced, evaluation)
        rounds = method.rounds() if hasattr(method, "rounds") else None
        method.finish()
        accuracy = torch_accuracy(task, seed)
        waits = comm.gather(evaluation.collective_s if evaluation else 0.0, root=0)
        return after_clock(comm, snaps, accuracy, steps, wall,
                           {"eval_collective_s_per_rank": waits, "cpu_busy": busy,
                            "sync_rounds_per_rank": comm.gather(rounds, root=0)})


class Keras:
    """The mlp task's 64-128-128-10 ReLU MLP in Keras 2 (tf_keras), seeded; a
    ``tf.function`` step (``optimizer.minimize``, as Keras' train step), traced before
    the clock starts, runs in the same Python loop as the PyTorch one."""

    def setup(self, comm):
        self.k = harness.start_keras()
        tf = self.k.tf
        return f"; TF {tf.__version__}, tf.keras = {tf.keras.__name__}"

    def train(self, spec, j, task, seed, args, run):
        k, comm, rank = self.k, run["comm"], run["rank"]
        tf, np = k.tf, k.np
        model, (opt, lockstep, synced) = keras_mlp_and_optimizer(k, f"m{j}_s{seed}", spec,
                                                                 task, seed, args.tau)
        weights = model.trainable_variables
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        @tf.function(input_signature=[tf.TensorSpec((task.batch, task.DIM), tf.float32),
                                      tf.TensorSpec((task.batch,), tf.int64)])
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            opt.minimize(loss, weights, tape=tape)

        step.get_concrete_function()   # traced (slots created) outside the clock
        sched, batches = run["sched"], run["batches"]
        x, y = task.x_train.numpy(), task.y_train
        snaps = Snapshots(*keras_flatten(k, model), args.interval, run["budget"])

        def one_step(i):
            b = batches[i % len(batches)]
            time.sleep(sched[i % len(sched), rank])   # mlp: compute_scale 1
            step(x[b], y[b])
        x0, y0 = x[batches[0]], y[batches[0]]
        evaluation = Evaluation(
            args.eval_every, lambda: float(loss_fn(y0, model(x0, training=False))),
            lambda values: keras_sum(tf, k.hvd_tf, values, "tta.eval")) \
            if args.eval_every else None
        steps, wall, busy = clocked_run(comm, run["budget"], snaps, one_step, lockstep,
                                        synced, evaluation)
        if not lockstep:
            opt.join()
        return after_clock(comm, snaps, keras_accuracy(k, model, task), steps, wall,
                           {"cpu_busy": busy})

    def batches(self, task, rank, size, data, rows, seed):
        return [b.numpy() for b in task.batches(rank, size, data, rows, seed)]


# -- analysis -------------------------------------------------------------------------
def sync_rounds(run):
    """', N-M sync rounds' (the range over ranks) for a method that counts them."""
    counts = [c for c in run.get("sync_rounds_per_rank") or () if c is not None]
    return f", {min(counts)}-{max(counts)} sync rounds" if counts else ""


def analyse_case(runs, methods, target):
    """Per-method rows of one case (runs: every method and seed of it)."""
    by = {m: {r["seed"]: r for r in runs if r["method"] == m} for m in methods}
    times = {m: {s: time_to_target(r, target) for s, r in by[m].items()} for m in methods}
    med = {m: spread(times[m].values())[0] for m in methods}
    baselines = [m for m in methods if registry.family(m) in registry.BASELINES]
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
            "x_horovod": spread(vs_h),
            "x_best_local": spread(vs_l),
            # WAGMA's (the defaults') time as a multiple of this method's, per seed.
            "wagma_x": spread([ratio(times["wagma"][s], times[m][s]) for s in seeds])
            if "wagma" in times and m != "wagma" else None,
            "steps_per_s": statistics.median(by[m][s]["steps_per_s"] for s in seeds),
            "final_acc": statistics.median(final_accuracy(by[m][s]) for s in seeds),
        }
    return rows, best_local


def verdict(case, row, best_local):
    """The targets for the library's defaults ('wagma'); random imbalance with no
    local-SGD baseline in the case (best_local None): the target vs Horovod only."""
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


def peer_verdict(case, row):
    """Under random imbalance, WAGMA's defaults against a real peer: the target
    WAGMA ≤ TARGET_VS_PEER x the peer's time (median over seeds); a peer that reached
    the target in no seed within the budget has lost (WAGMA's own row says whether
    it reached it)."""
    w = row["wagma_x"]
    if case[2] != "random":
        return ""
    if row["reached"] == 0:
        return "peer target met (the peer never reached it)"
    if w is None:
        return ""
    return "peer target met" if w[0] <= TARGET_VS_PEER else "peer target MISSED"


def case_name(case):
    return "/".join(case)


# -- reporting ------------------------------------------------------------------------
def print_case(case, rows, best_local, target, budget):
    print(f"\n{case_name(case)}: target {target:g}%, budget {budget:g} s; "
          f"best local-SGD baseline: {best_local}")
    table = [["method", "time to target s", "reached", "x Horovod", "x best local",
              "wagma x this", "steps/s", "final acc %", ""]]
    for m, r in rows.items():
        table.append([m, fmt_spread(r["time"]), f"{r['reached']}/{r['seeds']}",
                      fmt_spread(r["x_horovod"]), fmt_spread(r["x_best_local"]),
                      fmt_spread(r["wagma_x"]), f"{r['steps_per_s']:.1f}",
                      f"{r['final_acc']:.2f}",
                      verdict(case, r, best_local) if m == "wagma" else
                      peer_verdict(case, r) if registry.family(m) in registry.PEERS
                      else ""])
    print_table(table)


def print_summary(results, methods):
    wagmas = [m for m in methods if registry.family(m) == "wagma"]
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
    print_table(table)


def plot_case(case, runs, methods, target, path):
    """Accuracy against wall time of every method and seed of one case."""
    series = []
    for i, m in enumerate(methods):
        mine = sorted((r for r in runs if r["method"] == m), key=lambda r: r["seed"])
        for j, r in enumerate(mine):
            label = (f"{m} (seed {r['seed']}: {fmt_time(time_to_target(r, target))} s)"
                     if j == 0 else None)
            series.append((i, r["curve"], label, j == 0))
    lo = min(p[1] for r in runs for p in r["curve"][len(r["curve"]) // 5:])
    plot.curves(path, series, target, "wall time, s",
                "held-out accuracy of the rank-averaged model, %",
                f"Time to accuracy, {case_name(case)}, P={runs[0]['ranks']} "
                "(thin: other seeds)", (max(0, lo - 3), min(100, target + 6)))


# -- the driver -----------------------------------------------------------------------
def run(args):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    framework = Torch() if args.framework == "torch" else Keras()
    versions = framework.setup(comm)
    if rank == 0:
        print(f"P={size}; {args.framework}{versions}; methods {' '.join(args.methods)}; "
              f"seeds {args.first_seed}..{args.first_seed + args.seeds - 1}; "
              + "; ".join(harness.describe_pattern(harness.with_pattern(args, p), size)
                          for p in args.patterns), flush=True)
    started = time.time()
    all_runs, results = [], {}
    for task_name in args.tasks:
        for data in args.data:
            for pattern in args.patterns:
                case = (("keras-" if args.framework == "keras" else "") + task_name,
                        data, pattern)
                runs = run_case(framework, case, task_name, args, comm)
                if rank == 0:
                    all_runs += runs
                    target = task_lib.ALL_TASKS[task_name].target
                    rows, best = analyse_case(runs, args.methods, target)
                    results[case_name(case)] = {"rows": rows, "best_local": best,
                                                "target": target}
                    print_case(case, rows, best, target, runs[0]["budget"])
    if rank == 0:
        print_summary(results, args.methods)
        print(f"\ntotal {time.time() - started:.0f} s")
        plotted = args.plot_case or next(iter(results))
        runs = [r for r in all_runs
                if case_name((r["task"], r["data"], r["pattern"])) == plotted]
        if runs:
            plot_case(tuple(plotted.split("/")), runs, args.methods,
                      results[plotted]["target"], args.plot)
            print(f"wrote {args.plot}")
        harness.write_json(args.json, harness.jsonable({
            "ranks": size, "framework": args.framework, "args": vars(args),
            "results": results, "runs": all_runs}), 1)
    comm.Barrier()
    harness.stop_gloo()


def run_case(framework, case, task_name, args, comm):
    """Every seed and method of one case; rank 0 gets the finished runs."""
    rank, size = comm.Get_rank(), comm.Get_size()
    _, data, pattern = case
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        task = task_lib.ALL_TASKS[task_name](seed)
        budget = args.budget or BUDGET[pattern] * args.time_scale
        rows = int(budget / (0.5 * args.step_time)) + 1
        run = dict(comm=comm, rank=rank, budget=budget, sched=harness.compute_schedule(
            harness.with_pattern(args, pattern), size, rows, seed),
            batches=framework.batches(task, rank, size, data, rows, seed))
        order = list(enumerate(args.methods))
        for j, spec in harness.method_order(order, seed):
            rec = framework.train(spec, j, task, seed, args, run)
            if rank == 0:
                rec.update(method=spec, task=case[0], data=data, pattern=pattern,
                           seed=seed, ranks=size, budget=budget, target=task.target)
                print(f"  {case_name(case)} seed {seed} {spec:28s} target "
                      f"{fmt_time(time_to_target(rec, task.target)):>5} s, final "
                      f"{final_accuracy(rec):.2f}%, {rec['steps_per_s']:.1f} steps/s"
                      + sync_rounds(rec) + f", CPU busy {fmt_busy(rec['cpu_busy'])}",
                      flush=True)
                runs.append(rec)
    return runs


if __name__ == "__main__":
    args = parse_args()
    harness.launch(__file__, args, run, harness.FRAMEWORK_ENV[args.framework])
