"""A persistently slow rank and equal step counts, then sync(): the default
(wait-avoiding global rounds) optimizer must not hang at the end of training.

The slow rank skips the rounds its engine served while it computed, so after its
last step its round number is far ahead of the fast ranks' last rounds. Its final
steps activate rounds whose passive contributions from the fast ranks are older
than max_staleness, while those ranks' apps already wait in sync(). The fast
engines must serve them (their apps wait in the engine, so nothing fresher can
come), else the job hangs (the CI failure of session 5).

Usage: equal_steps_sync.py SLOW_FACTOR STEPS STEP_S
Emits each rank's parameter checksum after sync() and the model stream's stats."""
import sys
import time

import torch
import torch.nn as nn

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer

factor, steps, step_s = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
hvd.init()
rank, size = hvd.rank(), hvd.size()
torch.manual_seed(0)
model = nn.Linear(16, 4)
opt = DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                named_parameters=model.named_parameters(),
                                group_size=2, sync_period=5)
g = torch.Generator().manual_seed(rank)
for _ in range(steps):
    time.sleep(step_s * (factor if rank == size - 1 else 1.0))
    opt.zero_grad()
    model(torch.randn(8, 16, generator=g)).pow(2).mean().backward()
    opt.step()
t0 = time.monotonic()
opt.sync()
sync_s = time.monotonic() - t0
flat = torch.cat([p.detach().flatten() for p in model.parameters()])
emit(rank, params=flat.tolist(), sync_s=sync_s,
     stream=hvd.stats(opt.wagma_status().stream()))
