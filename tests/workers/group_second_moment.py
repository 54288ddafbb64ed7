"""Adam's second moment from the group's mean gradient (second_moment="group"),
PyTorch.

Usage: group_second_moment.py MODE...   (MODE: group | local | default | refused), in
one launch, one optimizer each
  group/local/default: P ranks, one Linear(6, 3) alike on every rank, each rank its own
      data; Adam (lr 0.05); DistributedWagmaOptimizer with groups of the whole world and
      rounds that wait for every member (wait_avoiding=False), so every round is the
      exact mean; 6 steps. Before each step a rank records v (exp_avg_sq) and its own
      gradient; Horovod's allgather gives every rank's gradient, hence their mean.
      After the step it records v again. Emits, per step and parameter, the largest
      difference between v after the step and the two candidates:
          beta2 v + (1 - beta2) g_mean^2   ("group")   and
          beta2 v + (1 - beta2) g_own^2    ("local"),
      and the resolved knob. "local" runs without drift correction (its variates would
      move each rank's gradient; their sum, hence the mean gradient, stays).
  refused: the knob's errors (SGD with "group"; an unknown value).
"""
import sys

import horovod.torch as hvd_horovod
import torch

import horovod_wagma.torch as hvd
from common import capture, emit

hvd.init()
rank, size = hvd.rank(), hvd.size()
BETA2 = 0.99


def model_and_data():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 3)
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(6, 8, 6, generator=g)
    y = torch.randint(0, 3, (6, 8), generator=g)
    return model, x, y


def train(mode):
    model, x, y = model_and_data()
    kwargs = {"default": {}, "local": {"second_moment": "local", "drift_correction": 0},
              "group": {"second_moment": "group"}}[mode]
    opt = hvd.DistributedWagmaOptimizer(
        torch.optim.Adam(model.parameters(), lr=0.05, betas=(0.9, BETA2)),
        named_parameters=model.named_parameters(), group_size=size, sync_period=4,
        wait_avoiding=False, **kwargs)
    diffs = []
    for step in range(6):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[step]), y[step]).backward()
        before = {p: opt.state.get(p, {}).get("exp_avg_sq", torch.zeros_like(p)).clone()
                  for p in model.parameters()}
        own = {p: p.grad.clone() for p in model.parameters()}
        mean = {p: hvd_horovod.allgather(p.grad.unsqueeze(0), name=f"{mode}.g{step}.{k}").mean(0)
                for k, p in enumerate(model.parameters())}
        opt.step()
        row = {"group": 0.0, "local": 0.0}
        for p in model.parameters():
            v = opt.state[p]["exp_avg_sq"]
            for key, g in (("group", mean[p]), ("local", own[p])):
                want = BETA2 * before[p] + (1 - BETA2) * g * g
                row[key] = max(row[key], float((v - want).abs().max() / want.abs().max()))
        diffs.append(row)
    v_all = torch.cat([opt.state[p]["exp_avg_sq"].reshape(-1) for p in model.parameters()])
    return dict(diffs=diffs, knob=opt._core.knobs.second_moment, v=v_all.tolist())


def refused():
    out = {}
    model, _, _ = model_and_data()
    capture(out, "sgd", lambda: hvd.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        named_parameters=model.named_parameters(), second_moment="group"))
    capture(out, "unknown", lambda: hvd.DistributedWagmaOptimizer(
        torch.optim.Adam(model.parameters()), named_parameters=model.named_parameters(),
        second_moment="global"))
    sgd = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                        named_parameters=model.named_parameters())
    out["sgd_default"] = sgd._core.knobs.second_moment
    return out


emit(rank, **{mode: refused() if mode == "refused" else train(mode) for mode in sys.argv[1:]})
