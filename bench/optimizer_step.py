#!/usr/bin/env python
"""Optimizer step time of a ResNet-50-sized model: Horovod vs WAGMA, on GPU or CPU.

Only ``opt.step()`` of each forward-backward-step is timed, every method side by side
in one launch; the protocol: docs/benchmarks.md, "Optimizer step time".

    python bench/optimizer_step.py [--np 2] [--device cuda|cpu] [--params 25.5e6]
        [--steps 30] [--trials 3] [--methods SPEC ...] [--json PATH]

With ``--device cuda`` all ranks share GPU 0 unless ``--per-rank-gpu``.
"""
import statistics
import time

import harness
import methods as registry
from table import print_table

METHODS = ["horovod", "wagma:rounds=blocking", "wagma", "wagma:rounds=blocking,fp16=1"]


def parse_args(argv=None):
    p = harness.parser(__doc__, np=2, timeout=3600)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--per-rank-gpu", action="store_true",
                   help="rank r uses GPU r mod (number of GPUs)")
    p.add_argument("--params", type=float, default=25.5e6)
    p.add_argument("--layers", type=int, default=80)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--trials", type=int, default=3)
    harness.add_methods(p)
    harness.add_outputs(p, plot=False)
    args = p.parse_args(argv)
    args.methods = harness.check_methods(p, args.methods or METHODS, ("horovod", "wagma"),
                                         ("outer",))
    return args


def build_model(args, device):
    import torch
    width = int((args.params / args.layers) ** 0.5)
    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).to(device), width


def time_steps(method, args, device, hvd):
    import torch
    model, width = build_model(args, device)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = registry.build_torch(method, model, torch.optim.SGD(model.parameters(), lr=1e-3),
                               hvd, hvd.size(), {"tau": 10}, {"tau": 10}).opt
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


def run(args):
    import torch
    import horovod_wagma.torch as hvd   # all CPU threads: the step's local update uses them
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
            mine, n_params, n_tensors = time_steps(method, args, device, hvd)
            meta = {"params": n_params, "tensors": n_tensors}
            everyone = hvd.allgather_object(mine)
            per_trial[method].append(statistics.median(everyone))
            if rank == 0:
                print(f"  trial {trial}: {method:>28}: {1e3 * per_trial[method][-1]:8.2f} ms "
                      f"(ranks {', '.join(f'{1e3 * t:.1f}' for t in everyone)})", flush=True)
    if rank != 0:
        return
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"\noptimizer step, ms: {size} ranks on {name}, {meta['params'] / 1e6:.1f}M "
          f"parameters in {meta['tensors']} tensors; median over {args.trials} trials "
          f"(min-max); ratio to Horovod per trial")
    result = {"ranks": size, "device": name, "args": vars(args), **meta, "methods": {}}
    table = [["method", "median", "min-max", "x Horovod (min-max)", ""]]
    for method in args.methods:
        ts = per_trial[method]
        row = {"median_ms": 1e3 * statistics.median(ts), "min_ms": 1e3 * min(ts),
               "max_ms": 1e3 * max(ts), "trials_ms": [1e3 * t for t in ts]}
        text = "-"
        if "horovod" in per_trial and method != "horovod":
            ratios = [t / h for t, h in zip(ts, per_trial["horovod"])]
            row["over_horovod"] = ratios
            text = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        result["methods"][method] = row
        table.append([method, f"{row['median_ms']:.2f}",
                      f"{row['min_ms']:.2f}-{row['max_ms']:.2f}", text, ""])
    print_table(table)
    harness.write_json(harness.output_path(
        args.json, f"optimizer_step_{args.device}_P{size}.json"), result, 1)


if __name__ == "__main__":
    harness.launch(__file__, parse_args(), run)
