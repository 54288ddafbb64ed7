#!/usr/bin/env python
"""Time to accuracy in the epoch loop users write, on ranks of persistently uneven
speed: a sampler per rank, ``set_epoch`` at every epoch, an optimizer step per batch,
and at every epoch end a metric averaged through a Horovod allreduce (its wait on the
clock, its compute off it), where every rank meets the others.

    python bench/epoch_loop.py [--np 8] [--framework torch|keras] [--tasks mlp,cnn,seq]
        [--cases persistent,mixed,noisy,homogeneous] [--seeds 3]
        [--methods horovod wagma wagma+balanced ...] [--epoch-samples 20000]
        [--time-scale 4]
    python bench/epoch_loop.py --from-json bench/results/epoch_loop.json   # tables again

A method is a bench/methods.py spec (``horovod``, ``localsgd``, ``wagma[:...]``), with
``+balanced`` for BalancedDistributedSampler instead of torch's DistributedSampler, or
``+lbbsp`` for BalancedBatchSampler (equal steps, per-rank batches proportional to
speed, the loss scaled by its ``loss_weight``: LB-BSP, for ``horovod``). The torchft
peers (``torchft_localsgd``, ``torchft_diloco``) run with equal shards only.
Cases (per-rank step time as a multiple of --step-time): persistent (rank 0 2x),
mixed (rank 0 3x, ranks 1-2 1.5x), noisy (persistent plus the paper's random noise:
2 ranks 40 ms late at every step), homogeneous. Reports time to target (of the
rank-averaged model, bench/measure.py's snapshots) and epochs to two
targets (the task's rising and plateau targets, reached by the accuracy at an epoch's
end), the accuracy at every epoch end, aggregate samples/s, the fast ranks' idle share
at epoch ends and the host's CPU busy share over the run (bench/host_load.py: below
~60% the host is not the limit). ``--time-scale X`` multiplies every sleep, the budget
and the snapshot interval. ``--tasks`` takes the held-out tasks too (bench/tasks.py
HELD_OUT: other optimizers, batches, schedules, widths, classes).

``--framework keras`` runs the same loop as ``model.fit`` (bench/keras_epoch_loop.py):
the mlp task; methods ``horovod``, ``wagma[:...]``, ``wagma[:...]+balanced``
(horovod_wagma.keras.BalancedSequence).
"""
import math
import statistics
import time

from adapters import torch_accuracy, torch_flatten, torch_sum
import harness
from host_load import HostLoad, fmt_busy
from measure import Snapshots, final_accuracy, ratio, run_record, time_to_target
import methods as registry
import tasks as task_lib
from table import fmt_spread, fmt_time, print_table, spread

CASES = ("persistent", "mixed", "noisy", "homogeneous")


def speed_factors(case, size):
    """Each rank's step time as a multiple of --step-time."""
    f = [1.0] * size
    if case in ("persistent", "noisy"):
        f[0] = 2.0
    elif case == "mixed":
        f[0] = 3.0
        for r in (1, 2):
            if r < size:
                f[r] = 1.5
    return f


SAMPLERS = ("equal", "balanced", "lbbsp")


def parse_method(text):
    """'wagma+balanced' -> ('wagma', 'balanced'); 'horovod' -> ('horovod', 'equal')."""
    spec, plus, sampler = text.partition("+")
    if plus and sampler not in SAMPLERS[1:]:
        raise ValueError(f"{text!r}: the sampler suffix is +balanced or +lbbsp")
    name, _ = registry.parse_spec(spec)
    if name == "hivemind":
        raise ValueError(f"{text!r}: hivemind's peers cannot meet a Horovod collective "
                         "at every epoch end (bench/peers.py); time_to_accuracy.py runs it")
    if name in registry.PEERS and plus:
        raise ValueError(f"{text!r}: torchft synchronises every tau steps on every "
                         "replica, so every rank needs as many steps an epoch: equal shards")
    return spec, sampler or "equal"


def parse_args(argv=None):
    p = harness.parser(__doc__, np=8, timeout=3600)
    harness.add_methods(p)
    p.add_argument("--framework", choices=("torch", "keras"), default="torch")
    p.add_argument("--tasks", help="default mlp,cnn,seq (Keras: mlp)")
    p.add_argument("--cases", default="persistent")
    harness.add_seeds(p)
    p.add_argument("--budget", type=float, default=12.0,
                   help="seconds of training per run; every rank stops at the first "
                        "epoch end past it (default 12)")
    p.add_argument("--epoch-samples", type=int, default=20000,
                   help="training samples per epoch, all ranks together: a fixed subset "
                        "of the task's training set (default 20000)")
    p.add_argument("--interval", type=float, default=0.25)
    p.add_argument("--tau", type=int, default=10)
    p.add_argument("--step-time", type=float, default=0.010)
    p.add_argument("--delay", type=float, default=0.040)
    p.add_argument("--num-delayed", type=int, default=2)
    harness.add_time_scale(p)
    harness.add_outputs(p, plot=False)
    args = p.parse_args(argv)
    harness.scale_times(p, args, "budget", "interval", "step_time", "delay")
    args.tasks = harness.choices(p, "--tasks", args.tasks or (
        "mlp" if args.framework == "keras" else "mlp,cnn,seq"), tuple(task_lib.ALL_TASKS))
    args.cases = harness.choices(p, "--cases", args.cases, CASES)
    args.methods = args.methods or ["horovod", "wagma", "wagma+balanced"]
    try:
        for m in args.methods:
            spec, sampler = parse_method(m)
            if args.framework == "keras" and (sampler == "lbbsp" or spec.split(":")[0]
                                              not in ("horovod", "wagma")):
                raise ValueError(f"{m!r}: Keras runs horovod, wagma[:...] and "
                                 f"wagma[:...]+balanced")
    except ValueError as e:
        p.error(str(e))
    if args.framework == "keras" and args.tasks != ["mlp"]:
        p.error("--framework keras runs --tasks mlp only")
    if "horovod" not in args.methods:
        args.methods = ["horovod"] + args.methods
    args.json = harness.output_path(args.json, ("keras_" if args.framework == "keras"
                                                else "") + "epoch_loop.json")
    return args


def noise_schedule(args, size, seed, rows=20000):
    """(rows, size) extra seconds per step: the noisy case's random delays."""
    import numpy as np
    rng = np.random.default_rng((seed, 7))
    extra = np.zeros((rows, size))
    for t in range(rows):
        extra[t, rng.choice(size, size=min(args.num_delayed, size), replace=False)] = \
            args.delay
    return extra


def train(hvd, comm, spec, sampler_kind, task, seed, args, case):
    """One method, one seed; rank 0 gets the run's record."""
    import torch
    from torch.utils.data.distributed import DistributedSampler
    rank, size = comm.Get_rank(), comm.Get_size()
    model, method = registry.build_for_task(spec, task, seed, hvd, size, args.tau)
    pool = task.epoch_pool(seed, args.epoch_samples)
    if sampler_kind == "lbbsp":
        sampler = hvd.BalancedBatchSampler(range(len(pool)), task.batch, num_replicas=size,
                                           rank=rank, seed=seed)
    else:
        kind = hvd.BalancedDistributedSampler if sampler_kind == "balanced" \
            else DistributedSampler
        sampler = kind(range(len(pool)), num_replicas=size, rank=rank, seed=seed)
    factor = speed_factors(case, size)[rank] * args.step_time
    noise = noise_schedule(args, size, seed)[:, rank] if case == "noisy" else None
    snaps = Snapshots(*torch_flatten(model), args.interval, args.budget + 30.0)
    eval_batch = torch.from_numpy(pool[:task.batch])
    epochs, steps, off_clock = [], 0, 0.0
    comm.Barrier()
    load = HostLoad()
    t0 = time.perf_counter()
    while True:
        sampler.set_epoch(len(epochs))
        for group in method.inner.param_groups:
            group["lr"] = task.lr_at(len(epochs))
        if sampler_kind == "lbbsp":
            batches = [pool[b] for b in sampler]
            weight = sampler.loss_weight
        else:
            order = pool[list(sampler)]
            batches = [order[k:k + task.batch] for k in range(0, len(order), task.batch)]
            weight = 1.0
        e_start = time.perf_counter()
        slowest_step = [0.0, -1]  # the epoch's longest optimizer step: seconds, index
        for b in batches:
            b = torch.from_numpy(b)
            snaps.before_step()
            # Compute in proportion to the batch (the tasks' scale is per batch of
            # task.batch samples).
            time.sleep(factor * task.compute_scale(b) * len(b) / task.batch
                       + (noise[steps % len(noise)] if noise is not None else 0.0))
            method.zero_grad()
            (task.loss(model, b) * weight).backward()
            t_step = time.perf_counter()
            method.step()
            step_s = time.perf_counter() - t_step
            if step_s > slowest_step[0]:
                slowest_step[:] = [step_s, steps]
            snaps.after_step(time.perf_counter() - t0 - off_clock)
            steps += 1
        # The epoch end: this rank's metric (off the clock), then the allreduce every
        # rank meets at (on it, with the wait), which also carries "past the budget?".
        t1 = time.perf_counter()
        with torch.no_grad():
            value = float(task.loss(model, eval_batch))
        t2 = time.perf_counter()
        off_clock += t2 - t1
        past = t2 - t0 - off_clock >= args.budget
        total = torch_sum(hvd, [value, float(past)], "epoch_loop.metric")
        t3 = time.perf_counter()
        epochs.append(dict(samples=sum(len(b) for b in batches), steps=len(batches),
                           train_s=t1 - e_start, idle_s=t3 - t2,
                           slowest_step_s=slowest_step[0], slowest_step=slowest_step[1],
                           throughputs=getattr(sampler, "throughputs", None),
                           end=t3 - t0 - off_clock))
        if total[1] > 0:
            break
    wall = time.perf_counter() - t0 - off_clock
    busy = load.busy_share()
    method.finish()
    engine = comm.gather(method.contributions() if hasattr(method, "contributions")
                         else None, root=0)
    return run_record(comm, snaps, torch_accuracy(task, seed), steps, wall, epochs,
                      engine, args.interval, busy)


def idle_share(rec, fast):
    """The fast ranks' time waiting at epoch ends over their epochs' time (median over
    the fast ranks; every epoch but the first, whose shares are equal)."""
    shares = []
    for r in fast:
        eps = rec["epochs_per_rank"][r][1:] or rec["epochs_per_rank"][r]
        shares.append(sum(e["idle_s"] for e in eps) /
                      sum(e["idle_s"] + e["train_s"] for e in eps))
    return statistics.median(shares)


def accuracy_at_epoch(rec, epoch):
    """The averaged model's accuracy at the end of epoch ``epoch`` (from the curve)."""
    eps = rec["epochs_per_rank"][0]
    if epoch >= len(eps):
        return math.nan
    t = eps[epoch]["end"]
    before = [acc for tt, acc in rec["curve"] if tt <= t]
    return before[-1] if before else math.nan


def epoch_accuracies(rec):
    """The averaged model's accuracy at the end of every epoch."""
    return [accuracy_at_epoch(rec, e) for e in range(len(rec["epochs_per_rank"][0]))]


def epochs_to(rec, target):
    """The first epoch (1-based) whose end-of-epoch accuracy reaches ``target``."""
    return next((e + 1 for e, acc in enumerate(epoch_accuracies(rec)) if acc >= target),
                math.inf)


def median_by_epoch(runs):
    """Per epoch, the median over runs of the accuracy at its end (as far as all ran)."""
    per_run = [epoch_accuracies(r) for r in runs]
    n = min(len(a) for a in per_run)
    return [statistics.median(a[e] for a in per_run) for e in range(n)]


def paired_gap_by_epoch(runs, method, base):
    """Per epoch, the median over seeds of ``method``'s accuracy minus ``base``'s on the
    same seed (the same data order), as far as every paired run went. Three seeds'
    medians of each method apart can differ by more than their paired gap: a seed's
    data order moves both curves by several points at the rising epochs."""
    base_runs = {r["seed"]: epoch_accuracies(r) for r in runs if r["method"] == base}
    gaps = [[a - b for a, b in zip(epoch_accuracies(r), base_runs[r["seed"]])]
            for r in runs if r["method"] == method and r["seed"] in base_runs]
    if not gaps:
        return []
    n = min(len(g) for g in gaps)
    return [statistics.median(g[e] for g in gaps) for e in range(n)]


def seed_spread_by_epoch(runs, method):
    """Per epoch, the largest minus the smallest accuracy over ``method``'s seeds."""
    per_run = [epoch_accuracies(r) for r in runs if r["method"] == method]
    n = min(len(a) for a in per_run)
    return [max(a[e] for a in per_run) - min(a[e] for a in per_run) for e in range(n)]


def model_contributions(engine):
    """One rank's model streams summed: (share of the rounds it took part in whose
    value was fresh, i.e. its app entered them; the share of its passive values left
    out as too stale; the mean age of the passive values that counted)."""
    streams = [v for k, v in (engine or {}).items() if ".model" in k]
    entered = sum(v["rounds"] for v in streams)
    passive = sum(v["passive_joins"] for v in streams)
    left_out = sum(v["rounds_left_out"] for v in streams)
    counted = passive - left_out
    age = (sum(v.get("contribution_age_mean", 0.0) * (v["passive_joins"] - v["rounds_left_out"])
               for v in streams) / counted) if counted else 0.0
    total = entered + passive
    return (entered / total if total else math.nan,
            left_out / passive if passive else 0.0, age)


def where_the_work_goes(runs, methods, factors):
    """Per WAGMA method, the slow ranks' and the fast ranks' contributions (medians over
    ranks and seeds; ``factors``: each rank's step-time factor): point 3 of the held-out
    diagnostic (docs/benchmarks.md)."""
    groups = (("slow", [r for r, f in enumerate(factors) if f > 1.0]),
              ("fast", [r for r, f in enumerate(factors) if f == 1.0]))
    lines = []
    for m in methods:
        engines = [r["engine_per_rank"] for r in runs
                   if r["method"] == m and r.get("engine_per_rank") and
                   any(r["engine_per_rank"])]
        if not engines:
            continue
        parts = []
        for label, ranks in groups:
            vals = [model_contributions(e[k]) for e in engines for k in ranks]
            if not vals:
                continue
            fresh, left, age = (statistics.median(v[i] for v in vals) for i in range(3))
            parts.append(f"{label}: fresh {100 * fresh:.0f}%, passive left out "
                         f"{100 * left:.0f}%, age of counted passive {age:.2f}")
        lines.append(f"  {m:24s} " + "; ".join(parts))
    if lines:
        print("where the ranks' work goes (model streams, median over ranks and seeds):")
        print("\n".join(lines))


def report(case, task_name, runs, methods, target, size, rising):
    factors = speed_factors(case, size)
    fast = [r for r, f in enumerate(factors) if f == 1.0] or [0]
    common = min(len(r["epochs_per_rank"][0]) for r in runs) - 1
    print(f"\n{task_name}/{case}: targets {rising:g}% (rising) and {target:g}% "
          f"(plateau); accuracy compared after epoch {common + 1}")
    table = [["method", "time to target s", "x Horovod", "x LB-BSP", "samples/s",
              "x Horovod ", f"acc@ep{common + 1}", f"epochs to {rising:g}",
              f"epochs to {target:g}", "fast idle %", "final acc %", "CPU busy %"]]
    rows = {}

    def per_seed_ratio(mine, base):
        """Time to target over ``base``'s, seed by seed (NaN where base never got there)."""
        other = {r["seed"]: r for r in runs if r["method"] == base}
        out = []
        for s, r in mine.items():
            tb = time_to_target(other[s], target) if s in other else math.inf
            out.append(ratio(time_to_target(r, target), tb))
        return out
    for m in methods:
        mine = {r["seed"]: r for r in runs if r["method"] == m}
        hor = {r["seed"]: r for r in runs if r["method"] == "horovod"}
        t = {s: time_to_target(r, target) for s, r in mine.items()}
        x = per_seed_ratio(mine, "horovod")
        x_lbbsp = per_seed_ratio(mine, "horovod+lbbsp") if "horovod+lbbsp" in methods \
            else []
        sps = [mine[s]["samples_per_s"] / hor[s]["samples_per_s"] for s in mine]
        rows[m] = dict(time=spread(t.values()), x_horovod=spread(x),
                       x_lbbsp=spread(x_lbbsp),
                       samples_per_s=statistics.median(r["samples_per_s"]
                                                       for r in mine.values()),
                       x_samples=spread(sps),
                       acc_at_epoch=statistics.median(accuracy_at_epoch(r, common)
                                                      for r in mine.values()),
                       idle=statistics.median(idle_share(r, fast) for r in mine.values()),
                       final=statistics.median(final_accuracy(r) for r in mine.values()),
                       epochs_to_rising=spread(epochs_to(r, rising) for r in mine.values()),
                       epochs_to_target=spread(epochs_to(r, target) for r in mine.values()),
                       by_epoch=median_by_epoch(list(mine.values())),
                       cpu_busy=spread(r["cpu_busy"] for r in mine.values()))
        r = rows[m]
        table.append([m, fmt_spread(r["time"]), fmt_spread(r["x_horovod"]),
                      fmt_spread(r["x_lbbsp"]), f"{r['samples_per_s']:.0f}", fmt_spread(r["x_samples"]),
                      f"{r['acc_at_epoch']:.2f}", fmt_spread(r["epochs_to_rising"]),
                      fmt_spread(r["epochs_to_target"]), f"{100 * r['idle']:.1f}",
                      f"{r['final']:.2f}", f"{100 * r['cpu_busy'][0]:.0f}"])
    print_table(table)
    print("accuracy at each epoch end (median over seeds):")
    for m in methods:
        print(f"  {m:24s} " + " ".join(f"{a:5.1f}" for a in rows[m]["by_epoch"]))
    if "horovod" in methods and len(methods) > 1:
        print("minus Horovod on the same seed (median over seeds); Horovod's own spread "
              "over seeds (max - min):")
        for m in methods:
            gaps = (seed_spread_by_epoch(runs, m) if m == "horovod"
                    else paired_gap_by_epoch(runs, m, "horovod"))
            label = "horovod (spread)" if m == "horovod" else m
            print(f"  {label:24s} " + " ".join(f"{a:+5.1f}" if m != "horovod" else f"{a:5.1f}"
                                                for a in gaps))
    where_the_work_goes(runs, methods, factors)
    return rows


def run(args):
    if args.framework == "keras":
        import keras_epoch_loop
        from mpi4py import MPI
        comm, k = MPI.COMM_WORLD, harness.start_keras()
        rank, size = comm.Get_rank(), comm.Get_size()

        def train_one(spec, sampler_kind, task, seed, case):
            noise = noise_schedule(args, size, seed)[:, rank] if case == "noisy" else None
            return keras_epoch_loop.train(
                k, comm, spec, sampler_kind, task, seed, args,
                speed_factors(case, size)[rank] * args.step_time, noise)
    else:
        comm, rank, size, hvd = harness.torch_job()

        def train_one(spec, sampler_kind, task, seed, case):
            return train(hvd, comm, spec, sampler_kind, task, seed, args, case)
    if rank == 0:
        print(f"P={size}; {args.framework}; methods {' '.join(args.methods)}; seeds {args.first_seed}.."
              f"{args.first_seed + args.seeds - 1}; {args.epoch_samples} samples/epoch; "
              f"step {1e3 * args.step_time:g} ms", flush=True)
    started, results, all_runs = time.time(), {}, []
    for task_name in args.tasks:
        for case in args.cases:
            runs = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                task = task_lib.ALL_TASKS[task_name](seed)
                for m in harness.method_order(args.methods, seed):
                    spec, sampler_kind = parse_method(m)
                    rec = train_one(spec, sampler_kind, task, seed, case)
                    if rank == 0:
                        rec.update(method=m, seed=seed, task=task_name, case=case,
                                   target=task.target)
                        print(f"  {task_name}/{case} seed {seed} {m:24s} target "
                              f"{fmt_time(time_to_target(rec, task.target)):>5} s, "
                              f"{len(rec['epochs_per_rank'][0])} epochs, "
                              f"{rec['samples_per_s']:.0f} samples/s, final "
                              f"{final_accuracy(rec):.2f}%, CPU busy "
                              f"{fmt_busy(rec['cpu_busy'])}", flush=True)
                        runs.append(rec)
            if rank == 0:
                results[f"{task_name}/{case}"] = report(
                    case, task_name, runs, args.methods, runs[0]["target"], size,
                    task_lib.ALL_TASKS[task_name].rising_target)
                all_runs += runs
    if rank == 0:
        print(f"\ntotal {time.time() - started:.0f} s")
        harness.write_json(args.json, harness.jsonable({
            "ranks": size, "args": vars(args), "results": results, "runs": all_runs}), 1)
    comm.Barrier()
    harness.stop_gloo()


def report_saved(path):
    """The tables of a finished run's JSON again (``--from-json``), without running."""
    import json
    with open(path) as f:
        saved = json.load(f)

    def finite(x):
        return float(x) if isinstance(x, str) else x
    runs = saved["runs"]
    for r in runs:
        r["curve"] = [[t, finite(a)] for t, a in r["curve"]]
    methods = list(dict.fromkeys(r["method"] for r in runs))
    for key in dict.fromkeys((r["task"], r["case"]) for r in runs):
        mine = [r for r in runs if (r["task"], r["case"]) == key]
        report(key[1], key[0], mine, [m for m in methods if any(r["method"] == m for r in mine)],
               mine[0]["target"], saved["ranks"], task_lib.ALL_TASKS[key[0]].rising_target)


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--from-json":
        report_saved(sys.argv[2])
    else:
        args = parse_args()
        harness.launch(__file__, args, run)
