"""The 4-rank check make test-pip-env runs in the second environment (PyTorch and
Horovod only, horovod_wagma installed from its wheel): it must import the installed
package, not the source tree, train with WAGMA through a Horovod collective mid-run,
and end with one model everywhere.

Usage: mpirun -np 4 python scripts/pip_env_check.py ENV_PREFIX   (or horovodrun --gloo)
"""
import sys

import torch

import horovod_wagma.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer

prefix = sys.argv[1]
assert hvd.__file__.startswith(prefix), f"imported {hvd.__file__}, not from {prefix}"
hvd.init()
rank, size = hvd.rank(), hvd.size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                                named_parameters=model.named_parameters())
g = torch.Generator().manual_seed(rank)
for step in range(30):
    x = torch.randn(16, 8, generator=g)
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).backward()
    opt.step()
    if step % 10 == 9:  # Horovod's own collective mid-run, at the same step everywhere
        hvd.allreduce(torch.tensor([float(step)]), name=f"metric{step}")
opt.join()
opt.sync()
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
everyone = hvd.allgather(flat.unsqueeze(0), name="final")
assert all(torch.equal(everyone[0], row) for row in everyone), "models differ after sync()"
stats = hvd.stats(opt.wagma_status().stream())
assert stats["rounds"] >= 1 and stats["errors"] == 0, stats
if rank == 0:
    print(f"pip-env check: {size} ranks, {stats['rounds']} rounds, one model after sync(), "
          f"horovod_wagma from {hvd.__file__}")
