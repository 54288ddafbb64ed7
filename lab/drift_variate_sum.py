"""The drift variates' common part (docs/benchmarks.md, "Drift correction under a
persistent straggler").

Drift correction's variates c_i should sum to zero over the ranks: their mean acts on
every rank's gradient as a false one. Each rank's variates change only when its app
collects a round of the optimizer's "drift" stream, so the sum is compared at the
rounds every rank collected (a rank that stops early leaves the others' later rounds
unmatched: comparing after the run measures that tail, not the rule). IID least
squares (nothing to learn, so every bit of c is error), one rank 2x slower
("persistent", with half the others' steps so that all finish together) or random
delays of the same mean ("random"), optionally with a Horovod allreduce every
COLLECTIVE_EVERY steps (an epoch end, where fast ranks wait and then skip the rounds
served meanwhile).

    mpirun -np 4 python lab/drift_variate_sum.py persistent wait_avoiding 1500 [150]

Prints the largest max |mean_i c_i| over the rounds every rank collected, and the
ranks' mean of max |c_i - mean c| (the per-rank part) at the last of them.
"""
import random
import sys
import time

import horovod.torch as horovod
import numpy as np
import torch
from mpi4py import MPI

import horovod_wagma.torch as hvd
from horovod_wagma.torch.drift_correction import DriftCorrection

STEP_S = 0.004  # injected compute per step of a fast rank


def delay(pattern, rank, size, rng):
    if pattern == "persistent":
        return 2 * STEP_S if rank == 0 else STEP_S
    # One rank in `size` takes a step of (1 + size / 2) times, at random: the same
    # mean delay over the ranks as one rank 2x slower.
    return STEP_S * (1 + (rng.random() < 1 / size) * size * 0.5)


def record_variates(snapshots):
    """After each drift round this rank collects: snapshots[round] = its variates."""
    learn = DriftCorrection.after_average

    def after_average(self, pending):
        learn(self, pending)
        served = pending[0][3].round
        snapshots[served] = torch.cat([c.view(-1) for c in self._c.values()]).numpy().copy()
    DriftCorrection.after_average = after_average


def main(pattern, global_rounds, steps, collective_every=0):
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    snapshots = {}
    record_variates(snapshots)
    torch.manual_seed(0)
    dim = 64
    w_true = torch.randn(dim, 1)
    model = torch.nn.Linear(dim, 1)
    opt = hvd.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9),
        named_parameters=model.named_parameters(), global_rounds=global_rounds)
    gen = torch.Generator().manual_seed(100 + rank)
    rng = random.Random(rank)
    own_steps = steps // 2 if pattern == "persistent" and rank == 0 else steps
    meetings = 0
    for step in range(own_steps):
        time.sleep(delay(pattern, rank, size, rng))
        x = torch.randn(32, dim, generator=gen)
        y = x @ w_true + 0.5 * torch.randn(32, 1, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        # Every rank meets here the same number of times, at its own pace.
        if collective_every and (step + 1) % (collective_every * own_steps // steps) == 0:
            horovod.allreduce(torch.zeros(1), name=f"epoch.{meetings}")
            meetings += 1
    opt.join()
    gathered = MPI.COMM_WORLD.allgather(snapshots)
    if rank == 0:
        common = sorted(set.intersection(*(set(s) for s in gathered)))
        worst = max(np.abs(np.mean([s[r] for s in gathered], 0)).max() for r in common)
        last = [s[common[-1]] for s in gathered]
        spread = np.mean([np.abs(c - np.mean(last, 0)).max() for c in last])
        print(f"{pattern} {global_rounds} {steps} steps, collective every "
              f"{collective_every or '-'}: {len(common)} rounds collected by all; "
              f"max|mean c| {worst:.3g}  mean max|c_i - mean c| {spread:.3g}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]),
         int(sys.argv[4]) if len(sys.argv) > 4 else 0)
