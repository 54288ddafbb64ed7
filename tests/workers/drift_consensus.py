"""The optimizer's defaults on a non-IID quadratic, with the last rank persistently
slower and a Horovod allreduce every K steps: between collectives the fast ranks run
ahead and then wait in the allreduce while the slow rank runs its remaining steps.

Rank r's loss is 0.5 * ||w - t_r||^2 with t_r = P * e_r (its own coordinate), so the
average loss is minimised by w = 1 everywhere and a rank that trains alone heads for
P in its own coordinate. Each rank reports its final w (before a final sync), the
largest |w_i| it held at any step (a rank that runs off shows it), and the model
stream's stats.

Usage: drift_consensus.py STEPS:K[:SLOW_FACTOR (4)] [...]: each configuration in turn,
in one launch (common.run_scenarios), with a fresh model and optimizer.
"""
import sys
import time

import torch
import horovod.torch as hvd_plain

from common import run_scenarios

import horovod_wagma.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer

BASE_S = 0.002
hvd.init()
rank, size = hvd.rank(), hvd.size()
torch.set_num_threads(1)


def run(config):
    steps, every, *slow = config.split(":")
    steps, every = int(steps), int(every)
    slow_factor = float(slow[0]) if slow else 4.0
    w = torch.nn.Parameter(torch.zeros(size))
    target = torch.zeros(size)
    target[rank] = size
    opt = DistributedWagmaOptimizer(torch.optim.SGD([w], lr=0.05, momentum=0.9),
                                    named_parameters=[("w", w)])
    peak = 0.0
    for step in range(steps):
        opt.zero_grad()
        (0.5 * (w - target).pow(2).sum()).backward()
        opt.step()
        peak = max(peak, float(w.detach().abs().max()))
        time.sleep(BASE_S * (slow_factor if rank == size - 1 else 1.0))
        if (step + 1) % every == 0:
            hvd_plain.allreduce(torch.zeros(1), name=f"metric.{config.replace(':', '_')}.{step}")
    own = w.detach().tolist()
    stats = hvd.stats(opt.wagma_status().stream())
    opt.sync()
    return dict(w=own, peak=peak, synced=w.detach().tolist(), stream=stats)


run_scenarios({c: (lambda c=c: run(c)) for c in sys.argv[1:]}, sys.argv[1:])
