#!/usr/bin/env python
"""How bench/tasks.py's learning rates and targets were chosen, and what a step costs.

Learning rates and targets
--------------------------
Measured single-process on this (2-core, shared) host with ``python lab/task_targets.py``:
synchronous SGD with the global batch of 8 ranks (8 per-rank batches of 16 concatenated,
i.e. Horovod's gradient allreduce), momentum 0.9, 400 steps, held-out accuracy every 20
steps, seeds 0-4. "Plateau" is the mean accuracy over steps 300-400; "steps to target"
is the first evaluation at or above the target (every 20 steps).

====  ====  ==========  ==========================  =======  =============  =============
task  lr    plateau     plateau per seed            target   steps, iid     steps, noniid
====  ====  ==========  ==========================  =======  =============  =============
mlp   0.05  86.4        86.7 86.0 85.9 87.1 86.3    84.5     160-240 (212)  200-280 (244)
cnn   0.1   96.0        96.0 96.4 95.8 95.5 96.2    94.5     160-240 (192)  180-220 (200)
seq   0.3   92.2        91.6 92.0 92.2 92.6 92.7    90.5     140-220 (180)  180-240 (200)
====  ====  ==========  ==========================  =======  =============  =============

(steps: range over seeds, mean in brackets.) Each target is the IID plateau minus
~1.5-2 points, reached by the synchronous baseline in ~150-250 steps; the same target
is used for IID and non-IID data. Non-IID data barely changes synchronous SGD (the
concatenated global batch is nearly IID); it matters for local SGD and WAGMA. The lr
was the best of {0.03, 0.05, 0.1} (mlp), {0.05, 0.1, 0.15} (cnn), {0.1, 0.2, 0.3, 0.5}
(seq). A lone rank on batch 16 at these rates does not converge well (plateau: mlp
~39% after peaking at ~53%, cnn ~76%, seq ~81%), but a single-process local-SGD
simulation (8 models, batch 16 each, models averaged every 10 steps; seed 0) tracks
the synchronous baseline on IID data (plateau 87.0 / 96.5 / 92.1) and trails it on
non-IID data (85.7 / 94.3 / 92.0).

CPU cost (``python lab/task_targets.py --timing``; one thread, per-thread CPU time, median
of 200 steps, range over 5 rounds; the low end is a quiet host, the high end with other
jobs on the 2 cores):

====  ===============  ============  ===============
task  step (batch 16)  accuracy()    __init__ (data)
====  ===============  ============  ===============
mlp   0.59-0.87 ms     4.2-6.6 ms    0.15 s
cnn   0.90-1.51 ms     3.2-6.2 ms    0.2 s
seq   0.94-1.68 ms     6.2-20 ms     0.1 s
====  ===============  ============  ===============

``batches(..., steps=2000)`` takes ~5 ms.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from tasks import ALL_TASKS, MODES, TASKS  # noqa: E402


def _timing(task, rounds=5, steps=200):
    model = task.make_model(0)
    opt = torch.optim.SGD(model.parameters(), lr=task.lr, momentum=task.momentum)
    step_ms, acc_ms = [], []
    for r in range(rounds):
        times = []
        for i, b in enumerate(task.batches(0, 8, "iid", steps + 20, r)):
            t = time.thread_time()
            opt.zero_grad()
            task.loss(model, b).backward()
            opt.step()
            if i >= 20:
                times.append(time.thread_time() - t)
        step_ms.append(1e3 * float(np.median(times)))
        times = []
        for _ in range(10):
            t = time.thread_time()
            task.accuracy(model)
            times.append(time.thread_time() - t)
        acc_ms.append(1e3 * float(np.median(times)))
    return step_ms, acc_ms


def _pilot(T, seed, mode, steps, every, lr, size=8):
    """Synchronous SGD on the concatenated batches of `size` ranks (Horovod's step)."""
    task = T(seed)
    model = task.make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=task.momentum)
    per_rank = [task.batches(r, size, mode, steps, seed) for r in range(size)]
    curve = [task.accuracy(model)]
    for s in range(steps):
        opt.zero_grad()
        task.loss(model, torch.cat([b[s] for b in per_rank])).backward()
        opt.step()
        if (s + 1) % every == 0:
            curve.append(task.accuracy(model))
    return curve


def _epoch_pilot(T, seed, epochs, epoch_samples, size=8):
    """Synchronous training as bench/epoch_loop.py's Horovod sees it: a fixed pool of
    `epoch_samples` training samples (drawn as the epoch loop draws it), reshuffled
    every epoch and cut into global batches of `size` ranks' batches (Horovod's step),
    with the task's own optimizer and lr schedule: held-out accuracy after every
    epoch."""
    task = T(seed)
    model = task.make_model(seed)
    opt = task.make_optimizer(model.parameters())
    pool = task.epoch_pool(seed, epoch_samples)
    g = np.random.default_rng((seed, 12))
    step = size * task.batch
    curve = []
    for e in range(epochs):
        for group in opt.param_groups:
            group["lr"] = task.lr_at(e)
        order = pool[g.permutation(len(pool))]
        for k in range(0, len(order), step):
            opt.zero_grad()
            task.loss(model, torch.from_numpy(order[k:k + step])).backward()
            opt.step()
        curve.append(task.accuracy(model))
    return curve


def epochs_main(args):
    """--epochs N: every task's per-epoch curve of the synchronous baseline, the
    median over seeds, and the epochs to its two targets."""
    for name in args.tasks.split(","):
        T = ALL_TASKS[name]
        for mode in ("iid",):   # the epoch loop shards one pool: IID
            curves = [_epoch_pilot(T, seed, args.epochs, args.epoch_samples)
                      for seed in args.seeds]
            med = np.median(np.array(curves), axis=0)
            to = {t: next((e + 1 for e, a in enumerate(med) if a >= t), None)
                  for t in (T.rising_target, T.target)}
            print(f"{name:9s} {mode:6s} median by epoch " + " ".join(f"{a:.1f}" for a in med)
                  + f" | last-3 mean {np.mean(med[-3:]):.1f} | epochs to rising "
                  f"{T.rising_target:g}: {to[T.rising_target]}, plateau {T.target:g}: "
                  f"{to[T.target]}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description="Measure the tasks (see the module docstring).")
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--timing", action="store_true", help="only the CPU cost")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--every", type=int, default=20)
    p.add_argument("--lr", type=float, default=None, help="default: the task's")
    p.add_argument("--epochs", type=int, default=None,
                   help="per-epoch curves of the synchronous baseline instead (any task "
                        "of bench/tasks.py ALL_TASKS, its own optimizer and schedule)")
    p.add_argument("--epoch-samples", type=int, default=20000)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if args.epochs:
        return epochs_main(args)
    for name in args.tasks.split(","):
        T = TASKS[name]
        t = time.perf_counter()
        task = T(0)
        init_s = time.perf_counter() - t
        step_ms, acc_ms = _timing(task)
        print(f"{name}: __init__ {init_s:.2f} s; CPU ms per step (batch {task.batch}, "
              f"median of 200, 5 rounds) {' '.join(f'{x:.2f}' for x in step_ms)}; "
              f"accuracy() {' '.join(f'{x:.1f}' for x in acc_ms)} ms", flush=True)
        if args.timing:
            continue
        lr = args.lr or task.lr
        for mode in args.modes:
            for seed in args.seeds:
                curve = _pilot(T, seed, mode, args.steps, args.every, lr)
                tail = curve[-(len(curve) // 4 + 1):]
                hit = next((i * args.every for i, a in enumerate(curve)
                            if a >= task.target), None)
                print(f"  {mode:6s} seed {seed} lr {lr}: "
                      + " ".join(f"{a:.1f}" for a in curve)
                      + f" | plateau (last quarter) {np.mean(tail):.2f}"
                      + f" | target {task.target} at step {hit}", flush=True)


if __name__ == "__main__":
    main()
