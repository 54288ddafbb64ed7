#!/usr/bin/env python
"""Time to a target accuracy under injected load imbalance: Horovod vs local SGD vs WAGMA.

Why
---
Local SGD waits only at its periodic global average, so its steps/s under imbalance is
as high as WAGMA's. WAGMA's case is that it also mixes models (in groups) at every
step, so it should need fewer steps to reach the same accuracy. Wall time to a target
accuracy is the fair verdict.

Task
----
A generated 10-class problem in 64 dimensions (no downloads): every class is a mixture
of 3 Gaussian clusters (random centres, unit scale) with heavy isotropic noise
(sigma 2.2), so it is neither linearly separable nor solved at once. A 64-128-128-10
ReLU MLP trained with Horovod's synchronous SGD plateaus at ~88% test accuracy after a
few hundred steps. 50,000 training and 20,000 held-out samples, the same on every rank.

Data per rank (per-rank batch ``--batch``, drawn with replacement):
* ``iid``: uniformly from the whole training set;
* ``noniid``: 80% (``--home-fraction``) of each batch from this rank's 2 "home"
  classes (3 when P < 5), the rest from the other classes. Home classes are spread evenly over the ranks.

Imbalance (as in the throughput benchmark): before every forward pass each rank sleeps
``--compute-ms`` (10 ms) of "compute"; ``--delayed`` ranks (2 for P >= 8, else 1) chosen
per step by a seed every rank shares sleep ``--delay-ms`` (40 ms) more.

Methods (``--configs``), all SGD with momentum 0.9, the same learning rate, the same
initial model (seeded, then ``hvd.broadcast_parameters`` from rank 0), the same batches
and the same straggler schedule:
* ``horovod``: ``hvd.DistributedOptimizer`` (gradient allreduce every step);
* ``localsgd``: local steps, then PyTorch's ``PeriodicModelAverager(period=
  sync_period, warmup_steps=0)`` on a gloo process group started in the same launch;
* ``wagma-<rule>-<state>``: ``DistributedWagmaOptimizer(sync_period=10,
  averaging=<rule>, average_optimizer_state=<state>)`` for rule in {fresh, paper} and
  state in {never, on_sync, always}.

Evaluation and clock
--------------------
The held-out accuracy is that of the *averaged* model, taken only where every method's
models are already identical, so evaluating never changes training: Horovod every
``sync_period`` steps; WAGMA right after each global round (steps 10, 20, ...); local
SGD right after each periodic average (steps 11, 21, ...; the averager's first average
is at step 1), plus its last step. At such a point every rank stops its clock, the
parameters are allreduced (mpi4py; for local SGD's last point this *is* the average;
elsewhere it only checks that the models agree), rank 0 evaluates, and everyone meets
at a barrier before the clock restarts. That costs the same for every method and none
of it is counted. The wall time of a point is rank 0's accumulated training time.

Targets (from the issue): target accuracy = Horovod's final accuracy - 0.5 points,
where "final" is the mean of the last ``--final-window`` evaluations (default 3, i.e.
the last 30 steps, which damps evaluation noise; 1 = the last point only). The time to
target is the wall time of the first evaluation at or above it. WAGMA should need
<= 0.7x Horovod's time and <= 0.8x local SGD's.

Run
---
    python bench/time_to_accuracy.py [--np 8] [--steps 500] [--data both]
        [--configs horovod,localsgd,wagma-fresh-never,...] [--json PATH]

Run directly, the script re-launches itself under ``mpirun -np NP --oversubscribe`` with
the environment this machine needs (DESIGN.md section 5). Every configuration runs in
the same launch, one after the other; numbers from a loaded 2-core host are noisy, so
compare rows of one run only. Outputs go to bench/results/: the JSON (all curves) and
time_to_accuracy_{iid,noniid}.png (accuracy against wall time).
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
from mpi_launch import relaunch_under_mpirun  # noqa: E402
import argparse
import json
import math
import os
import socket
import sys
import time

RULES = ("fresh", "paper", "local")
STATES = ("never", "on_sync", "always")
ALL_CONFIGS = ["horovod", "localsgd"] + [f"wagma-{r}-{s}" for r in RULES for s in STATES]
DATA_MODES = ("iid", "noniid")
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

# The task (see the module docstring).
NUM_CLASSES, DIM, CLUSTERS, NOISE = 10, 64, 3, 2.2
N_TRAIN, N_TEST = 50000, 20000
HOME_FRACTION = 0.8  # default of --home-fraction
# Verdict thresholds from the issue.
TARGET_VS_HOROVOD, TARGET_VS_LOCALSGD = 0.7, 0.8


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--np", type=int, default=8,
                   help="ranks when the script launches mpirun itself (default 8)")
    p.add_argument("--steps", type=int, default=500,
                   help="training steps per run, a multiple of --sync-period (default 500)")
    p.add_argument("--data", choices=("iid", "noniid", "both"), default="both")
    p.add_argument("--configs", default=",".join(ALL_CONFIGS),
                   help="comma-separated subset of %(default)s (horovod is always run: "
                        "it defines the target)")
    p.add_argument("--json", metavar="PATH",
                   default=os.path.join(RESULTS_DIR, "time_to_accuracy.json"),
                   help="where to write all results (default bench/results/"
                        "time_to_accuracy.json)")
    p.add_argument("--plot-dir", default=RESULTS_DIR,
                   help="where the PNGs go (default bench/results)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="WAGMA tau, local SGD period and evaluation interval (default 10)")
    p.add_argument("--home-fraction", type=float, default=HOME_FRACTION,
                   help="non-IID: share of each batch from the rank's home classes "
                        f"(default {HOME_FRACTION}; 1.0 = home classes only)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--batch", type=int, default=32, help="per-rank batch (default 32)")
    p.add_argument("--compute-ms", type=float, default=10.0)
    p.add_argument("--delay-ms", type=float, default=40.0)
    p.add_argument("--delayed", type=int, default=None,
                   help="ranks delayed per step (default 2 for P >= 8, else 1)")
    p.add_argument("--final-window", type=int, default=3,
                   help="evaluations averaged into a run's final accuracy (default 3)")
    p.add_argument("--target-gap", type=float, default=0.5,
                   help="target = Horovod's final accuracy minus this many points")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=int, default=1500,
                   help="seconds before the self-launched mpirun kills the job")
    args = p.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = sorted(set(configs) - set(ALL_CONFIGS))
    if unknown:
        p.error(f"unknown configs {unknown}; choose from {','.join(ALL_CONFIGS)}")
    args.configs = [c for c in ALL_CONFIGS if c in configs or c == "horovod"]
    if args.steps < args.sync_period or args.steps % args.sync_period:
        p.error("--steps must be a positive multiple of --sync-period")
    if args.final_window < 1:
        p.error("--final-window must be >= 1")
    args.data = list(DATA_MODES) if args.data == "both" else [args.data]
    return args


# -- task, model, data streams --------------------------------------------------------
def make_task(seed):
    """(x_train, y_train, x_test, y_test), identical on every rank."""
    import numpy as np
    import torch
    g = np.random.default_rng((seed, 1))
    centres = g.standard_normal((NUM_CLASSES * CLUSTERS, DIM))

    def draw(n):
        y = g.integers(0, NUM_CLASSES, n)
        k = g.integers(0, CLUSTERS, n)
        x = centres[y * CLUSTERS + k] + NOISE * g.standard_normal((n, DIM))
        return torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    return draw(N_TRAIN) + draw(N_TEST)


def make_model(seed):
    import torch
    import torch.nn as nn
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, NUM_CLASSES))


def home_classes(rank, size):
    """This rank's classes for non-IID data: consecutive, starts spread evenly."""
    n_home = 2 if 2 * size >= NUM_CLASSES else 3
    start = rank * NUM_CLASSES // size
    return sorted({(start + j) % NUM_CLASSES for j in range(n_home)})


def batch_indices(mode, y_train, rank, size, steps, batch, seed, home_fraction):
    """(steps, batch) training indices of this rank: the same for every method."""
    import numpy as np
    import torch
    g = np.random.default_rng((seed, 2, rank, DATA_MODES.index(mode)))
    if mode == "iid":
        idx = g.integers(0, len(y_train), (steps, batch))
    else:
        y = y_train.numpy()
        home = np.isin(y, home_classes(rank, size))
        home_pool, other_pool = np.flatnonzero(home), np.flatnonzero(~home)
        from_home = g.random((steps, batch)) < home_fraction
        idx = np.where(from_home,
                       home_pool[g.integers(0, len(home_pool), (steps, batch))],
                       other_pool[g.integers(0, len(other_pool), (steps, batch))])
    return torch.from_numpy(idx)


def straggler_schedule(size, steps, n_delayed, seed):
    """delayed[s] = ranks that sleep the extra delay at step s (1-based), shared seed."""
    import numpy as np
    return [None] + [set(np.random.default_rng((seed, 3, s)).choice(
        size, n_delayed, replace=False).tolist()) for s in range(1, steps + 1)]


# -- one training run -----------------------------------------------------------------
class Evaluator:
    """Evaluates the rank-averaged model on rank 0; everyone else waits at a barrier."""

    def __init__(self, comm, x_test, y_test, seed):
        import numpy as np
        self.comm, self.x, self.y = comm, x_test, y_test
        self.model = make_model(seed) if comm.Get_rank() == 0 else None
        self.np = np

    def __call__(self, model):
        import torch
        from mpi4py import MPI
        from torch.nn.utils import parameters_to_vector, vector_to_parameters
        local = parameters_to_vector(model.parameters()).detach().double().numpy()
        avg = self.np.empty_like(local)
        self.comm.Allreduce(local, avg, op=MPI.SUM)
        avg /= self.comm.Get_size()
        # How far this rank's model is from the average (0 where models are identical).
        spread = self.comm.reduce(float(self.np.abs(local - avg).max()), op=MPI.MAX, root=0)
        acc = None
        if self.comm.Get_rank() == 0:
            with torch.no_grad():
                vector_to_parameters(torch.from_numpy(avg).float(), self.model.parameters())
                acc = 100.0 * (self.model(self.x).argmax(1) == self.y).float().mean().item()
        self.comm.Barrier()
        return acc, spread


def eval_steps(config, steps, tau):
    """Steps after which this method's models are identical on every rank."""
    if config == "localsgd":  # the averager averages at its calls 0, tau, 2 tau, ...
        points = set(range(tau + 1, steps + 1, tau)) | {steps}
    else:  # Horovod: always; WAGMA: round r = step - 1 is global when step % tau == 0
        points = set(range(tau, steps + 1, tau))
    return points


def train(config, mode, args, ctx):
    import torch
    import torch.nn.functional as F
    hvd, comm = ctx["hvd"], ctx["comm"]
    rank, size = comm.Get_rank(), comm.Get_size()
    model = make_model(args.seed)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    averager = None
    if config == "horovod":
        opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    elif config == "localsgd":
        from torch.distributed.algorithms.model_averaging.averagers import \
            PeriodicModelAverager
        averager = PeriodicModelAverager(period=args.sync_period, warmup_steps=0)
    else:
        _, rule, state = config.split("-")
        opt = hvd.DistributedWagmaOptimizer(
            opt, named_parameters=model.named_parameters(), sync_period=args.sync_period,
            averaging=rule, average_optimizer_state=state)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)

    x_train, y_train = ctx["x_train"], ctx["y_train"]
    idx = batch_indices(mode, y_train, rank, size, args.steps, args.batch, args.seed,
                        args.home_fraction)
    delayed = ctx["delayed"]
    compute, extra = args.compute_ms / 1e3, args.delay_ms / 1e3
    points = eval_steps(config, args.steps, args.sync_period)
    evaluate = ctx["evaluate"]

    acc, spread = evaluate(model)
    curve = [{"step": 0, "time": 0.0, "acc": acc, "spread": spread}]
    clock = 0.0
    comm.Barrier()
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        b = idx[step - 1]
        x, y = x_train[b], y_train[b]
        time.sleep(compute + (extra if rank in delayed[step] else 0.0))
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if averager is not None:
            averager.average_parameters(model.parameters())
        clock += time.perf_counter() - t0
        if step in points:
            acc, spread = evaluate(model)
            # Local SGD's last step need not be an averaging step: there the evaluation's
            # allreduce is what averages the models, so their spread is expected.
            curve.append({"step": step, "time": clock, "acc": acc, "spread": spread,
                          "averaged_by_eval": config == "localsgd"
                          and (step - 1) % args.sync_period != 0})
    clocks = comm.gather(clock, root=0)
    if rank == 0:
        print(f"  {mode:6s} {config:20s} {args.steps} steps in {clock:6.2f} s "
              f"({args.steps / clock:5.1f} steps/s), final acc {curve[-1]['acc']:.2f}%",
              flush=True)
    return {"config": config, "data": mode, "curve": curve, "time": clock,
            "rank_times": clocks, "steps": args.steps}


# -- analysis and reporting -----------------------------------------------------------
def final_accuracy(run, window):
    accs = [p["acc"] for p in run["curve"][1:]][-window:]
    return sum(accs) / len(accs)


def first_reaching(run, target):
    for p in run["curve"]:
        if p["acc"] >= target:
            return p
    return None


def analyse(runs, args):
    """Adds target, time/steps to target and ratios to every run of one data mode."""
    by_config = {r["config"]: r for r in runs}
    hvd_final = final_accuracy(by_config["horovod"], args.final_window)
    target = hvd_final - args.target_gap
    for r in runs:
        r["final_acc"] = final_accuracy(r, args.final_window)
        r["last_acc"] = r["curve"][-1]["acc"]
        r["steps_per_s"] = r["steps"] / r["time"]
        r["target"] = target
        hit = first_reaching(r, target)
        r["time_to_target"] = hit["time"] if hit else None
        r["steps_to_target"] = hit["step"] if hit else None
        r["max_spread"] = max(p["spread"] for p in r["curve"]
                              if not p.get("averaged_by_eval"))
    for r in runs:
        for base in ("horovod", "localsgd"):
            b = by_config.get(base)
            key = f"ratio_to_{base}"
            if b is None or b["time_to_target"] is None:
                r[key] = None
            elif r["time_to_target"] is None:
                r[key] = math.inf
            else:
                r[key] = r["time_to_target"] / b["time_to_target"]
        if r["config"].startswith("wagma"):
            ok_h = r["ratio_to_horovod"] is not None and r["ratio_to_horovod"] <= \
                TARGET_VS_HOROVOD
            ok_l = (r["ratio_to_localsgd"] is None  # no local SGD run to compare with
                    or r["ratio_to_localsgd"] <= TARGET_VS_LOCALSGD)
            r["meets_target"] = bool(ok_h and ok_l)
        else:
            r["meets_target"] = None
    return target, hvd_final


def fmt(value, spec, none="-"):
    if value is None:
        return none
    if value == math.inf:
        return "inf"
    return format(value, spec)


def print_table(mode, runs, target, hvd_final, args, size):
    cols = [("method", lambda r: r["config"]),
            ("data", lambda r: r["data"]),
            ("time-to-target s", lambda r: fmt(r["time_to_target"], ".2f", "not reached")),
            ("steps-to-target", lambda r: fmt(r["steps_to_target"], "d", "-")),
            ("steps/s", lambda r: f"{r['steps_per_s']:.1f}"),
            ("final acc %", lambda r: f"{r['final_acc']:.2f}"),
            ("x horovod", lambda r: fmt(r["ratio_to_horovod"], ".2f")),
            ("x localsgd", lambda r: fmt(r["ratio_to_localsgd"], ".2f")),
            ("verdict", lambda r: {None: "", True: "ok", False: "MISS"}[r["meets_target"]])]
    cells = [[name] + [f(r) for r in runs] for name, f in cols]
    widths = [max(len(c) for c in col) for col in cells]
    print(f"\n{mode}: P={size}, {args.steps} steps, target = Horovod final "
          f"{hvd_final:.2f}% - {args.target_gap} = {target:.2f}% "
          f"(final = mean of last {args.final_window} evaluations)")
    header = "  ".join(c[0].rjust(w) if i else c[0].ljust(w)
                       for i, (c, w) in enumerate(zip(cells, widths)))
    print(header)
    print("-" * len(header))
    for j in range(len(runs)):
        print("  ".join(cells[i][j + 1].rjust(w) if i else cells[i][j + 1].ljust(w)
                        for i, w in enumerate(widths)))
    odd = [r for r in runs if r["max_spread"] > 1e-5]
    for r in odd:
        print(f"  note: {r['config']} models differed at an evaluation point by up to "
              f"{r['max_spread']:.2e}")


def best_of(runs, prefix):
    """Best WAGMA variant among runs whose config starts with prefix: time to target,
    then final accuracy."""
    cands = [r for r in runs if r["config"].startswith(prefix)]
    return min(cands, key=lambda r: (r["time_to_target"] is None,
                                     r["time_to_target"] or 0.0, -r["final_acc"]))


def summary(all_runs):
    lines = []
    wagma = [r for r in all_runs if r["config"].startswith("wagma")]
    if not wagma:
        return lines
    for mode in DATA_MODES:
        runs = [r for r in wagma if r["data"] == mode]
        if not runs:
            continue
        best = best_of(runs, "wagma")
        reached = (f"{best['time_to_target']:.2f} s" if best["time_to_target"] is not None
                   else "target not reached")
        lines.append(f"{mode}: best WAGMA variant {best['config']} "
                     f"({reached}, final {best['final_acc']:.2f}%)")
        for rule in RULES:
            rr = [r for r in runs if r["config"].startswith(f"wagma-{rule}-")]
            if rr:
                lines.append(_variant_summary(f"averaging={rule:5s}", "states", rr))
        for state in STATES:
            rr = [r for r in runs if r["config"].endswith(f"-{state}")]
            if rr:
                lines.append(_variant_summary(f"state={state:7s}", "rules", rr))
    return lines


def _variant_summary(label, over, runs):
    """One line: mean time to target and mean final accuracy over `runs`."""
    reached = [r["time_to_target"] for r in runs if r["time_to_target"]]
    mean_time = sum(reached) / len(reached) if reached else None
    return (f"  {label}: mean time-to-target over {over} {fmt(mean_time, '.2f')} s "
            f"({len(reached)}/{len(runs)} reached), mean final "
            f"{sum(r['final_acc'] for r in runs) / len(runs):.2f}%")


def plot(mode, runs, target, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5.5))
    styles = {"horovod": dict(color="black", lw=2.2), "localsgd": dict(color="grey", lw=2.2)}
    colours = {"never": "tab:blue", "on_sync": "tab:orange", "always": "tab:green"}
    for r in runs:
        c = r["config"]
        style = styles.get(c)
        if style is None:
            _, rule, state = c.split("-")
            style = dict(color=colours[state], ls="-" if rule == "fresh" else "--", lw=1.4)
        label = c
        if r["time_to_target"] is not None:
            label += f" ({r['time_to_target']:.1f} s)"
        ax.plot([p["time"] for p in r["curve"]], [p["acc"] for p in r["curve"]],
                label=label, **style)
    ax.axhline(target, color="red", ls=":", lw=1, label=f"target {target:.2f}%")
    ax.set_xlabel("training wall time on rank 0, s (evaluation excluded)")
    ax.set_ylabel("held-out accuracy of the averaged model, %")
    ax.set_title(f"Time to accuracy under imbalance, {mode} data")
    lo = min(p["acc"] for r in runs for p in r["curve"][len(r["curve"]) // 4:])
    ax.set_ylim(max(0, lo - 3), min(100, target + 3))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def jsonable(run):
    """A run with an unreached target's infinite ratios written as the string "inf"."""
    return {k: "inf" if v == math.inf else v for k, v in run.items()}


# -- main -----------------------------------------------------------------------------
def init_gloo(comm):
    """A torch.distributed gloo group over the same ranks, for local SGD's averager."""
    import torch.distributed as dist
    port = None
    if comm.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    port = comm.bcast(port, root=0)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="env://", rank=comm.Get_rank(),
                            world_size=comm.Get_size())


def run(args):
    from mpi4py import MPI
    import torch
    import torch.distributed as dist

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    hvd.init(sync_period=args.sync_period)
    init_gloo(comm)

    n_delayed = args.delayed if args.delayed is not None else (2 if size >= 8 else 1)
    x_train, y_train, x_test, y_test = make_task(args.seed)
    ctx = dict(hvd=hvd, comm=comm, x_train=x_train, y_train=y_train,
               delayed=straggler_schedule(size, args.steps, n_delayed, args.seed),
               evaluate=Evaluator(comm, x_test, y_test, args.seed))
    if rank == 0:
        print(f"P={size}, {n_delayed} delayed rank(s)/step: {args.compute_ms:g} ms compute "
              f"+ {args.delay_ms:g} ms; S={hvd.default_group_size(size)}, "
              f"tau={args.sync_period}; lr={args.lr}, momentum={args.momentum}, "
              f"batch {args.batch}/rank", flush=True)
    started = time.time()
    all_runs, analysed = [], {}
    for i, mode in enumerate(args.data):
        # Alternate the order between data settings so slow drift in background load
        # does not always favour the same methods.
        order = args.configs if i % 2 == 0 else list(reversed(args.configs))
        runs = [train(config, mode, args, ctx) for config in order]
        runs.sort(key=lambda r: ALL_CONFIGS.index(r["config"]))
        if rank == 0:
            analysed[mode] = analyse(runs, args)
        all_runs += runs

    if rank == 0:
        os.makedirs(args.plot_dir, exist_ok=True)
        for mode in args.data:
            runs = [r for r in all_runs if r["data"] == mode]
            target, hvd_final = analysed[mode]
            print_table(mode, runs, target, hvd_final, args, size)
            path = os.path.join(args.plot_dir, f"time_to_accuracy_{mode}.png")
            plot(mode, runs, target, path)
            print(f"wrote {path}")
        lines = summary(all_runs)
        if lines:
            print("\nWAGMA variants (best = shortest time to target, then final accuracy):")
            print("\n".join(lines))
        print(f"\nverdict targets: WAGMA time <= {TARGET_VS_HOROVOD}x Horovod and <= "
              f"{TARGET_VS_LOCALSGD}x local SGD; total {time.time() - started:.0f} s")
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as f:
                json.dump({"ranks": size, "delayed_per_step": n_delayed,
                           "args": {k: v for k, v in vars(args).items()},
                           "task": dict(classes=NUM_CLASSES, dim=DIM, clusters=CLUSTERS,
                                        noise=NOISE, n_train=N_TRAIN, n_test=N_TEST,
                                        home_fraction=args.home_fraction),
                           "targets": {m: {"target": t, "horovod_final": h}
                                       for m, (t, h) in analysed.items()},
                           "runs": [jsonable(r) for r in all_runs]}, f, indent=1)
            print(f"wrote {args.json}")
    comm.Barrier()
    dist.destroy_process_group()


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout)
    run(args)


if __name__ == "__main__":
    main()
