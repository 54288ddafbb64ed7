"""Synthetic throughput benchmark, shaped like Horovod's pytorch_synthetic_benchmark.py.

    mpirun -np 4 --oversubscribe python examples/pytorch_synthetic_benchmark.py \\
        --optimizer wagma --straggle 0.02

A small conv net (or MLP) defined below trains on random CIFAR-sized images; the
script times ``--num-iters`` iterations of ``--num-batches-per-iter`` steps each,
after ``--num-warmup-batches`` untimed steps, and rank 0 prints img/sec per
iteration and the mean +- 1.96 std, like Horovod's benchmark does.

``--optimizer wagma`` changes exactly one line: ``hvd.DistributedOptimizer`` ->
``DistributedWagmaOptimizer``. ``--straggle S`` makes one rank per step (drawn from a
seed every rank shares) sleep S seconds before its forward pass.

The "Total" line: Horovod's script multiplies rank 0's rate by the number of ranks.
With WAGMA the ranks do not run in lockstep, so this script gathers every rank's
own measurements and reports their sum (it prints rank 0 x size as well).
"""
import argparse
import json
import random
import time
import timeit

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import horovod.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer


class ConvNet(nn.Module):
    """Two strided conv layers and a linear classifier for 3x32x32 inputs (~12k
    parameters, a few ms per step on one CPU thread)."""

    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)    # -> 8x16x16
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)   # -> 16x8x8
        self.fc = nn.Linear(16 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.fc(torch.flatten(x, 1))


class MLP(nn.Module):
    """Three linear layers on the flattened 3x32x32 input (~0.4M parameters)."""

    def __init__(self, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 128), nn.ReLU(),
                                 nn.Linear(128, 128), nn.ReLU(),
                                 nn.Linear(128, num_classes))

    def forward(self, x):
        return self.net(x)


MODELS = {"cnn": ConvNet, "mlp": MLP}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--optimizer", choices=["horovod", "wagma"], default="wagma")
    p.add_argument("--model", choices=sorted(MODELS), default="cnn",
                   help="model to benchmark (default cnn)")
    p.add_argument("--batch-size", type=int, default=32, help="input batch size per rank")
    p.add_argument("--num-classes", type=int, default=10)
    p.add_argument("--num-warmup-batches", type=int, default=10,
                   help="number of untimed warm-up batches")
    p.add_argument("--num-batches-per-iter", type=int, default=10,
                   help="number of batches per benchmark iteration")
    p.add_argument("--num-iters", type=int, default=10,
                   help="number of benchmark iterations")
    p.add_argument("--fp16-allreduce", action="store_true",
                   help="use fp16 compression for the (gradient or model) averaging")
    p.add_argument("--straggle", type=float, default=0.0,
                   help="seconds one random rank sleeps before each step")
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size S (default: the optimizer's, "
                        "min(P, max(8, smallest power of 2 >= sqrt P)))")
    p.add_argument("--sync-period", type=int, default=10,
                   help="WAGMA: every this many steps the model average is global")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", default=None, help="rank 0 writes a summary here")
    return p.parse_args()


def main():
    args = parse_args()
    hvd.init()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # several ranks share few cores

    model = MODELS[args.model](args.num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size())
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    if args.optimizer == "horovod":
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                             compression=compression)
    else:
        optimizer = DistributedWagmaOptimizer(optimizer, named_parameters=model.named_parameters(),
                                              compression=compression,
                                              group_size=args.group_size,
                                              sync_period=args.sync_period)

    data = torch.randn(args.batch_size, 3, 32, 32)
    target = torch.randint(0, args.num_classes, (args.batch_size,))
    straggler_rng = random.Random(args.seed)  # same draws on every rank

    def benchmark_step():
        if args.straggle and straggler_rng.randrange(hvd.size()) == hvd.rank():
            time.sleep(args.straggle)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()

    def log(s):
        if hvd.rank() == 0:
            print(s, flush=True)

    device = "CPU"
    log(f"Model: {args.model}")
    log(f"Optimizer: {args.optimizer}"
        + (f" (group size {args.group_size or 'default'}, sync period {args.sync_period})"
           if args.optimizer == "wagma" else ""))
    log(f"Batch size: {args.batch_size}")
    log(f"Straggler: {args.straggle * 1000:.0f} ms on one random rank per step"
        if args.straggle else "Straggler: none")
    log(f"Number of {device}s: {hvd.size()}")

    log("Running warmup...")
    timeit.timeit(benchmark_step, number=args.num_warmup_batches)

    log("Running benchmark...")
    img_secs = []
    for it in range(args.num_iters):
        t = timeit.timeit(benchmark_step, number=args.num_batches_per_iter)
        img_sec = args.batch_size * args.num_batches_per_iter / t
        log(f"Iter #{it}: {img_sec:.1f} img/sec per {device}")
        img_secs.append(img_sec)

    if args.optimizer == "wagma":
        optimizer.sync()  # untimed: one model everywhere again before exiting

    img_sec_mean = float(np.mean(img_secs))
    img_sec_conf = float(1.96 * np.std(img_secs))
    # Every rank's own per-iteration rates: the ranks need not run in lockstep.
    all_rates = hvd.allgather(torch.tensor([img_secs], dtype=torch.float64),
                              name="bench_img_secs").numpy()
    per_rank_mean = all_rates.mean(axis=1)
    total_per_iter = all_rates.sum(axis=0)  # iteration i summed over ranks
    total_mean = float(total_per_iter.mean())
    total_conf = float(1.96 * total_per_iter.std())

    log(f"Img/sec per {device}: {img_sec_mean:.1f} +-{img_sec_conf:.1f}")
    log(f"Total img/sec on {hvd.size()} {device}(s): {total_mean:.1f} +-{total_conf:.1f}"
        f"  (rank 0 x {hvd.size()}: {hvd.size() * img_sec_mean:.1f}"
        f" +-{hvd.size() * img_sec_conf:.1f})")
    log("Per-rank img/sec: " + ", ".join(f"{r:.1f}" for r in per_rank_mean))
    steps_per_s = total_mean / hvd.size() / args.batch_size
    log(f"Steps/sec (mean over ranks): {steps_per_s:.1f}")

    if hvd.rank() == 0 and args.json:
        summary = dict(optimizer=args.optimizer, model=args.model, ranks=hvd.size(),
                       batch_size=args.batch_size, straggle=args.straggle,
                       group_size=args.group_size, sync_period=args.sync_period,
                       img_sec_per_rank0=img_sec_mean, img_sec_per_rank0_conf=img_sec_conf,
                       img_sec_total=total_mean, img_sec_total_conf=total_conf,
                       img_sec_per_rank=per_rank_mean.tolist(), steps_per_s=steps_per_s)
        with open(args.json, "w") as f:
            json.dump(summary, f)


if __name__ == "__main__":
    main()
