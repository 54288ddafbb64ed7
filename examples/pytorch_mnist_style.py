"""Horovod's PyTorch MNIST example, on generated data, with one line to swap.

    mpirun -np 4 --oversubscribe python examples/pytorch_mnist_style.py --optimizer wagma

The script is a plain Horovod script; ``--optimizer wagma`` changes exactly one line:
``hvd.DistributedOptimizer`` -> ``DistributedWagmaOptimizer``. ``--straggle S``
makes one rank per step (drawn from a seed every rank shares) sleep S seconds before
its forward pass, standing in for uneven hardware or inputs.

The data: 10 classes of 8x8 "images" (64 features), each class a noisy template, so
that it trains in seconds on a CPU. No downloads.
"""
import argparse
import json
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import horovod.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer


def make_dataset(n, seed, noise=1.6):
    g = torch.Generator().manual_seed(1234)  # same class templates everywhere
    templates = torch.randn(10, 64, generator=g)
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 10, (n,), generator=g)
    x = templates[y] + noise * torch.randn(n, 64, generator=g)
    return x, y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.bn = nn.BatchNorm1d(128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


def progress(epoch, done, total, width=30):
    filled = int(width * done / total)
    sys.stdout.write(f"\rEpoch {epoch} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--optimizer", choices=["horovod", "wagma"], default="wagma")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--train-size", type=int, default=8192)
    p.add_argument("--straggle", type=float, default=0.0,
                   help="seconds one random rank sleeps before each step")
    p.add_argument("--group-size", type=int, default=None)
    p.add_argument("--sync-period", type=int, default=10)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", default=None, help="rank 0 writes a summary here")
    args = p.parse_args()

    hvd.init()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    x, y = make_dataset(args.train_size, seed=args.seed)
    x_test, y_test = make_dataset(2048, seed=args.seed + 1)
    shard = torch.arange(hvd.rank(), args.train_size, hvd.size())  # like DistributedSampler
    x, y = x[shard], y[shard]

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size() ** 0.5,
                                momentum=args.momentum)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    if args.optimizer == "horovod":
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    else:
        optimizer = DistributedWagmaOptimizer(optimizer, named_parameters=model.named_parameters(),
                                              group_size=args.group_size,
                                              sync_period=args.sync_period,
                                              named_buffers=model.named_buffers())

    straggler_rng = random.Random(args.seed)  # same draws on every rank
    steps_per_epoch = len(x) // args.batch_size
    step, t0 = 0, time.monotonic()
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for b in range(steps_per_epoch):
            idx = perm[b * args.batch_size:(b + 1) * args.batch_size]
            if args.straggle and straggler_rng.randrange(hvd.size()) == hvd.rank():
                time.sleep(args.straggle)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            step += 1
            if hvd.rank() == 0 and not args.no_progress and b % 10 == 0:
                progress(epoch, b + 1, steps_per_epoch)
        if hvd.rank() == 0 and not args.no_progress:
            progress(epoch, steps_per_epoch, steps_per_epoch)
            print()
    elapsed = time.monotonic() - t0
    if args.optimizer == "wagma":
        optimizer.sync()  # one model everywhere before evaluation
    model.eval()
    with torch.no_grad():
        acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    acc = hvd.allreduce(torch.tensor(acc), name="acc").item()
    summary = dict(optimizer=args.optimizer, ranks=hvd.size(), steps=step,
                   steps_per_s=step / elapsed, seconds=elapsed, accuracy=acc)
    if hvd.rank() == 0:
        print(json.dumps(summary))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(summary, f)


if __name__ == "__main__":
    main()
