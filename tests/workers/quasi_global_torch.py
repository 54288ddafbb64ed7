"""Quasi-global momentum with torch.optim.SGD; the scenarios named on the command line
run in one launch (common.run_scenarios):

- "exact": a tiny linear model y = X W^T + b + s, rank-specific initial values and
  data, three parameter groups (dampening; nesterov with weight decay; lr = 0),
  blocking group rounds (deterministic). Emits the inputs, the groups of the schedule
  and every step's parameters and momentum buffers, for the test's numpy reference.
- "bad": the optimizers that must be refused.
"""
import sys

import numpy as np
import torch

from common import error, run_scenarios

import horovod_wagma.torch as wagma

wagma.init()
rank, size = wagma.rank(), wagma.size()


def exact():
    out = {}
    S, TAU, STEPS = 2, 3, 8
    rng = np.random.default_rng(100 + rank)
    W = torch.nn.Parameter(torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float32))
    b = torch.nn.Parameter(torch.tensor(rng.standard_normal(2), dtype=torch.float32))
    s = torch.nn.Parameter(torch.tensor(rng.standard_normal(2), dtype=torch.float32))
    groups = [dict(params=[W], lr=0.05, momentum=0.9, dampening=0.1),
              dict(params=[b], lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.01),
              dict(params=[s], lr=0.0, momentum=0.9)]
    out["groups"] = [{k: v for k, v in g.items() if k != "params"} for g in groups]
    opt = wagma.DistributedWagmaOptimizer(
        torch.optim.SGD(groups, lr=0.05), group_size=S, sync_period=TAU,
        wait_avoiding=False, average_optimizer_state="quasi_global")
    params = [W, b, s]
    out["x0"] = [p.detach().double().tolist() for p in params]
    out["phases"] = wagma.groups(size, S)
    out["S"], out["tau"] = S, TAU
    data, xs, ms = [], [], []
    for step in range(STEPS):
        X = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32)
        Y = torch.tensor(rng.standard_normal((4, 2)), dtype=torch.float32)
        data.append((X.double().tolist(), Y.double().tolist()))
        opt.zero_grad()
        ((X @ W.T + b + s - Y) ** 2).mean().backward()
        opt.step()
        xs.append([p.detach().double().tolist() for p in params])
        ms.append([opt.state[p]["momentum_buffer"].double().tolist() for p in params])
    out["data"], out["x"], out["m"] = data, xs, ms
    return out


def bad():
    out = {}
    model = torch.nn.Linear(3, 2)
    qgm = dict(average_optimizer_state="quasi_global")
    out["adam"] = error(lambda: wagma.DistributedWagmaOptimizer(
        torch.optim.Adam(model.parameters()), **qgm))
    out["no_momentum"] = error(lambda: wagma.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), **qgm))
    out["one_group_without"] = error(lambda: wagma.DistributedWagmaOptimizer(
        torch.optim.SGD([dict(params=[model.weight], momentum=0.9),
                         dict(params=[model.bias])], lr=0.1), **qgm))
    out["bogus"] = error(lambda: wagma.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), average_optimizer_state="bogus"))
    # Accepted: SGD with momentum in every group; it trains and sends no state.
    before = wagma.stats()
    opt = wagma.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), sync_period=2, **qgm)

    def train():
        for step in range(3):
            opt.zero_grad()
            model(torch.full((4, 3), float(rank + step))).sum().backward()
            opt.step()
        # A lagging rank may be served a later round than its peers' last; without
        # join() a peer that exits first fails it (seen once under Gloo: "rank 1 left
        # without join()").
        opt.join()
    out["ok"] = error(train)
    out["has_momentum"] = all("momentum_buffer" in st for st in opt.state.values())
    out["streams"] = sorted(k for k in wagma.stats() if k not in before)
    return out


run_scenarios({"exact": exact, "bad": bad}, sys.argv[1:])
