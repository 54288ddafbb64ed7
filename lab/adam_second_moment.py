#!/usr/bin/env python
"""Why model averaging learns less per step than Horovod with Adam, in one process.

With no straggler and every round fresh, WAGMA at P=8 (groups of 8) averages the
models after each rank's own Adam step. Adam's update is m / (sqrt(v) + eps), linear
in the first moment m but not in the second moment v. Horovod's v is an average of
the squared *mean* gradient, E[g_bar^2] = mu^2 + s^2 / P (s^2: one rank's batch
noise); each rank's own v is E[g_i^2] = mu^2 + s^2. Where noise dominates, averaging
the ranks' Adam steps therefore takes steps up to sqrt(P) smaller than Horovod's, and
averaging the optimizer state does not help (the mean of the v_i is still mu^2 + s^2).

This script isolates that, with no engine, no timing and no staleness: P replicas of
a bench/tasks.py task in lockstep, each on its own shard of the epoch loop's pool.

  allreduce   one model, Adam on the mean of the P gradients (Horovod);
  average     P models, each its own Adam, parameters averaged after every step
              (WAGMA with every round fresh and the group the whole world);
  average+v   the same, and after every step each replica's v is moved to the one
              the mean gradient would have given it:
              v_i <- v_i + (1 - beta2) (g_bar^2 - g_i^2)
              (in lockstep, every replica then carries Horovod's v, and the averaged
              step equals Horovod's: the mean of m_i / (sqrt(v) + eps) over i is
              m_bar / (sqrt(v) + eps) with m_bar Horovod's first moment);
  average+v/10  the correction at every 10th step only (WAGMA's global rounds), ten
              steps' worth: v_i <- max(0, v_i + 10 (1 - beta2) (g_bar^2 - g_i^2)), as
              if the gradient rode the state round that global rounds already send.

Usage: python lab/adam_second_moment.py --tasks mlp_adam,cnn_adam --seeds 3 --epochs 16
"""
import argparse
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import tasks as task_lib  # noqa: E402

METHODS = ("allreduce", "average", "average+v", "average+v/10")
SYNC_PERIOD = 10   # WAGMA's default tau


def shards(task, pool, seed, epoch, size):
    """Each replica's batches for one epoch: the pool shuffled for (seed, epoch), dealt
    round-robin, cut into batches of task.batch (the epoch loop's sampler's shape)."""
    order = pool[np.random.default_rng((seed, 5, epoch)).permutation(len(pool))]
    per_rank = [order[r::size] for r in range(size)]
    steps = min(len(p) for p in per_rank) // task.batch
    return [[torch.from_numpy(p[s * task.batch:(s + 1) * task.batch]) for s in range(steps)]
            for p in per_rank]


def gradients(task, model, batch):
    model.zero_grad()
    task.loss(model, batch).backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def run(task, method, seed, size, epochs, epoch_samples):
    pool = task.epoch_pool(seed, epoch_samples)
    replicas = 1 if method == "allreduce" else size
    models = [task.make_model(seed) for _ in range(replicas)]
    opts = [task.make_optimizer(m.parameters()) for m in models]
    curve, step = [], 0
    for epoch in range(epochs):
        for step_batches in zip(*shards(task, pool, seed, epoch, size)):
            if method == "allreduce":
                grads = [gradients(task, models[0], b) for b in step_batches]
                for p, *gs in zip(models[0].parameters(), *grads):
                    p.grad = torch.stack(gs).mean(0)
                opts[0].step()
                continue
            grads = [gradients(task, m, b) for m, b in zip(models, step_batches)]
            for o in opts:
                o.step()
            with torch.no_grad():
                for ps in zip(*(m.parameters() for m in models)):
                    mean = torch.stack(ps).mean(0)
                    for p in ps:
                        p.copy_(mean)
                step += 1
                every = {"average+v": 1, "average+v/10": SYNC_PERIOD}.get(method)
                if every and step % every == 0:
                    for i, (m, o) in enumerate(zip(models, opts)):
                        beta2 = o.param_groups[0]["betas"][1]
                        for k, p in enumerate(m.parameters()):
                            g_bar = torch.stack([g[k] for g in grads]).mean(0)
                            v = o.state[p]["exp_avg_sq"]
                            v.add_(every * (1 - beta2) *
                                   (g_bar * g_bar - grads[i][k] * grads[i][k]))
                            v.clamp_(min=0)
        curve.append(task.accuracy(models[0]))
    return curve


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="mlp_adam,cnn_adam")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--epoch-samples", type=int, default=5000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    for name in args.tasks.split(","):
        cls = task_lib.ALL_TASKS[name]
        curves = {m: [] for m in METHODS}
        for seed in range(args.seeds):
            task = cls(seed)
            for m in METHODS:
                curves[m].append(run(task, m, seed, args.size, args.epochs,
                                     args.epoch_samples))
        print(f"\n{name}: P={args.size}, batch {cls.batch} per replica, accuracy at each "
              f"epoch end (median over {args.seeds} seeds; targets {cls.rising_target:g} "
              f"rising, {cls.target:g} plateau)")
        for m in METHODS:
            med = [statistics.median(c[e] for c in curves[m]) for e in range(args.epochs)]
            to = next((e + 1 for e, a in enumerate(med) if a >= cls.target), None)
            print(f"  {m:10s} " + " ".join(f"{a:5.1f}" for a in med)
                  + f"   epochs to {cls.target:g}: {to or 'never'}")


if __name__ == "__main__":
    main()
