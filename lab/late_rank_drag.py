#!/usr/bin/env python
"""Where a late rank's rounds cost learning per step, in one process.

Under random stragglers (the time-bounded loop's pattern: at each step 2 of 8 ranks
are late by four steps' time) WAGMA with Adam runs 1.9x Horovod's steps per second
but needs about 2.4x its steps to the target (docs/benchmarks.md). This script replays
that pattern without an engine or a clock, to separate the causes:

P replicas in rounds. At each round an on-time replica becomes late with probability
--late-p: it takes its Adam step from its model of now, but its fresh value x = b + dx
(b: its base, the model it stepped from) arrives LAG rounds later. Meanwhile its
engine joins each round passively with a contribution c:

  anchor  c = b, the newest value its application entered or applied: what the
          engine does under "fresh" and "local" (stream_state.h), so the same old
          model pulls every round's mean back;
  follow  c = the output of the previous round it served: the consensus, so a
          passive member adds no step of its own but pulls nothing back (the
          engine's "follow" rule, built after this measurement);
  out     c left out of the mean (max_staleness=0).

On the round its value arrives the replica joined passively with c; its application
then takes the round's result by the rule (docs/semantics.md): "fresh"
(s - c + x) / P, "local" s / P + (x - b'), with b' the value it contributed; "rebase"
s / P + dx / P (its step moved onto the round's mean, as if its fresh value were the
consensus plus its own step: this counts the step once, without the old base). The
other members take s / P. The second moment follows the group's mean gradient as the
default does (stale gradients enter as the models do).

  allreduce   Horovod's Adam on the mean of the P gradients, every replica on time.

Accuracy of the replicas' mean model every --eval-every rounds; the rounds to the task's
targets, medians over seeds. Usage:
  python lab/late_rank_drag.py --tasks mlp_adam --seeds 3 --rounds 1500
"""
import argparse
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import tasks as task_lib  # noqa: E402
from adam_second_moment import gradients, move_second_moment  # noqa: E402

CONTRIBUTIONS = ("anchor", "follow", "out")
RULES = ("fresh", "local", "rebase")


class Batches:
    """One replica's endless stream of batches: its round-robin share of the pool,
    reshuffled every pass (the epoch loop's sampler's shape)."""

    def __init__(self, task, pool, seed, rank, size):
        self.task, self.pool, self.seed, self.rank, self.size = task, pool, seed, rank, size
        self.epoch, self.queue = 0, []

    def next(self):
        if not self.queue:
            order = self.pool[np.random.default_rng((self.seed, 5, self.epoch)).permutation(
                len(self.pool))][self.rank::self.size]
            b = self.task.batch
            self.queue = [torch.from_numpy(order[s * b:(s + 1) * b])
                          for s in range(len(order) // b)]
            self.epoch += 1
        return self.queue.pop(0)


def mean_of(tensor_lists):
    return [torch.stack(ts).mean(0) for ts in zip(*tensor_lists)]


def evaluate(task, models):
    probe = task.make_model(0)
    with torch.no_grad():
        for p, *ps in zip(probe.parameters(), *[m.parameters() for m in models]):
            p.copy_(torch.stack(ps).mean(0))
    return task.accuracy(probe)


def run(task, method, seed, size, rounds, epoch_samples, late_p, lag, eval_every):
    pool = task.epoch_pool(seed, epoch_samples)
    streams = [Batches(task, pool, seed, r, size) for r in range(size)]
    if method == "allreduce":
        model = task.make_model(seed)
        opt = task.make_optimizer(model.parameters())
        curve = []
        for t in range(rounds):
            grads = [gradients(task, model, s.next()) for s in streams]
            for p, *gs in zip(model.parameters(), *grads):
                p.grad = torch.stack(gs).mean(0)
            opt.step()
            if (t + 1) % eval_every == 0:
                curve.append(evaluate(task, [model]))
        return curve
    contribution, rule = method.split("/")
    models = [task.make_model(seed) for _ in range(size)]
    opts = [task.make_optimizer(m.parameters()) for m in models]
    rng = np.random.default_rng((seed, 23))
    snap = lambda m: [p.detach().clone() for p in m.parameters()]  # noqa: E731
    zeros = [torch.zeros_like(p) for p in models[0].parameters()]
    # Per replica: rounds until its value arrives (0: on time), its base b, its fresh
    # value x and gradient g, and the previous round's output it holds (for "follow").
    left = [0] * size
    base, fresh, grad = [None] * size, [None] * size, [None] * size
    base_g = [zeros] * size  # the gradient part of the base (its round's mean)
    last_out = [snap(m) for m in models]
    last_out_g = [zeros] * size
    curve = []
    for t in range(rounds):
        for i in range(size):
            if left[i] == 0:  # on time: step now; maybe late with this step's value
                base[i], base_g[i] = snap(models[i]), last_out_g[i]
                grad[i] = gradients(task, models[i], streams[i].next())
                opts[i].step()
                fresh[i] = snap(models[i])
                if rng.random() < late_p:
                    left[i] = lag
        arriving = [left[i] == 1 for i in range(size)]
        passive = [left[i] > 0 for i in range(size)]
        # Contributions: fresh values on time; passive ones by the policy.
        given, given_g, counted = [], [], []
        for i in range(size):
            if not passive[i]:
                given.append(fresh[i]), given_g.append(grad[i]), counted.append(True)
            elif contribution == "anchor":
                given.append(base[i]), given_g.append(base_g[i]), counted.append(True)
            elif contribution == "follow":
                given.append(last_out[i]), given_g.append(last_out_g[i]), counted.append(True)
            else:
                given.append(None), given_g.append(None), counted.append(False)
        idx = [i for i in range(size) if counted[i]] or [i for i in range(size)
                                                         if not passive[i]]
        mean = mean_of([given[i] for i in idx])
        mean_g = mean_of([given_g[i] for i in idx])
        n = len(idx)
        with torch.no_grad():
            for i in range(size):
                if passive[i] and not arriving[i]:
                    last_out[i], last_out_g[i] = mean, mean_g  # served, not applied
                    continue
                if arriving[i]:
                    x, c = fresh[i], given[i] if counted[i] else fresh[i]
                    dx = [a - b for a, b in zip(x, base[i])]
                    if rule == "fresh":
                        own = [mu + (xi - ci) / n for mu, xi, ci in zip(mean, x, c)] \
                            if counted[i] else mean_of([*(given[j] for j in idx), x])
                    elif rule == "local":
                        own = [mu + xi - ci for mu, xi, ci in zip(mean, x, c)]
                    else:
                        own = [mu + d / n for mu, d in zip(mean, dx)]
                else:
                    own = mean
                for p, r in zip(models[i].parameters(), own):
                    p.copy_(r)
                last_out[i], last_out_g[i] = own, mean_g
                move_second_moment(opts[i], models[i], grad[i], mean_g)
        left = [max(0, k - 1) for k in left]
        if (t + 1) % eval_every == 0:
            curve.append(evaluate(task, models))
    return curve


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="mlp_adam")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=1500)
    ap.add_argument("--epoch-samples", type=int, default=5000)
    ap.add_argument("--late-p", type=float, default=0.25,
                    help="probability that an on-time replica's step is late")
    ap.add_argument("--lag", type=int, default=4, help="rounds a late value takes")
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--methods", default="allreduce," + ",".join(
        f"{c}/{r}" for c in CONTRIBUTIONS for r in RULES))
    args = ap.parse_args()
    methods = args.methods.split(",")
    for m in methods:
        c, _, r = m.partition("/")
        if m != "allreduce" and (c not in CONTRIBUTIONS or r not in RULES):
            ap.error(f"unknown method {m!r}: allreduce or CONTRIBUTION/RULE with "
                     f"{CONTRIBUTIONS} x {RULES}")
    torch.set_num_threads(1)
    for name in args.tasks.split(","):
        cls = task_lib.ALL_TASKS[name]
        print(f"\n{name}: P={args.size}, late p={args.late_p} for {args.lag} rounds; "
              f"accuracy of the mean model every {args.eval_every} rounds (median of "
              f"{args.seeds} seeds); rounds to {cls.rising_target:g} / {cls.target:g}")
        for m in methods:
            curves = [run(cls(seed), m, seed, args.size, args.rounds, args.epoch_samples,
                          args.late_p, args.lag, args.eval_every) for seed in range(args.seeds)]
            med = [statistics.median(c[k] for c in curves) for k in range(len(curves[0]))]

            def to(target):
                hits = [next(((k + 1) * args.eval_every for k, a in enumerate(c)
                              if a >= target), None) for c in curves]
                got = sorted(h for h in hits if h is not None)
                return (f"{statistics.median(got):.0f} [{got[0]}-{got[-1]}] {len(got)}/"
                        f"{len(hits)}" if got else "never")
            print(f"  {m:14s} " + " ".join(f"{a:4.1f}" for a in med[::2])
                  + f"  | to rising {to(cls.rising_target)}, plateau {to(cls.target)}",
                  flush=True)


if __name__ == "__main__":
    main()
