"""Horovod's PyTorch MNIST example (examples/pytorch/pytorch_mnist.py in Horovod), on
generated MNIST-shaped data, with the optimizer line swapped for WAGMA.

    mpirun -np 4 --oversubscribe python examples/pytorch_mnist.py
    horovodrun -np 4 python examples/pytorch_mnist.py --optimizer horovod

Everything else is Horovod's script: the same network, DistributedSampler shards,
broadcasts, lr scaled by the number of ranks, and a test after every epoch whose loss
and accuracy are averaged over the ranks with ``hvd.allreduce`` (``metric_average``).
That allreduce runs on every rank at the same step count, which is exactly when
Horovod collectives are safe beside WAGMA's wait-avoiding rounds.

Additions for this repository: ``--optimizer horovod|wagma`` picks the optimizer line;
``--straggle S`` makes one rank per step (drawn from a seed every rank shares) sleep S
seconds, standing in for uneven hardware; ``--json`` writes a summary on rank 0.

The data: 28x28 grey images of 10 classes, each class a fixed random pattern of
blobs, shifted and noised per sample, so no download is needed and it trains in seconds on a CPU.
"""
import argparse
import json
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data.distributed

import horovod.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument('--batch-size', type=int, default=64)
parser.add_argument('--test-batch-size', type=int, default=1000)
parser.add_argument('--epochs', type=int, default=3)
parser.add_argument('--lr', type=float, default=0.01)
parser.add_argument('--momentum', type=float, default=0.5)
parser.add_argument('--seed', type=int, default=42)
parser.add_argument('--log-interval', type=int, default=10)
parser.add_argument('--fp16-allreduce', action='store_true', default=False)
parser.add_argument('--gradient-predivide-factor', type=float, default=1.0)
parser.add_argument('--train-size', type=int, default=8192)
parser.add_argument('--optimizer', choices=['horovod', 'wagma'], default='wagma')
parser.add_argument('--straggle', type=float, default=0.0,
                    help='seconds one random rank sleeps before each step')
parser.add_argument('--group-size', type=int, default=None)
parser.add_argument('--sync-period', type=int, default=10)
parser.add_argument('--no-progress', action='store_true', help='no per-batch log lines')
parser.add_argument('--json', default=None, help='rank 0 writes a summary here')


def generated_mnist(n, seed):
    """MNIST-shaped (1x28x28, normalised like MNIST, labels 0-9): per class a fixed
    pattern of random blobs, shifted by up to two pixels and noised per sample."""
    g = torch.Generator().manual_seed(1234)  # the same classes everywhere
    templates = (torch.rand(10, 1, 28, 28, generator=g) > 0.9).float()
    templates = F.avg_pool2d(templates, 5, stride=1, padding=2)
    templates = templates / templates.amax(dim=(1, 2, 3), keepdim=True)
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 10, (n,), generator=g)
    shifts = torch.randint(-2, 3, (n, 2), generator=g)
    x = torch.stack([torch.roll(templates[c], (int(dx), int(dy)), (1, 2))
                     for c, (dx, dy) in zip(y.tolist(), shifts)])
    x = (x + 0.4 * torch.randn(x.shape, generator=g)).clamp(0, 1)
    return torch.utils.data.TensorDataset((x - 0.1307) / 0.3081, y)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(epoch):
    model.train()
    train_sampler.set_epoch(epoch)
    for batch_idx, (data, target) in enumerate(train_loader):
        if args.straggle and straggler_rng.randrange(hvd.size()) == hvd.rank():
            time.sleep(args.straggle)  # this repository's addition: a straggler
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0 and hvd.rank() == 0 and not args.no_progress:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_sampler),
                100. * batch_idx / len(train_loader), loss.item()))
    return len(train_loader)


def metric_average(val, name):
    tensor = torch.tensor(val)
    avg_tensor = hvd.allreduce(tensor, name=name)
    return avg_tensor.item()


def test():
    model.eval()
    test_loss = 0.
    test_accuracy = 0.
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.data.max(1, keepdim=True)[1]
            test_accuracy += pred.eq(target.data.view_as(pred)).float().sum().item()
    test_loss /= len(test_sampler)
    test_accuracy /= len(test_sampler)
    test_loss = metric_average(test_loss, 'avg_loss')
    test_accuracy = metric_average(test_accuracy, 'avg_accuracy')
    if hvd.rank() == 0:
        print('\nTest set: Average loss: {:.4f}, Accuracy: {:.2f}%\n'.format(
            test_loss, 100. * test_accuracy))
    return test_accuracy


if __name__ == '__main__':
    args = parser.parse_args()
    hvd.init()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    train_dataset = generated_mnist(args.train_size, seed=args.seed)
    train_sampler = torch.utils.data.distributed.DistributedSampler(
        train_dataset, num_replicas=hvd.size(), rank=hvd.rank())
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, sampler=train_sampler)
    test_dataset = generated_mnist(2000, seed=args.seed + 1)
    test_sampler = torch.utils.data.distributed.DistributedSampler(
        test_dataset, num_replicas=hvd.size(), rank=hvd.rank())
    test_loader = torch.utils.data.DataLoader(
        test_dataset, batch_size=args.test_batch_size, sampler=test_sampler)

    model = Net()
    lr_scaler = hvd.size()
    optimizer = optim.SGD(model.parameters(), lr=args.lr * lr_scaler, momentum=args.momentum)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    if args.optimizer == 'horovod':
        optimizer = hvd.DistributedOptimizer(
            optimizer, named_parameters=model.named_parameters(), compression=compression,
            op=hvd.Average, gradient_predivide_factor=args.gradient_predivide_factor)
    else:  # the swapped line
        optimizer = DistributedWagmaOptimizer(
            optimizer, named_parameters=model.named_parameters(), compression=compression,
            op=hvd.Average, gradient_predivide_factor=args.gradient_predivide_factor,
            group_size=args.group_size, sync_period=args.sync_period)

    straggler_rng = random.Random(args.seed)  # the same draws on every rank
    steps, t0, accuracy = 0, time.monotonic(), 0.0
    for epoch in range(1, args.epochs + 1):
        steps += train(epoch)
        accuracy = test()
    elapsed = time.monotonic() - t0
    summary = dict(optimizer=args.optimizer, ranks=hvd.size(), steps=steps,
                   steps_per_s=steps / elapsed, seconds=elapsed, accuracy=accuracy)
    if hvd.rank() == 0:
        print(json.dumps(summary))
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(summary, f)
