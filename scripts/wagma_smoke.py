"""The short WAGMA job that the second-environment checks run (make test-pip-env,
make test-newest-torch's launches, make test-ray): an MLP on rank-seeded data, with
Horovod's own allreduce at steps 10 and 20, ``join()``, ``sync()``, and every rank's
flat model gathered at the end. ``train()`` returns what the checks compare; it is
called by the launchers' ranks (``python scripts/wagma_smoke.py``) and, under Ray, by
RayExecutor's workers (scripts/ray_check.py).

knobs "exact" (sync_period=1, wait_avoiding=False: every round a blocking global
average) makes the result depend on the data alone, so two launchers' runs can be
compared number for number; "default" is what a user gets.

Usage: mpirun -np 4 python scripts/wagma_smoke.py [--prefix DIR] [--knobs exact|default]
       [--json FILE]   (or horovodrun --gloo)
"""
import argparse
import json

KNOBS = {"exact": dict(sync_period=1, wait_avoiding=False), "default": {}}


def train(knobs="default", prefix=None, steps=30):
    import torch

    import horovod_wagma.torch as hvd
    from horovod_wagma.torch import DistributedWagmaOptimizer

    if prefix is not None:
        assert hvd.__file__.startswith(prefix), f"imported {hvd.__file__}, not from {prefix}"
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 1))
    opt = DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
        named_parameters=model.named_parameters(), **KNOBS[knobs])
    g = torch.Generator().manual_seed(rank)
    losses, metrics = [], []
    for step in range(steps):
        x = torch.randn(16, 8, generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 10 == 9:  # Horovod's own collective mid-run, at the same step everywhere
            metrics.append(hvd.allreduce(torch.tensor([float(rank + step)]),
                                         name=f"metric{step}").item())
    opt.join()
    opt.sync()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    everyone = hvd.allgather(flat.unsqueeze(0), name="final")
    stats = hvd.stats(opt.wagma_status().stream())
    return dict(rank=rank, size=size, module=hvd.__file__, losses=losses, metrics=metrics,
                rounds=stats["rounds"], errors=stats["errors"],
                one_model=all(torch.equal(everyone[0], row) for row in everyone),
                model=flat.tolist())


def check(result, steps=30):
    """What every rank's result must show, whichever launcher started it."""
    size = result["size"]
    mean_rank = (size - 1) / 2
    assert result["one_model"], "models differ after sync()"
    assert result["rounds"] >= 1 and result["errors"] == 0, result
    expected = [mean_rank + step for step in range(9, steps, 10)]
    assert result["metrics"] == expected, (result["metrics"], expected)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix")
    parser.add_argument("--knobs", default="default", choices=sorted(KNOBS))
    parser.add_argument("--json")
    args = parser.parse_args()
    result = train(args.knobs, args.prefix)
    check(result)
    if result["rank"] == 0:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f)
        print(f"wagma smoke: {result['size']} ranks, {result['rounds']} rounds, one model "
              f"after sync(), horovod_wagma from {result['module']}")


if __name__ == "__main__":
    main()
