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
  average+passive, average+v+passive
              "average" and "average+v" with wait-avoidance's passive rounds: at each
              step each replica is late with probability --passive (at least one is
              on time). A late replica's engine contributes its published value, the
              result of the previous round (model and gradient part), and the replica
              then takes the "local" rule: the round's mean plus its own progress
              since that value, s/P + (x_i - c_i). Its gradient part likewise:
              g_G + (g_i - c_g,i); v moves to that.
  .../fresh   the same with the "fresh" rule: a late replica swaps its published
              value for its fresh one, (s - c_i + x_i) / P.

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

METHODS = ("allreduce", "average", "average+v", "average+v/10", "average+passive",
           "average+v+passive", "average+passive/fresh", "average+v+passive/fresh")
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


def allreduce_step(task, model, opt, step_batches):
    grads = [gradients(task, model, b) for b in step_batches]
    for p, *gs in zip(model.parameters(), *grads):
        p.grad = torch.stack(gs).mean(0)
    opt.step()


def move_second_moment(opt, model, own, group, times=1):
    """v <- max(0, v + times (1 - beta2) (group^2 - own^2)), per parameter."""
    beta2 = opt.param_groups[0]["betas"][1]
    for p, g_i, g_g in zip(model.parameters(), own, group):
        v = opt.state[p]["exp_avg_sq"]
        v.add_(times * (1 - beta2) * (g_g * g_g - g_i * g_i)).clamp_(min=0)


def late_replicas(rng, size, passive):
    """Which replicas are late this round: each with probability ``passive``, never
    all (a round needs one application to activate it)."""
    late = rng.random(size) < passive
    if late.all():
        late[rng.integers(size)] = False
    return late


def run(task, method, seed, size, epochs, epoch_samples, passive=0.0):
    pool = task.epoch_pool(seed, epoch_samples)
    replicas = 1 if method == "allreduce" else size
    models = [task.make_model(seed) for _ in range(replicas)]
    opts = [task.make_optimizer(m.parameters()) for m in models]
    fix_v = "+v" in method
    late_p = passive if "+passive" in method else 0.0
    fresh_rule = method.endswith("/fresh")
    rng = np.random.default_rng((seed, 17))
    # Each replica's published value: the previous round's result, model and gradient.
    published = [[p.detach().clone() for p in m.parameters()] for m in models]
    published_g = [[torch.zeros_like(p) for p in m.parameters()] for m in models]
    curve, step = [], 0
    for epoch in range(epochs):
        for step_batches in zip(*shards(task, pool, seed, epoch, size)):
            if method == "allreduce":
                allreduce_step(task, models[0], opts[0], step_batches)
                continue
            grads = [gradients(task, m, b) for m, b in zip(models, step_batches)]
            for o in opts:
                o.step()
            step += 1
            late = late_replicas(rng, size, late_p) if late_p else np.zeros(size, bool)
            with torch.no_grad():
                fresh = [list(m.parameters()) for m in models]
                given = [published[i] if late[i] else [p.clone() for p in fresh[i]]
                         for i in range(size)]
                given_g = [published_g[i] if late[i] else grads[i] for i in range(size)]
                mean = [torch.stack(ps).mean(0) for ps in zip(*given)]
                mean_g = [torch.stack(gs).mean(0) for gs in zip(*given_g)]
                # "local": s/P + (x_i - c_i); "fresh": s/P + (x_i - c_i)/P; both s/P
                # when on time (c_i = x_i).
                own = 1.0 / size if fresh_rule else 1.0
                for i in range(size):
                    result = [mu + own * (x - c) for mu, x, c in
                              zip(mean, fresh[i], given[i])]
                    result_g = [mu + own * (g - c) for mu, g, c in
                                zip(mean_g, grads[i], given_g[i])]
                    for p, r in zip(fresh[i], result):
                        p.copy_(r)
                    published[i] = [r.clone() for r in result]
                    published_g[i] = result_g
                every = {"average+v/10": SYNC_PERIOD}.get(method, 1)
                if fix_v and step % every == 0:
                    for i, (m, o) in enumerate(zip(models, opts)):
                        move_second_moment(o, m, grads[i], published_g[i], every)
        curve.append(task.accuracy(models[0]))
    return curve


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="mlp_adam,cnn_adam")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--epoch-samples", type=int, default=5000)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--passive", type=float, default=0.1,
                    help="the probability that a replica is late for a round")
    args = ap.parse_args()
    methods = args.methods.split(",")
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; choose from {METHODS}")
    torch.set_num_threads(1)
    for name in args.tasks.split(","):
        cls = task_lib.ALL_TASKS[name]
        curves = {m: [] for m in methods}
        for seed in range(args.seeds):
            task = cls(seed)
            for m in methods:
                curves[m].append(run(task, m, seed, args.size, args.epochs,
                                     args.epoch_samples, args.passive))
        print(f"\n{name}: P={args.size}, batch {cls.batch} per replica, accuracy at each "
              f"epoch end (median over {args.seeds} seeds; targets {cls.rising_target:g} "
              f"rising, {cls.target:g} plateau)")
        for m in methods:
            med = [statistics.median(c[e] for c in curves[m]) for e in range(args.epochs)]
            to = next((e + 1 for e, a in enumerate(med) if a >= cls.target), None)
            print(f"  {m:10s} " + " ".join(f"{a:5.1f}" for a in med)
                  + f"   epochs to {cls.target:g}: {to or 'never'}")


if __name__ == "__main__":
    main()
