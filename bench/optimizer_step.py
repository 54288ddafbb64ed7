#!/usr/bin/env python
"""Optimizer step time of a ResNet-50-sized model: Horovod vs WAGMA, on GPU or CPU.

What is measured
----------------
Every rank holds the same model: ``--layers`` Linear(W, W) layers with W chosen so
that the model has about ``--params`` parameters (default 25.5M, ResNet-50's size,
in 2 x layers tensors; ResNet-50 has 161). One fixed batch; each step runs forward,
backward and ``opt.step()``. The figure is the time of ``opt.step()`` alone: for
Horovod's ``DistributedOptimizer`` that is the wait for the gradient allreduces
(started by the backward hooks) plus the local update; for WAGMA it is the local
update plus packing, staging (CUDA) and the group round. On a GPU the clock reads
after ``torch.cuda.synchronize()``, so queued copies and kernels are counted.

Methods, side by side in one launch, interleaved over ``--trials``:
* ``horovod``   ``hvd.DistributedOptimizer(SGD)``;
* ``wagma``     ``DistributedWagmaOptimizer(SGD)``, blocking global rounds;
* ``wagma_wa``  the same with wait-avoiding global rounds (the default);
* ``wagma_fp16`` ``wagma`` with ``compression=hvd.Compression.fp16``.
Per trial and method: ``--warmup`` steps, then ``--steps`` timed steps; a rank's
value is its median step; the trial's value is the median over ranks. Reported: the
median over trials, its min-max, and each method's ratio to Horovod per trial.

Run
---
    python bench/optimizer_step.py [--np 2] [--device cuda|cpu] [--params 25.5e6]
        [--steps 30] [--trials 3] [--json PATH]

With ``--device cuda`` all ranks share GPU 0 unless ``--per-rank-gpu``.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from mpi_launch import relaunch_under_mpirun  # noqa: E402

METHODS = ["horovod", "wagma", "wagma_wa", "wagma_fp16"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--per-rank-gpu", action="store_true",
                   help="rank r uses GPU r mod (number of GPUs)")
    p.add_argument("--params", type=float, default=25.5e6)
    p.add_argument("--layers", type=int, default=80)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    args.methods = [m for m in args.methods.split(",") if m]
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}; choose from {','.join(METHODS)}")
    return args


def build_model(args, device):
    import torch
    width = int((args.params / args.layers) ** 0.5)
    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).to(device), width


def make_optimizer(method, model, hvd, wagma):
    import torch
    base = torch.optim.SGD(model.parameters(), lr=1e-3)
    named = model.named_parameters()
    if method == "horovod":
        return hvd.DistributedOptimizer(base, named_parameters=named)
    kw = dict(named_parameters=named, sync_period=10)
    if method == "wagma_fp16":
        kw["compression"] = hvd.Compression.fp16
    kw["global_rounds"] = "wait_avoiding" if method == "wagma_wa" else "blocking"
    return wagma.DistributedWagmaOptimizer(base, **kw)


def time_steps(method, args, device, hvd, wagma):
    import torch
    model, width = build_model(args, device)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = make_optimizer(method, model, hvd, wagma)
    x = torch.randn(args.batch, width, device=device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    for step in range(args.warmup + args.steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        sync()
        t0 = time.perf_counter()
        opt.step()
        sync()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    if hasattr(opt, "join"):
        opt.join()  # wait-avoiding rounds: nobody waits for a rank that has stopped
    hvd.allreduce(torch.zeros(1), name=f"barrier.{method}")
    n_params = sum(p.numel() for p in model.parameters())
    return statistics.median(times), n_params, len(list(model.parameters()))


def main(argv=None):
    args = parse_args(argv)
    relaunch_under_mpirun(__file__, args.np, timeout=3600)
    import torch
    import horovod.torch as hvd
    import horovod_wagma.torch as wagma
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    if args.device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("optimizer_step: --device cuda, but torch.cuda.is_available() "
                             "is False (use --device cpu)")
        index = rank % torch.cuda.device_count() if args.per_rank_gpu else 0
        torch.cuda.set_device(index)
        device = torch.device("cuda", index)
    else:
        device = torch.device("cpu")
    per_trial = {m: [] for m in args.methods}
    meta = {}
    for trial in range(args.trials):
        for method in args.methods:
            mine, n_params, n_tensors = time_steps(method, args, device, hvd, wagma)
            meta = {"params": n_params, "tensors": n_tensors}
            everyone = hvd.allgather_object(mine)
            per_trial[method].append(statistics.median(everyone))
            if rank == 0:
                print(f"  trial {trial}: {method:>10}: {1e3 * per_trial[method][-1]:8.2f} ms "
                      f"(ranks {', '.join(f'{1e3 * t:.1f}' for t in everyone)})", flush=True)
    if rank != 0:
        return
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"\noptimizer step, ms: {size} ranks on {name}, {meta['params'] / 1e6:.1f}M "
          f"parameters in {meta['tensors']} tensors; median over {args.trials} trials "
          f"(min-max); ratio to Horovod per trial")
    result = {"ranks": size, "device": name, "args": vars(args), **meta, "methods": {}}
    for method in args.methods:
        ts = per_trial[method]
        row = {"median_ms": 1e3 * statistics.median(ts), "min_ms": 1e3 * min(ts),
               "max_ms": 1e3 * max(ts), "trials_ms": [1e3 * t for t in ts]}
        text = ""
        if "horovod" in per_trial and method != "horovod":
            ratios = [t / h for t, h in zip(ts, per_trial["horovod"])]
            row["over_horovod"] = ratios
            text = (f"  x Horovod {statistics.median(ratios):.2f} "
                    f"({min(ratios):.2f}-{max(ratios):.2f})")
        result["methods"][method] = row
        print(f"  {method:>10}: {row['median_ms']:8.2f} ({row['min_ms']:.2f}-"
              f"{row['max_ms']:.2f}){text}")
    path = args.json or os.path.join(HERE, "results",
                                      f"optimizer_step_{args.device}_P{size}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
