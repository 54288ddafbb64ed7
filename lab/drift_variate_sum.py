"""The drift variates' common part after a run (docs/benchmarks.md, "Drift
correction's default degrades long runs under a persistent straggler").

Drift correction's variates c_i should sum to zero over the ranks: their mean acts on
every rank's gradient as a false one. Blocking global rounds keep the sum at zero
exactly; this measures how far wait-avoiding ones leave it, on IID least squares
(nothing to learn, so every bit of c is error), with one rank 2x slower
("persistent") or random delays of the same mean ("random").

    mpirun -np 4 python lab/drift_variate_sum.py persistent wait_avoiding 1500

Prints, at the end, max |sum_i c_i|, max |mean_i c_i| and the ranks' mean of
max |c_i - mean c|.
"""
import random
import sys
import time

import numpy as np
import torch
from mpi4py import MPI

import horovod_wagma.torch as hvd

STEP_S = 0.004  # injected compute per step of a fast rank


def delay(pattern, rank, size, rng):
    if pattern == "persistent":
        return 2 * STEP_S if rank == 0 else STEP_S
    # One rank in `size` takes a step of (1 + size / 2) times, at random: the same
    # mean delay over the ranks as one rank 2x slower.
    return STEP_S * (1 + (rng.random() < 1 / size) * size * 0.5)


def main(pattern, global_rounds, steps):
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    torch.manual_seed(0)
    dim = 64
    w_true = torch.randn(dim, 1)
    model = torch.nn.Linear(dim, 1)
    opt = hvd.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9),
        named_parameters=model.named_parameters(), global_rounds=global_rounds)
    gen = torch.Generator().manual_seed(100 + rank)
    rng = random.Random(rank)
    for _ in range(steps):
        time.sleep(delay(pattern, rank, size, rng))
        x = torch.randn(32, dim, generator=gen)
        y = x @ w_true + 0.5 * torch.randn(32, 1, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    opt.join()
    c = torch.cat([v.view(-1) for v in opt._drift._c.values()]).numpy()
    variates = MPI.COMM_WORLD.allgather(c)
    if rank == 0:
        total = np.sum(variates, 0)
        spread = np.mean([np.abs(ci - total / size).max() for ci in variates])
        print(f"{pattern} {global_rounds} {steps} steps: max|sum c| {np.abs(total).max():.4g}"
              f"  max|mean c| {np.abs(total / size).max():.4g}"
              f"  mean max|c_i - mean c| {spread:.4g}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
