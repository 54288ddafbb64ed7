"""Uneven data: rank r runs 3 + 2r rounds, then calls join(). Its engine must keep
serving every round with its final value until all have joined, with no hang and no
error. Without wait-avoidance the results are deterministic, so every rank reports
its inputs and outputs and the test replays the exact expected values.

Usage: uneven.py SCENARIO... with scenarios "op" and "optimizer" (own streams each)."""
import sys

import numpy as np
import torch

from common import run_scenarios

import horovod_wagma.torch as hvd

hvd.init(group_size=2, sync_period=4, wait_avoiding=False)
rank, size = hvd.rank(), hvd.size()


def op():
    steps = 3 + 2 * rank
    x = torch.tensor([float(rank), 10.0 * rank + 1.0], dtype=torch.float64)
    inputs, outputs = [], []
    for k in range(steps):
        x = x + (k + 1) * (rank + 1)  # a local "update", known to the test
        inputs.append(x.tolist())
        x = hvd.group_allreduce(x, name="uneven")
        outputs.append(x.tolist())
    last = hvd.join()
    return dict(steps=steps, inputs=inputs, outputs=outputs, last=last,
                stats=hvd.stats("uneven"), phases=hvd.groups(size, 2))


def optimizer():
    torch.manual_seed(rank)
    model = torch.nn.Linear(4, 1)
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.05),
                                        named_parameters=model.named_parameters(),
                                        group_size=2, sync_period=5, wait_avoiding=True,
                                        global_rounds="blocking")  # aligned steps
    gen = torch.Generator().manual_seed(100 + rank)
    batches = 20 + 7 * rank  # uneven data
    for _ in range(batches):
        xb = torch.randn(8, 4, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), xb.sum(1, keepdim=True)).backward()
        opt.step()
    last = opt.join()
    opt.sync()  # every rank again in step: a global average, identical everywhere
    flat = torch.cat([p.data.view(-1) for p in model.parameters()]).double()
    return dict(last=last, round=opt.wagma_status().steps, model=flat.tolist(),
                finite=bool(np.isfinite(flat.numpy()).all()))


run_scenarios({"op": op, "optimizer": optimizer}, sys.argv[1:])
