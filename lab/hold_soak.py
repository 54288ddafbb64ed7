#!/usr/bin/env python
"""Hold soak: the epoch loop with a persistent straggler, run hundreds of times
unattended, looking for a step that takes more than 10x its median (docs/benchmarks.md,
2026-11-28: in 1 of 36 epoch-loop runs the slow rank 0 was held about 56 s inside its
own steps while the others sat in the epoch-end Horovod allreduce).

    python lab/hold_soak.py [--runs 150] [--transport mpi|gloo] [--np 8]
        [--tasks cnn,mlp] [--samplers equal,balanced] [--epochs 3] [--out DIR]

Each run is the loop bench/epoch_loop.py times (the same bench tasks, models, SGD and
DistributedWagmaOptimizer with its defaults), with what does not bear on a hold left
out (no accuracy snapshots): per epoch ``set_epoch``, a sleep per step for the compute
(rank 0 2x slower: the "persistent" case), the optimizer step, and at the epoch end
the loss on a held batch averaged through a Horovod allreduce every rank meets at.
Runs alternate the tasks and the samplers (torch's DistributedSampler: equal shares;
BalancedDistributedSampler: shares that follow speed); one launch runs them all, one
transport per launch (mpirun, or horovodrun --gloo).

What is captured when a step is held, on every rank:
- a watchdog thread per rank sees the rank's current step (sleep, backward, optimizer
  step) outlast max(10 x the run's median step, --min-hold) and writes every Python
  thread's stack (faulthandler) and the engine's counters to
  ``DIR/hold.<run>.<rank>.<n>.txt``, and a flag file that makes every other rank's
  watchdog do the same at once (what each rank was doing during the hold);
- with ``--gdb``, every native thread's stack too (the engine's and Horovod's);
- the engine's own hold report (WAGMA_HOLD_REPORT_S, set to --hold-report-s: 2) on
  stderr, which names the round, the stream and the messages it waits on, and each
  member's view of it (cpp_ops/engine/health/hold_report.h).
Per run, rank 0 prints one line (run, task, sampler, wall, epochs, slowest step over
its median, holds) and the launch ends with a summary; everything also goes to
``DIR/summary.json``.
"""
import argparse
import faulthandler
import glob
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import harness  # noqa: E402  (bench/: the launchers and Open MPI's settings)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=150)
    p.add_argument("--transport", choices=("mpi", "gloo"), default="mpi")
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--tasks", default="cnn,mlp")
    p.add_argument("--samplers", default="equal,balanced")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--epoch-samples", type=int, default=4000)
    p.add_argument("--step-time", type=float, default=0.010)
    p.add_argument("--hold-factor", type=float, default=10.0)
    p.add_argument("--min-hold", type=float, default=0.5,
                   help="seconds: a step shorter than this is never a hold")
    p.add_argument("--hold-report-s", type=float, default=2.0)
    p.add_argument("--gdb", action="store_true",
                   help="also every native thread's stack (gdb -batch) in each dump")
    p.add_argument("--out", default="/tmp/wagma-hold-soak")
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def launch(args):
    """Re-runs this script as the ranks of one job on the chosen transport."""
    os.makedirs(args.out, exist_ok=True)
    for f in glob.glob(os.path.join(args.out, "*")):
        os.remove(f)
    argv = [sys.executable, os.path.abspath(__file__), "--worker"] + sys.argv[1:]
    cmd = harness.launch_prefix(args.transport, args.np) + argv
    env = dict(os.environ, **harness.MPIRUN_ENV, WAGMA_HOLD_REPORT_S=str(args.hold_report_s))
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env, timeout=args.timeout + 60).returncode


class Watchdog(threading.Thread):
    """Watches this rank's current step; on a hold (or another rank's flag) dumps every
    thread's stack and the engine's counters."""

    def __init__(self, out, rank, args):
        super().__init__(name="hold-watchdog", daemon=True)
        self.out, self.rank, self.args = out, rank, args
        self.lock = threading.Lock()
        self.run_id = -1
        self.step_began = None  # perf_counter of the current step's start
        self.step_index = -1
        self.durations = []
        self.dumped_flags = set()
        self.holds = 0  # steps of this run seen held here

    def new_run(self, run_id):
        with self.lock:
            self.run_id, self.durations, self.holds = run_id, [], 0
            self.step_began, self.step_index = None, -1

    def step_begin(self, index):
        with self.lock:
            self.step_began, self.step_index = time.perf_counter(), index

    def step_end(self):
        with self.lock:
            if self.step_began is not None:
                self.durations.append(time.perf_counter() - self.step_began)
            self.step_began = None

    def threshold(self):
        median = statistics.median(self.durations) if len(self.durations) >= 5 else None
        return max(self.args.min_hold, self.args.hold_factor * median) if median else \
            max(self.args.min_hold, 2.0)

    def dump(self, why):
        from horovod_wagma.common.op import engine_lib
        n = len(glob.glob(os.path.join(self.out, f"hold.{self.run_id}.{self.rank}.*")))
        path = os.path.join(self.out, f"hold.{self.run_id}.{self.rank}.{n}.txt")
        with open(path, "w") as f:
            f.write(f"rank {self.rank} run {self.run_id}: {why}\n")
            try:
                f.write(json.dumps(engine_lib.stats_json()["engine"]) + "\n")
            except Exception as e:  # noqa: BLE001 - a report, not a check
                f.write(f"engine stats unavailable: {e}\n")
            f.flush()
            faulthandler.dump_traceback(file=f, all_threads=True)
            if self.args.gdb:
                # The engine's and Horovod's threads are native: only gdb sees them.
                f.write("\n--- gdb: thread apply all bt ---\n")
                f.flush()
                subprocess.run(["gdb", "-p", str(os.getpid()), "-batch", "-nx",
                                "-ex", "set pagination off", "-ex", "thread apply all bt"],
                               stdout=f, stderr=subprocess.STDOUT, timeout=120)

    def run(self):
        reported = None
        while True:
            time.sleep(0.05)
            with self.lock:
                began, index, run_id = self.step_began, self.step_index, self.run_id
                limit = self.threshold()
            if began is not None and (run_id, index) != reported:
                held = time.perf_counter() - began
                if held > limit:
                    reported = (run_id, index)
                    self.holds += 1
                    flag = os.path.join(self.out, f"flag.{run_id}.{self.rank}.{index}")
                    open(flag, "w").close()
                    self.dumped_flags.add(os.path.basename(flag))
                    print(f"[hold soak rank {self.rank}] run {run_id} step {index} held "
                          f"{held:.2f} s (limit {limit:.2f} s): stacks to {self.out}",
                          file=sys.stderr, flush=True)
                    self.dump(f"step {index} held {held:.2f} s (limit {limit:.2f} s)")
            for flag in glob.glob(os.path.join(self.out, "flag.*")):
                name = os.path.basename(flag)
                if name not in self.dumped_flags:
                    self.dumped_flags.add(name)
                    self.dump(f"another rank's hold: {name}")


def one_run(hvd, task, sampler_kind, seed, args, watchdog, rank, size):
    """One epoch-loop run; returns this rank's record."""
    import numpy as np
    import torch
    from torch.utils.data.distributed import DistributedSampler
    import methods as registry
    model, method = registry.build_for_task("wagma", task, seed, hvd, size, 10)
    pool = np.random.default_rng((seed, 11)).choice(
        len(task.y_train), size=min(args.epoch_samples, len(task.y_train)), replace=False)
    kind = hvd.BalancedDistributedSampler if sampler_kind == "balanced" else DistributedSampler
    sampler = kind(range(len(pool)), num_replicas=size, rank=rank, seed=seed)
    factor = (2.0 if rank == 0 else 1.0) * args.step_time
    eval_batch = torch.from_numpy(pool[:task.batch])
    hvd.allreduce(torch.zeros(1), name="hold_soak.start")
    t0 = time.perf_counter()
    steps, epochs = 0, []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        order = pool[list(sampler)]
        batches = [order[k:k + task.batch] for k in range(0, len(order), task.batch)]
        e0 = time.perf_counter()
        for b in batches:
            b = torch.from_numpy(b)
            watchdog.step_begin(steps)
            time.sleep(factor * task.compute_scale(b) * len(b) / task.batch)
            method.zero_grad()
            task.loss(model, b).backward()
            method.step()
            watchdog.step_end()
            steps += 1
        e1 = time.perf_counter()
        with torch.no_grad():
            value = float(task.loss(model, eval_batch))
        hvd.allreduce(torch.tensor([value]), name="hold_soak.metric")
        epochs.append(dict(train_s=e1 - e0, wait_s=time.perf_counter() - e1,
                           steps=len(batches)))
    method.finish()
    durations = watchdog.durations
    median = statistics.median(durations) if durations else float("nan")
    return dict(wall=time.perf_counter() - t0, steps=steps, epochs=epochs,
                median_step=median, slowest_step=max(durations) if durations else 0.0,
                holds=watchdog.holds)


def worker(args):
    import torch
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    import tasks as task_lib
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    watchdog = Watchdog(args.out, rank, args)
    watchdog.start()
    task_names = args.tasks.split(",")
    samplers = args.samplers.split(",")
    cache = {}
    records = []
    t_start = time.time()
    for run_id in range(args.runs):
        name = task_names[run_id % len(task_names)]
        sampler_kind = samplers[(run_id // len(task_names)) % len(samplers)]
        seed = run_id
        if name not in cache:
            cache[name] = task_lib.TASKS[name](0)
        watchdog.new_run(run_id)
        rec = one_run(hvd, cache[name], sampler_kind, seed, args, watchdog, rank, size)
        rows = hvd.allgather_object(rec)
        if rank == 0:
            slow = max(r["slowest_step"] / r["median_step"] for r in rows)
            holds = sum(r["holds"] for r in rows)
            records.append(dict(run=run_id, task=name, sampler=sampler_kind,
                                wall=max(r["wall"] for r in rows),
                                slowest_over_median=slow, holds=holds,
                                rank0_train_s=[e["train_s"] for e in rows[0]["epochs"]],
                                fast_wait_s=[max(r["epochs"][e]["wait_s"] for r in rows[1:])
                                             for e in range(args.epochs)]))
            print(f"run {run_id:4d} {name:4s} {sampler_kind:8s} wall {records[-1]['wall']:6.2f} s"
                  f"  slowest step {slow:6.1f}x its median  holds {holds}", flush=True)
    if rank == 0:
        held = [r for r in records if r["holds"]]
        summary = dict(transport=args.transport, ranks=size, runs=len(records),
                       runs_with_holds=len(held), held=held,
                       worst_slowest_over_median=max(r["slowest_over_median"] for r in records),
                       median_wall=statistics.median(r["wall"] for r in records),
                       seconds=time.time() - t_start, records=records)
        with open(os.path.join(args.out, f"summary.{args.transport}.json"), "w") as f:
            json.dump(summary, f, indent=1)
        print(f"\n{args.transport}: {len(records)} runs, {len(held)} with a hold "
              f"(a step over {args.hold_factor:g}x its median and {args.min_hold:g} s); "
              f"worst slowest step {summary['worst_slowest_over_median']:.1f}x its median; "
              f"median run {summary['median_wall']:.1f} s; {summary['seconds']:.0f} s in all",
              flush=True)
    hvd.allreduce(torch.zeros(1), name="hold_soak.end")


if __name__ == "__main__":
    a = parse_args()
    if a.worker:
        worker(a)
    else:
        sys.exit(launch(a))
