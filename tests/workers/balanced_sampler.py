"""BalancedDistributedSampler on real ranks, in the loop users write: set_epoch, a
DataLoader, an optimizer step per batch, an allreduce of a metric at every epoch end.
Each rank takes a known time per step, its own step included (its injected speed). Usage: balanced_sampler.py
SCENARIO... (common.run_scenarios)."""
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from common import error, run_scenarios

import horovod_wagma.torch as hvd

hvd.init()
rank, size = hvd.rank(), hvd.size()
BATCH = 8


def torch_indices(n, epoch, drop_last, shuffle=True):
    """Every rank's indices under torch's DistributedSampler, together, sorted."""
    out = []
    for r in range(size):
        s = DistributedSampler(range(n), num_replicas=size, rank=r, seed=7,
                               drop_last=drop_last, shuffle=shuffle)
        s.set_epoch(epoch)
        out += list(s)
    return sorted(out)


def epoch_loop(sampler, opt, model, loader, sleep_for, epochs):
    """Runs the epochs; returns per epoch this rank's indices, len(sampler), the shares
    and the gathered throughputs."""
    record = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        seen = []
        next_step = time.perf_counter() + sleep_for(epoch)
        for (x,) in loader:
            # This rank's device: one step per injected cycle, its optimizer step
            # included (WAGMA's step is part of the cycle the sampler measures).
            time.sleep(max(0.0, next_step - time.perf_counter()))
            next_step = time.perf_counter() + sleep_for(epoch)
            seen += x.long().tolist()
            opt.zero_grad()
            model(x.float()[:, None]).pow(2).mean().backward()
            opt.step()
        # The epoch-end metric, as users average it: the ranks meet here.
        hvd.allreduce(torch.tensor(float(len(seen))), name="epoch_metric")
        record.append(dict(indices=seen, length=len(sampler), shares=sampler.shares,
                           throughputs=sampler.throughputs))
    return record


def speeds(epoch):
    """Injected seconds per step: rank 0 2x slower for epochs 0-1, rank 1 from epoch 2."""
    slow = 0 if epoch < 2 else 1
    return 0.080 if rank == slow else 0.040


def wagma():
    """DistributedWagmaOptimizer's defaults, 4 epochs of 803 samples, then opt.join()
    and Horovod's hvd.join()."""
    n = 803
    data = TensorDataset(torch.arange(n))
    sampler = hvd.BalancedDistributedSampler(data, seed=7)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler)
    torch.manual_seed(rank)
    model = torch.nn.Linear(1, 1)
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=1e-4,
                                                        momentum=0.9),
                                        named_parameters=model.named_parameters())
    record = epoch_loop(sampler, opt, model, loader, speeds, 4)
    out = dict(epochs=record, torch=[torch_indices(n, e, False) for e in range(4)],
               total=sampler.total_size, steps=opt.wagma_status().steps)
    out["opt_join"] = opt.join()
    out["hvd_join"] = hvd.join()
    return out


def drop_last():
    """drop_last=True, shuffle=False: torch's truncation, shares cut in order."""
    n = 203
    data = TensorDataset(torch.arange(n))
    sampler = hvd.BalancedDistributedSampler(data, seed=7, drop_last=True, shuffle=False)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler)
    model = torch.nn.Linear(1, 1)
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=1e-4),
                                        named_parameters=model.named_parameters())
    record = epoch_loop(sampler, opt, model, loader, speeds, 2)
    opt.join()
    return dict(epochs=record, total=sampler.total_size,
                torch=[torch_indices(n, 0, True, shuffle=False)] * 2)


def horovod_unequal():
    """Horovod's own DistributedOptimizer cannot take unequal steps: the second
    set_epoch raises on every rank instead of leaving the ranks in an allreduce."""
    data = TensorDataset(torch.arange(203))
    sampler = hvd.BalancedDistributedSampler(data, seed=7)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler)
    model = torch.nn.Linear(1, 1)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1e-4),
                                   named_parameters=model.named_parameters())
    first = error(lambda: epoch_loop(sampler, opt, model, loader, speeds, 1))
    second = error(lambda: sampler.set_epoch(1))
    return dict(first=first, second=second)


def weighted_regression(n=803):
    """BalancedBatchSampler over n indices (seed 7), its DataLoader, a float64 linear
    model (the same on every rank) and the mean squared error of a batch of indices
    against sin(7 x), x = index / n: the LB-BSP scenarios' shared setup."""
    data = TensorDataset(torch.arange(n))
    sampler = hvd.BalancedBatchSampler(data, BATCH, seed=7)
    loader = DataLoader(data, batch_sampler=sampler)
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1, dtype=torch.float64)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)

    def loss_of(idx):
        x = idx.double()[:, None] / n
        return (model(torch.cat([x, x.pow(2)], 1))[:, 0] - torch.sin(7 * x[:, 0])).pow(2).mean()
    return sampler, loader, model, loss_of


def lbbsp():
    """Horovod's own DistributedOptimizer with BalancedBatchSampler (LB-BSP): equal
    steps on every rank, batch sizes following the injected speeds, and with the loss
    scaled by loss_weight the allreduced gradient is the mean gradient over the whole
    global batch (checked at every epoch's first step against the gradient of the
    union of the ranks' batches, computed here)."""
    sampler, loader, model, loss_of = weighted_regression()
    n = len(sampler.dataset)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1e-3),
                                   named_parameters=model.named_parameters())
    record = []
    for epoch in range(4):
        sampler.set_epoch(epoch)
        seen, sizes, errors = [], [], []
        for step, (idx,) in enumerate(loader):
            time.sleep(speeds(epoch) * len(idx) / BATCH)  # compute grows with the batch
            seen += idx.tolist()
            sizes.append(len(idx))
            opt.zero_grad()
            (loss_of(idx) * sampler.loss_weight).backward()
            opt.synchronize()
            if step == 0:
                union = torch.cat(hvd.allgather_object(idx))
                grads = torch.autograd.grad(loss_of(union), list(model.parameters()))
                errors.append(max(float((p.grad - g).abs().max())
                                  for p, g in zip(model.parameters(), grads)))
            with opt.skip_synchronize():
                opt.step()
        hvd.allreduce(torch.tensor(float(len(seen))), name="lbbsp_metric")
        record.append(dict(indices=seen, steps=len(sizes), sizes=sorted(set(sizes)),
                           batch_sizes=sampler.batch_sizes, weight=sampler.loss_weight,
                           grad_error=max(errors)))
    return dict(epochs=record, torch=[torch_indices(n, e, False) for e in range(4)],
                global_batch=sampler.global_batch, steps=sampler.steps)


def wagma_lbbsp():
    """WAGMA over LB-BSP batches (README, "Uneven hardware"): BalancedBatchSampler, the
    loss scaled by loss_weight, DistributedWagmaOptimizer around SGD. Epochs 0-1 with
    the optimizer's defaults (wait-avoiding: a fast rank's step is its own work, so the
    sampler measures the injected speeds); epoch 2, from one model (a broadcast), with
    every rank on time (group rounds that wait, one group of all ranks, blocking global
    rounds): each step's average of the ranks' models must be LB-BSP's step, the model
    before it minus lr times the mean gradient over the union of the ranks' batches
    (float64, every step). Returns per epoch the step count, the batch sizes and, in
    epoch 2, the largest deviation from that step."""
    sampler, loader, model, loss_of = weighted_regression()
    lr = 0.05
    record = []

    def epoch(e, opt, check):
        sampler.set_epoch(e)
        sizes, errors = [], []
        for idx, in loader:
            time.sleep(speeds(e) * len(idx) / BATCH)
            sizes.append(len(idx))
            if check:
                union = torch.cat(hvd.allgather_object(idx))
                before = [p.detach().clone() for p in model.parameters()]
                grads = torch.autograd.grad(loss_of(union), list(model.parameters()))
            opt.zero_grad()
            (loss_of(idx) * sampler.loss_weight).backward()
            opt.step()
            if check:
                errors.append(max(float((p.detach() - (b - lr * g)).abs().max())
                                  for p, b, g in zip(model.parameters(), before, grads)))
        hvd.allreduce(torch.tensor(0.0), name="wagma_lbbsp_metric")
        record.append(dict(steps=len(sizes), sizes=sorted(set(sizes)),
                           batch_sizes=sampler.batch_sizes,
                           max_error=max(errors) if errors else None))
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=lr),
                                        named_parameters=model.named_parameters())
    for e in (0, 1):
        epoch(e, opt, check=False)
    opt.join()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    on_time = hvd.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=lr), named_parameters=model.named_parameters(),
        group_size=size, wait_avoiding=False, global_rounds="blocking", drift_correction=0.0)
    epoch(2, on_time, check=True)
    on_time.join()
    return dict(epochs=record)


def epoch_mismatch():
    """Ranks that call set_epoch at different epoch counts: a clear error everywhere."""
    sampler = hvd.BalancedDistributedSampler(TensorDataset(torch.arange(40)))
    return dict(error=error(lambda: sampler.set_epoch(rank % 2)))


run_scenarios({name: globals()[name] for name in sys.argv[1:]}, sys.argv[1:])
