#!/usr/bin/env python
"""Training throughput under injected load imbalance: WAGMA vs Horovod vs local SGD.

What is measured
----------------
P ranks train a small MLP (about 285 KB of float32 parameters) on tiny synthetic
batches. A sleep stands in for accelerator compute: every step sleeps ``--step-time``
(10 ms), and at every step ``--num-delayed`` ranks (2), drawn from a seeded RNG that
every rank shares, sleep ``--delay`` (40 ms) longer. As in the paper, the delay comes
before the forward pass. The forward and backward passes and the optimizer step are
real, but the sleeps dominate.

Methods, run one after another in the same launch, each on a fresh copy of the model
(broadcast from rank 0) and on the same delay schedule:

* ``horovod``     ``hvd.DistributedOptimizer``: a gradient allreduce every step, so
                  every step waits for that step's slowest rank.
* ``wagma``       ``horovod_wagma.torch.DistributedWagmaOptimizer(group_size=S,
                  sync_period=tau)``: wait-avoiding group model averaging, a blocking
                  global average every tau steps.
* ``wagma_sync``  the same with ``wait_avoiding=False``: group rounds wait for all
                  group members.
* ``localsgd``    local SGD as a PyTorch user would write it: a plain local optimizer
                  step, then ``PeriodicModelAverager(period=tau, warmup_steps=0)
                  .average_parameters(...)`` on a gloo process group (torch.distributed
                  initialised in the same launch, env://, 127.0.0.1, a free port chosen
                  by rank 0).
* ``ideal``       computed, not run: the algorithm with zero communication cost and no
                  waiting anywhere except at global rounds. Every tau steps all ranks
                  wait for the one with the largest compute time since the previous
                  global round, so the ideal time is the sum over blocks of tau steps
                  of max over ranks of the nominal compute in the block.

Timing: each method runs warm-up steps (chosen so that the last warm-up step and the
last timed step are both synchronising steps of that method: tau steps for Horovod
and WAGMA, whose rounds 0 and tau-1, 2tau-1, ... are global; tau+1 for
PeriodicModelAverager, which averages at calls 0, tau, 2tau, ...), then an MPI
barrier, ``--steps`` timed steps (rounded up to a multiple of tau), a barrier. Rank 0's
wall time between the barriers gives steps/s. The timed steps of every method use
the same delay schedule as the ideal (warm-up steps use a different seeded draw).
With ``--trials`` > 1 the methods are interleaved trial by trial and the best trial
of each is reported (all are kept in the JSON).

Diagnostics: each rank records, per timed step, the time it spent in "compute" (sleep
+ forward + backward, measured) and in the optimizer step (local update + averaging,
including any waiting). ``ideal(meas)`` is the ideal recomputed from those measured
compute times; on an oversubscribed host sleeps overshoot and forward/backward are
slowed by the other ranks, so it is the fairer bar. For the WAGMA methods the engine
counters (passive joins etc.) during the timed window are summed over ranks. CPU time
per rank and step is reported overall and per thread (training loop, WAGMA engine,
everything else: mostly Horovod's background thread), with the share of the host's
cores all ranks used; "host CPU bound" is cores / (P x WAGMA's CPU per rank-step), the
rate at which WAGMA's own CPU use would saturate the host. At P=16 on 2 cores the host
is saturated, so that bound, not waiting, limits every method.

Targets (from the issue): WAGMA >= 0.9x the ideal. For reference, measured earlier on
this host: P=8 ideal ~34 steps/s, Horovod 18.4, local SGD 32.7; P=16 ideal ~42,
Horovod 17.7.

Run
---
    python bench/imbalance.py [--np 8] [--steps 200] [--sync-period 10] [--delay 0.040]
                              [--step-time 0.010] [--num-delayed 2] [--seed 0]
                              [--methods horovod,wagma,wagma_sync,localsgd]
                              [--group-size S] [--trials 2] [--json PATH] [--plot PATH]

Run directly, the script re-launches itself under ``mpirun -np NP --oversubscribe``
with the environment this machine needs (run-as-root, ``OMPI_MCA_mpi_yield_when_idle=1``;
DESIGN.md section 5). Started by mpirun, it uses the world size it is given. Rank 0
prints the table and writes bench/results/imbalance_P{P}.json and .png (by default).
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
from imbalance_schedule import (bounds, compute_schedule, ideal_time,  # noqa: E402
                                parse_imbalance_args, print_table, wagma_ratios)
from mpi_launch import relaunch_under_mpirun  # noqa: E402
from thread_cpu import thread_cpu_seconds  # noqa: E402
import argparse
import json
import os
import socket
import sys
import time

METHODS = ("horovod", "wagma", "wagma_sync", "localsgd")
LABELS = {"horovod": "Horovod", "wagma": "WAGMA", "wagma_sync": "WAGMA sync",
          "localsgd": "local SGD", "ideal": "ideal", "ideal_measured": "ideal(meas)"}
IDEAL_TARGET = 0.9
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
IN_FEATURES, HIDDEN, CLASSES = 128, 512, 10   # 71,178 parameters, ~285 KB
BATCH = 16


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    return parse_imbalance_args(__doc__.split("\n\n")[0], METHODS, 2, "imbalance", argv)


# -- delay schedule and ideal ---------------------------------------------------------
# -- training -------------------------------------------------------------------------
def make_model(torch):
    torch.manual_seed(1234)  # the same initial model for every method
    return torch.nn.Sequential(torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.ReLU(),
                               torch.nn.Linear(HIDDEN, CLASSES))


def make_data(torch, rank):
    g = torch.Generator().manual_seed(100 + rank)
    xs = torch.randn(8, BATCH, IN_FEATURES, generator=g)
    ys = torch.randint(0, CLASSES, (8, BATCH), generator=g)
    return xs, ys


def init_gloo(comm, rank, size):
    """torch.distributed with gloo on 127.0.0.1, at a free port chosen by rank 0."""
    import torch.distributed as dist
    if dist.is_initialized():
        return
    port = None
    if rank == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    port = comm.bcast(port, root=0)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(size))
    dist.init_process_group(backend="gloo", init_method="env://", rank=rank,
                            world_size=size)


class Method:
    """One method's model, optimizer and step function; one instance per trial, built
    in the same order on every rank (WAGMA streams are named by creation order)."""

    def __init__(self, name, args, hvd, torch, rank):
        self.name, self.torch = name, torch
        self.model = make_model(torch)
        hvd.broadcast_parameters(self.model.state_dict(), root_rank=0)
        opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.averager = None
        tau = args.sync_period
        if name == "horovod":
            opt = hvd.DistributedOptimizer(opt,
                                           named_parameters=self.model.named_parameters())
            self.warmup = tau
        elif name in ("wagma", "wagma_sync"):
            opt = hvd.DistributedWagmaOptimizer(
                opt, named_parameters=self.model.named_parameters(),
                group_size=args.group_size, sync_period=tau,
                wait_avoiding=(name == "wagma"))
            self.warmup = tau          # rounds 0 and tau-1 are global
        else:  # localsgd
            from torch.distributed.algorithms.model_averaging.averagers import \
                PeriodicModelAverager
            self.averager = PeriodicModelAverager(period=tau, warmup_steps=0)
            self.warmup = tau + 1      # averages at calls 0 and tau
        self.opt = opt
        self.xs, self.ys = make_data(torch, rank)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.k = 0

    def step(self, seconds):
        """One training step; returns (compute seconds, optimizer-step seconds)."""
        t0 = time.perf_counter()
        time.sleep(seconds)  # stand-in for accelerator compute; the delay comes first
        x, y = self.xs[self.k % len(self.xs)], self.ys[self.k % len(self.ys)]
        self.k += 1
        self.opt.zero_grad()
        self.loss_fn(self.model(x), y).backward()
        t1 = time.perf_counter()
        self.opt.step()
        if self.averager is not None:
            self.averager.average_parameters(self.model.parameters())
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1


def thread_cpu():
    """CPU seconds of this process's threads, by role: "main" (the training loop),
    "engine" (the WAGMA progress thread, named wagma-engine) and "other" (Horovod's
    background thread, gloo, torch, MPI)."""
    import threading
    main_tid = threading.main_thread().native_id
    out = {"main": 0.0, "engine": 0.0, "other": 0.0}
    for tid, name, seconds in thread_cpu_seconds():
        role = ("main" if tid == main_tid else
                "engine" if name == "wagma-engine" else "other")
        out[role] += seconds
    return out


def engine_stats():
    from horovod_wagma.common import engine_lib
    return engine_lib.stats() if engine_lib.started() else {}


def run_method(name, args, hvd, torch, comm, warm_sched, timed_sched):
    import numpy as np
    from mpi4py import MPI
    rank = comm.Get_rank()
    m = Method(name, args, hvd, torch, rank)
    for t in range(m.warmup):
        m.step(warm_sched[t % len(warm_sched), rank])
    wagma = name.startswith("wagma")
    before = engine_stats() if wagma else {}
    n = len(timed_sched)
    compute, stepping = np.empty(n), np.empty(n)
    comm.Barrier()
    threads0 = thread_cpu()
    t0, cpu0 = time.perf_counter(), time.process_time()
    for t in range(n):
        compute[t], stepping[t] = m.step(timed_sched[t, rank])
    comm.Barrier()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0   # all threads of this process (engine, Horovod)
    threads1 = thread_cpu()
    threads = {k: threads1[k] - threads0[k] for k in threads0}
    after = engine_stats() if wagma else {}
    # Counters: difference over the timed window. Maxima ("*_max") are cumulative since
    # the engine started (they cannot be windowed).
    stats = {k: after[k] if k.endswith("_max") else after[k] - before.get(k, 0)
             for k in after}
    wall = comm.bcast(wall, root=0)
    all_compute = comm.gather(compute, root=0)
    all_stepping = comm.gather(stepping, root=0)
    all_stats = comm.gather(stats, root=0)
    total_cpu = comm.reduce(cpu, op=MPI.SUM, root=0)
    all_threads = comm.gather(threads, root=0)
    if rank != 0:
        return None
    compute = np.stack(all_compute, axis=1)     # (steps, P)
    sync_rows = np.arange(args.sync_period - 1, n, args.sync_period)
    stepping = np.stack(all_stepping, axis=1)
    rec = {"wall_s": wall, "steps": n, "steps_per_s": n / wall,
           "ideal_measured_s": ideal_time(compute, args.sync_period),
           "cpu_ms_per_rank_step": 1e3 * total_cpu / (n * comm.Get_size()),
           # the same split by thread (from /proc, clock-tick resolution)
           "thread_cpu_ms_per_rank_step": {
               k: 1e3 * sum(t[k] for t in all_threads) / (n * comm.Get_size())
               for k in all_threads[0]},
           # CPU time of all ranks over the window, as a share of the host's cores
           "host_cpu_share": total_cpu / wall / (os.cpu_count() or 1),
           "mean_compute_ms": 1e3 * float(compute.mean()),
           "mean_nominal_ms": 1e3 * float(timed_sched.mean()),
           "mean_opt_step_ms": 1e3 * float(stepping.mean()),
           "max_opt_step_ms": 1e3 * float(stepping.max()),
           # Timed step t is a synchronising step (global round / averaging) of every
           # method when t % tau == tau - 1 (see the warm-up counts).
           "mean_opt_step_between_syncs_ms":
               1e3 * float(np.delete(stepping, sync_rows, axis=0).mean()),
           "mean_opt_step_at_syncs_ms": 1e3 * float(stepping[sync_rows].mean()),
           "per_rank_opt_step_ms": [1e3 * float(v) for v in stepping.mean(axis=0)]}
    if wagma:
        # Summed over ranks (maxima: max over ranks).
        rec["engine_stats_sum"] = {
            k: int((max if k.endswith("_max") else sum)(s.get(k, 0) for s in all_stats))
            for k in all_stats[0]}
    return rec


def run(args):
    from mpi4py import MPI
    import numpy as np
    import torch

    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    hvd.init()
    from horovod_wagma.common.schedule import default_group_size, groups
    S = args.group_size or default_group_size(P)
    tau = args.sync_period
    timed_sched = compute_schedule(args.seed, args.steps, P, args)
    warm_sched = compute_schedule(args.seed + 1, tau + 1, P, args)
    if "localsgd" in args.methods:
        init_gloo(comm, rank, P)
    if rank == 0:
        nparams = sum(p.numel() for p in make_model(torch).parameters())
        print(f"P={P}, S={S} (phases {groups(P, S)}), tau={tau}, {args.steps} timed steps, "
              f"step {1e3 * args.step_time:g} ms + {1e3 * args.delay:g} ms on "
              f"{args.num_delayed} ranks/step, model {nparams} params "
              f"({nparams * 4 / 1024:.0f} KB), {args.trials} trial(s)", flush=True)

    trials = {m: [] for m in args.methods}
    t_start = time.perf_counter()
    for trial in range(args.trials):
        for name in args.methods:
            comm.Barrier()
            rec = run_method(name, args, hvd, torch, comm, warm_sched, timed_sched)
            comm.Barrier()
            if rank == 0:
                trials[name].append(rec)
                print(f"  trial {trial}: {LABELS[name]:>10}: {rec['steps_per_s']:6.1f} "
                      f"steps/s  (compute {rec['mean_compute_ms']:.1f} ms/step vs "
                      f"{rec['mean_nominal_ms']:.1f} nominal, opt.step "
                      f"{rec['mean_opt_step_ms']:.1f} ms)", flush=True)
    if rank == 0:
        b = bounds(timed_sched, tau)
        report(args, P, S, trials, b, time.perf_counter() - t_start)
    comm.Barrier()
    if "localsgd" in args.methods:
        import torch.distributed as dist
        dist.destroy_process_group()


# -- reporting ------------------------------------------------------------------------
def report(args, P, S, trials, b, elapsed):
    n = args.steps
    best = {m: max(recs, key=lambda r: r["steps_per_s"]) for m, recs in trials.items()}
    rate = {m: r["steps_per_s"] for m, r in best.items()}
    rate["ideal"] = n / b["ideal"]
    meas = [r["ideal_measured_s"] for m, r in best.items() if m.startswith("wagma")]
    if meas:
        rate["ideal_measured"] = n / min(meas)

    print(f"\nThroughput under load imbalance: P={P}, S={S}, tau={args.sync_period}, "
          f"{n} timed steps, best of {args.trials} (benchmark wall {elapsed:.0f} s)")
    print(f"  nominal bounds: ideal (wait only at global rounds) {rate['ideal']:.1f} "
          f"steps/s; lockstep (sync every step) {n / b['lockstep']:.1f}; "
          f"no waiting at all {n / b['no_wait']:.1f}")
    print("  compute: sleep + forward + backward per step (mean over ranks and steps); "
          "opt.step: optimizer step incl.\n  averaging and waiting, overall / on steps "
          "between syncs / on synchronising steps (ms);\n  cpu ms: CPU time per rank "
          "and step (all threads), and split by thread: main loop / WAGMA engine /\n  "
          "other (Horovod's background thread, MPI, gloo); host cpu: all ranks' CPU "
          "time / wall time / cores")
    rows = [("method", "steps/s", "x ideal", "compute ms", "opt.step ms", "between",
             "at sync", "cpu ms", "main/engine/other", "host cpu", "notes")]
    for m in list(best) + ["ideal"] + (["ideal_measured"] if meas else []):
        r = best.get(m)
        notes = ""
        if r and "engine_stats_sum" in r:
            s = r["engine_stats_sum"]
            notes = (f"passive_joins={s.get('passive_joins', 0)} "
                     f"rounds={s.get('rounds_completed', 0)} "
                     f"activations={s.get('activations_sent', 0)}")
            if "call_wait_us" in s:
                notes += (f" call_wait={s['call_wait_us'] / 1e3 / (P * n):.1f}ms/step")
        if m == "ideal_measured":
            notes = "ideal from WAGMA's measured per-step compute"
        rows.append((LABELS[m], f"{rate[m]:.1f}", f"{rate[m] / rate['ideal']:.2f}",
                     f"{r['mean_compute_ms']:.1f}" if r else "-",
                     f"{r['mean_opt_step_ms']:.1f}" if r else "-",
                     f"{r['mean_opt_step_between_syncs_ms']:.1f}" if r else "-",
                     f"{r['mean_opt_step_at_syncs_ms']:.1f}" if r else "-",
                     f"{r['cpu_ms_per_rank_step']:.2f}" if r else "-",
                     "/".join(f"{r['thread_cpu_ms_per_rank_step'][k]:.1f}"
                              for k in ("main", "engine", "other")) if r else "-",
                     f"{100 * r['host_cpu_share']:.0f}%" if r else "-", notes))
    print_table(rows)

    ratios = wagma_ratios(rate, ("horovod", "wagma_sync", "localsgd"))
    if "wagma" in rate:
        w = rate["wagma"]
        cores = os.cpu_count() or 1
        cpu_bound = cores / (P * best["wagma"]["cpu_ms_per_rank_step"] / 1e3)
        ratios["wagma_over_host_cpu_bound"] = w / cpu_bound
        print(f"  host CPU bound for WAGMA's CPU use: {cpu_bound:.1f} steps/s "
              f"({cores} cores / ({P} ranks x {best['wagma']['cpu_ms_per_rank_step']:.2f} "
              f"ms CPU per rank-step)); WAGMA reaches {w / cpu_bound:.2f}x of it")
        verdict = "met" if ratios["wagma_over_ideal"] >= IDEAL_TARGET else "MISSED"
        print(f"  target WAGMA >= {IDEAL_TARGET}x ideal: {verdict} "
              f"({ratios['wagma_over_ideal']:.2f}x)")

    os.makedirs(RESULTS_DIR, exist_ok=True)
    json_path = args.json or os.path.join(RESULTS_DIR, f"imbalance_P{P}.json")
    plot_path = args.plot or os.path.join(RESULTS_DIR, f"imbalance_P{P}.png")
    with open(json_path, "w") as f:
        json.dump({"ranks": P, "horovod_cycle_time_ms": os.environ.get("HOROVOD_CYCLE_TIME"), "group_size": S, "sync_period": args.sync_period,
                   "steps": n, "step_time_s": args.step_time, "delay_s": args.delay,
                   "num_delayed": args.num_delayed, "seed": args.seed,
                   "trials": args.trials, "steps_per_s": rate, "ratios": ratios,
                   "bounds_s": b, "target_wagma_over_ideal": IDEAL_TARGET,
                   "runs": trials}, f, indent=2)
    plot(rate, P, S, args, plot_path)
    print(f"  wrote {json_path}\n  wrote {plot_path}")


def plot(rate, P, S, args, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [m for m in METHODS if m in rate] + ["ideal"]
    colors = {"horovod": "tab:gray", "wagma": "tab:blue", "wagma_sync": "tab:cyan",
              "localsgd": "tab:orange", "ideal": "white"}
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    bars = ax.bar([LABELS[k] for k in keys], [rate[k] for k in keys],
                  color=[colors[k] for k in keys], edgecolor="black")
    bars[-1].set_hatch("//")
    for bar, k in zip(bars, keys):
        ax.annotate(f"{rate[k]:.1f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=9)
    ax.axhline(IDEAL_TARGET * rate["ideal"], color="tab:red", linestyle="--", linewidth=1,
               label=f"{IDEAL_TARGET}x ideal")
    ax.set_ylabel("steps / s")
    ax.set_title(f"P={P}, S={S}, tau={args.sync_period}: {args.num_delayed} ranks/step "
                 f"delayed {1e3 * args.delay:g} ms on a {1e3 * args.step_time:g} ms step",
                 fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_ylim(0, 1.15 * max(rate[k] for k in keys))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout)
    run(args)


if __name__ == "__main__":
    main()
