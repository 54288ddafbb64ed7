#!/usr/bin/env python
"""Steps to accuracy with no imbalance: how much each method learns per step.

Every rank sleeps the same ``--step-time`` per step (no straggler), so throughput plays
no part: the question is only how far each method gets in a given number of steps.
At step 0 and at steps ``--eval-offset`` + k ``--eval-every`` each rank keeps a copy
of its model (no collective is added to the training loop). The offset (default 5)
puts the snapshots halfway through the default 10-step global period: right after a
global round every rank holds the same model, so snapshots there would hide the
spread a user's evaluation sees at an arbitrary step. After training, off the clock, every snapshot step is
scored three ways:

* ``avg``: the held-out accuracy of the ranks' averaged model (what ``sync()`` gives);
* ``own``: the mean of the ranks' own models' accuracies (what a user's
  ``metric_average`` of a per-rank evaluation reports);
* ``spread``: the consensus distance, sqrt(mean_i ||x_i - x̄||²) / ||x̄||.

    python bench/steps_to_accuracy.py [--np 8] [--tasks mlp,cnn,seq] [--data iid,noniid]
        [--seeds 3] [--steps 400] [--methods horovod localsgd wagma wagma:S=8 ...]

Per case: steps to the task's target (``avg`` and ``own``, x Horovod's, medians and
spread over seeds) and accuracy at equal steps. Rank 0 writes
bench/results/steps_to_accuracy.json with every curve.
"""
import math
import statistics
import time

from adapters import torch_accuracy
import harness
from host_load import HostLoad, fmt_busy
from measure import ratio
import methods as registry
import tasks as task_lib
from table import fmt_spread, print_table, spread

TARGET_IID, TARGET_NONIID = 1.2, 1.4   # steps to target, x Horovod's (the defaults)
OWN_WITHIN = 2.0   # non-IID: own accuracy within this many points of the average's


def parse_args(argv=None):
    p = harness.parser(__doc__, np=8, timeout=5400)
    harness.add_methods(p)
    p.add_argument("--tasks", default="mlp,cnn,seq")
    p.add_argument("--data", default="iid,noniid")
    harness.add_seeds(p)
    p.add_argument("--steps", type=int, default=400, help="steps per run (default 400)")
    p.add_argument("--eval-every", type=int, default=20,
                   help="steps between snapshots (default 20)")
    p.add_argument("--eval-offset", type=int, default=5,
                   help="first snapshot step after 0 (default 5)")
    p.add_argument("--step-time", type=float, default=0.010,
                   help="seconds of simulated compute per step, the same on every "
                        "rank (default 0.010)")
    p.add_argument("--tau", type=int, default=10,
                   help="period of the local-SGD baselines (default 10)")
    harness.add_time_scale(p)
    harness.add_outputs(p, plot=False)
    args = p.parse_args(argv)
    harness.scale_times(p, args, "step_time")
    args.tasks = harness.choices(p, "--tasks", args.tasks, tuple(task_lib.ALL_TASKS))
    args.data = harness.choices(p, "--data", args.data, task_lib.MODES)
    specs = harness.check_methods(p, args.methods or ["horovod", "localsgd", "wagma"],
                                  tuple(registry.KEYS))
    args.methods = ["horovod"] + [m for m in specs if m != "horovod"]
    if args.seeds < 1 or args.steps < 1 or args.eval_every < 1 or args.step_time < 0:
        p.error("need --seeds, --steps, --eval-every >= 1 and --step-time >= 0")
    args.json = harness.output_path(args.json, "steps_to_accuracy.json")
    return args


# -- one run --------------------------------------------------------------------------
def train(hvd, comm, spec, task, seed, batches, args):
    """One method on one seed: every rank's snapshots, scored; curves on rank 0."""
    import numpy as np
    from torch.nn.utils import parameters_to_vector
    rank, size = comm.Get_rank(), comm.Get_size()
    model, method = registry.build_for_task(spec, task, seed, hvd, size, args.tau)
    at = [0] + list(range(args.eval_offset or args.eval_every, args.steps + 1,
                          args.eval_every))
    snaps = []
    comm.Barrier()
    load = HostLoad()
    t0 = time.perf_counter()
    for i in range(at[-1] + 1):
        if i in at:
            snaps.append(parameters_to_vector(model.parameters()).detach().numpy().copy())
        if i == at[-1]:
            break
        time.sleep(args.step_time)
        method.zero_grad()
        task.loss(model, batches[i]).backward()
        method.step()
    wall = time.perf_counter() - t0
    busy = load.busy_share()
    method.finish()
    mine = np.stack(snaps)
    mean = np.empty_like(mine)
    from mpi4py import MPI
    comm.Allreduce(mine, mean, op=MPI.SUM)
    mean /= size
    sq = ((mine.astype(np.float64) - mean) ** 2).sum(1)
    sq_sum = np.empty_like(sq)
    comm.Allreduce(sq, sq_sum, op=MPI.SUM)
    spread_ = np.sqrt(sq_sum / size) / np.maximum(np.linalg.norm(mean, axis=1), 1e-12)
    accuracy = torch_accuracy(task, seed)
    own = np.array([accuracy(x) for x in mine])
    own_mean = np.empty_like(own)
    comm.Allreduce(own, own_mean, op=MPI.SUM)
    own_mean /= size
    avg_part = {k: accuracy(mean[k]) for k in range(rank, len(at), size)}
    parts = comm.gather(avg_part, root=0)
    walls = comm.gather(wall, root=0)
    if rank != 0:
        return None
    avg = {k: a for part in parts for k, a in part.items()}
    return dict(steps=at, avg=[avg[k] for k in range(len(at))], own=own_mean.tolist(),
                spread=spread_.tolist(), wall_s=max(walls), cpu_busy=busy)


# -- analysis -------------------------------------------------------------------------
def steps_to(run, key, target):
    return next((s for s, a in zip(run["steps"], run[key]) if a >= target), math.inf)


def at_step(run, key, step):
    """The score at the snapshot nearest to ``step`` (at or after it)."""
    k = next((k for k, s in enumerate(run["steps"]) if s >= step), -1)
    return run[key][k]


def analyse_case(runs, methods, target):
    by = {m: {r["seed"]: r for r in runs if r["method"] == m} for m in methods}
    seeds = sorted(by["horovod"])
    h_steps = {s: steps_to(by["horovod"][s], "avg", target) for s in seeds}
    # accuracy at equal steps: at Horovod's (median) steps to target, and at the end
    mid = spread(h_steps.values())[0]
    mid = mid if mid < math.inf else by["horovod"][seeds[0]]["steps"][-1]
    rows = {}
    for m in methods:
        r = by[m]
        row = {}
        for key in ("avg", "own"):
            n = {s: steps_to(r[s], key, target) for s in seeds}
            row[key + "_steps"] = spread(n.values())
            row[key + "_x"] = spread([ratio(n[s], h_steps[s]) for s in seeds])
            row[key + "_reached"] = sum(v < math.inf for v in n.values())
            row[key + "_at_mid"] = spread([at_step(r[s], key, mid) for s in seeds])
            row[key + "_final"] = spread([statistics.mean(r[s][key][-3:]) for s in seeds])
        row["own_gap_after_first"] = spread([max(
            a - o for st, a, o in zip(r[s]["steps"], r[s]["avg"], r[s]["own"])
            if st >= r[s]["steps"][-1] // 4) for s in seeds])
        row["spread_mid"] = spread([at_step(r[s], "spread", mid) for s in seeds])
        row["spread_final"] = spread([r[s]["spread"][-1] for s in seeds])
        rows[m] = row
    return rows, mid


def fmt(s, digits=2):
    if s is None:
        return "-"
    med, lo, hi = s
    f = (lambda v: "inf" if v == math.inf else f"{v:.{digits}f}")
    return f"{f(med)} [{f(lo)}-{f(hi)}]"


def verdict(data, row):
    limit = TARGET_NONIID if data == "noniid" else TARGET_IID
    ok = row["avg_x"] is not None and row["avg_x"][0] <= limit
    text = f"avg x{limit:g}: {'met' if ok else 'MISSED'}"
    if data == "noniid":
        gap = row["own_gap_after_first"]
        text += f"; own within {OWN_WITHIN:g}: " + (
            "met" if gap is not None and gap[2] <= OWN_WITHIN else "MISSED")
    return text


def print_case(name, rows, mid, target):
    print(f"\n{name}: target {target:g}%; equal-step comparison at step {mid}")
    table = [["method", "avg steps", "avg x H", "own steps", "own x H",
              f"avg@{mid}", f"own@{mid}", "avg final", "own final", "gap max",
              f"spread@{mid}", ""]]
    for m, r in rows.items():
        table.append([m, fmt(r["avg_steps"], 0), fmt(r["avg_x"]), fmt(r["own_steps"], 0),
                      fmt(r["own_x"]), fmt(r["avg_at_mid"], 1), fmt(r["own_at_mid"], 1),
                      fmt(r["avg_final"], 1), fmt(r["own_final"], 1),
                      fmt(r["own_gap_after_first"], 1), fmt(r["spread_mid"], 3),
                      verdict(name.split("/")[1], r) if m == "wagma" else ""])
    print_table(table)


def print_summary(results, methods):
    print("\nSummary: steps to target of the averaged model / of the ranks' own models, "
          "x Horovod's (median over seeds)")
    table = [["case"] + methods[1:]]
    for name, res in results.items():
        rows = res["rows"]
        table.append([name] + [
            "/".join("-" if rows[m][k] is None else fmt_spread(rows[m][k])
                     .split(" ")[0] for k in ("avg_x", "own_x")) for m in methods[1:]])
    print_table(table, notes=False)


# -- the driver -----------------------------------------------------------------------
def run(args):
    comm, rank, size, hvd = harness.torch_job()
    if rank == 0:
        print(f"P={size}; no imbalance ({1e3 * args.step_time:g} ms per step on every "
              f"rank); {args.steps} steps; methods {' '.join(args.methods)}; seeds "
              f"{args.first_seed}..{args.first_seed + args.seeds - 1}", flush=True)
    started = time.time()
    all_runs, results = [], {}
    for task_name in args.tasks:
        for data in args.data:
            name = f"{task_name}/{data}"
            runs = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                task = task_lib.ALL_TASKS[task_name](seed)
                batches = task.batches(rank, size, data, args.steps, seed)
                for spec in harness.method_order(args.methods, seed):
                    rec = train(hvd, comm, spec, task, seed, batches, args)
                    if rank == 0:
                        rec.update(method=spec, task=task_name, data=data, seed=seed,
                                   target=task.target)
                        runs.append(rec)
                        print(f"  {name} seed {seed} {spec:32s} avg "
                              f"{steps_to(rec, 'avg', task.target):>5} own "
                              f"{steps_to(rec, 'own', task.target):>5} steps; final avg "
                              f"{rec['avg'][-1]:.1f}% own {rec['own'][-1]:.1f}% spread "
                              f"{rec['spread'][-1]:.3f}; CPU busy "
                              f"{fmt_busy(rec['cpu_busy'])}", flush=True)
            if rank == 0:
                target = task_lib.ALL_TASKS[task_name].target
                rows, mid = analyse_case(runs, args.methods, target)
                results[name] = {"rows": rows, "mid": mid, "target": target}
                all_runs += runs
                print_case(name, rows, mid, target)
    if rank == 0:
        print_summary(results, args.methods)
        print(f"\ntotal {time.time() - started:.0f} s")
        harness.write_json(args.json, harness.jsonable({"ranks": size, "args": vars(args),
                                                "results": results, "runs": all_runs}), 1)
    comm.Barrier()
    harness.stop_gloo()



if __name__ == "__main__":
    args = parse_args()
    harness.launch(__file__, args, run)
