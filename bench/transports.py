#!/usr/bin/env python
"""Fault-free training throughput on the engine's two transports, side by side: the
same WAGMA job launched by mpirun (engine on MPI) and by horovodrun --gloo (engine on
Gloo, no MPI in the job), alternating within each trial.

The job: the PyTorch MLP of imbalance.py's size class (``--hidden``), WAGMA's optimizer
with its defaults (``--optimizer horovod``: Horovod's own DistributedOptimizer, the
reference for what Gloo costs Horovod itself here), ``--step-ms`` of sleep per step standing in for accelerator compute
(no imbalance), a metric allreduce (``hvd.allreduce``) every ``--metric-every`` steps
as users' scripts have. Each rank times ``--steps`` steps after ``--warmup`` between two
Horovod barriers; the figure is samples/s summed over ranks. The table gives each
transport's median and min-max over trials and the per-trial ratio Gloo / MPI.

Where the time goes, per run: the optimizer step's wall time (median over ranks of
each rank's median, and the largest rank's 99th percentile), and for each metric
allreduce how far apart the ranks arrived at it and how long it took after the last
one arrived (medians over the run's calls, and the largest).

``--hosts N`` runs across N emulated hosts of 2 ranks (multihost/cluster.py: network
namespaces, TCP between hosts; root only) instead of one host.

    python bench/transports.py [--np 8] [--trials 5] [--hosts 0] [--metric-every 50]
                               [--optimizer wagma|horovod] [--json PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

TRANSPORTS = ("mpi", "gloo")


def run_rank(args):
    """One rank of the job; rank 0 writes the summed rate to $WAGMA_BENCH_OUT."""
    import torch
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    hvd.init()
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(784, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10))
    wrap = (hvd.DistributedWagmaOptimizer if args.optimizer == "wagma"
            else hvd.DistributedOptimizer)
    opt = wrap(torch.optim.SGD(model.parameters(), lr=0.01),
               named_parameters=model.named_parameters())
    gen = torch.Generator().manual_seed(args.seed + hvd.rank())
    x = torch.randn(harness.BATCH, 784, generator=gen)
    y = torch.randint(0, 10, (harness.BATCH,), generator=gen)

    step_s, metric_calls = [], []  # opt.step's wall; (arrived, done) per metric call

    def step(i):
        time.sleep(args.step_ms / 1000.0)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        t = time.perf_counter()
        opt.step()
        step_s.append(time.perf_counter() - t)
        if args.metric_every and i % args.metric_every == 0:
            arrived = time.time()
            hvd.allreduce(loss.detach(), name="metric.loss")
            metric_calls.append((arrived, time.time()))

    for i in range(args.warmup):
        step(i)
    hvd.barrier()
    step_s.clear()
    metric_calls.clear()
    t0 = time.perf_counter()
    for i in range(args.steps):
        step(i)
    rate = args.steps * harness.BATCH / (time.perf_counter() - t0)
    hvd.barrier()
    per_rank = hvd.allgather_object((rate, step_s, metric_calls))
    if args.optimizer == "wagma":
        opt.join()
    if hvd.rank() == 0:
        with open(os.environ["WAGMA_BENCH_OUT"], "w") as f:
            json.dump({"rate": sum(r[0] for r in per_rank), "ranks": hvd.size(),
                       "breakdown": breakdown(per_rank)}, f)


def breakdown(per_rank):
    """Milliseconds: the optimizer step (median over ranks of each rank's median; the
    largest 99th percentile) and the metric allreduces (ranks' arrival spread, time
    after the last arrival: median over calls, and the largest)."""
    def pct(values, q):
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0
    calls = list(zip(*[r[2] for r in per_rank]))  # per call: each rank's (arrived, done)
    spread = [max(a for a, _ in c) - min(a for a, _ in c) for c in calls]
    after = [min(d for _, d in c) - max(a for a, _ in c) for c in calls]
    ms = lambda v: round(1e3 * v, 1)  # noqa: E731
    return dict(step_p50=ms(statistics.median(pct(r[1], 0.5) for r in per_rank)),
                step_p99_max=ms(max(pct(r[1], 0.99) for r in per_rank)),
                metric_spread=ms(statistics.median(spread)) if spread else None,
                metric_spread_max=ms(max(spread)) if spread else None,
                metric_after_last=ms(statistics.median(after)) if after else None,
                metric_after_last_max=ms(max(after)) if after else None)


def launch_command(transport, args, cluster):
    argv = [sys.executable, os.path.abspath(__file__), "--rank"] + sys.argv[1:]
    if cluster is not None:
        return (cluster.mpirun(argv) if transport == "mpi"
                else cluster.horovodrun_gloo(argv))
    return harness.launch_prefix(transport, args.np) + argv


def one_run(transport, args, cluster):
    out = os.path.join(tempfile.mkdtemp(prefix="wagma_transport_"), "rate.json")
    env = dict(os.environ, **harness.MPIRUN_ENV, WAGMA_BENCH_OUT=out, PYTHONUNBUFFERED="1")
    if cluster is not None:
        env = cluster.env(env)
    cmd = launch_command(transport, args, cluster)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=args.timeout)
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{transport} run failed ({proc.returncode}):\n"
                           f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def measure(args, cluster=None):
    rates = {t: [] for t in TRANSPORTS}
    breakdowns = {t: [] for t in TRANSPORTS}
    for trial in range(args.trials):
        order = TRANSPORTS if trial % 2 == 0 else TRANSPORTS[::-1]
        for t in order:
            run = one_run(t, args, cluster)
            rates[t].append(run["rate"])
            breakdowns[t].append(run["breakdown"])
            print(f"  trial {trial}: {t:4s} {run['rate']:8.0f} samples/s  "
                  f"ms: {run['breakdown']}", flush=True)
    return rates, breakdowns


def table(rates, where):
    ratios = [g / m for g, m in zip(rates["gloo"], rates["mpi"])]
    lines = [f"{where}: samples/s summed over ranks (median, min-max over trials)"]
    for t in TRANSPORTS:
        lines.append(f"  {t:4s}  {statistics.median(rates[t]):8.0f}  "
                     f"({min(rates[t]):.0f}-{max(rates[t]):.0f})")
    lines.append(f"  gloo/mpi per trial: median {statistics.median(ratios):.3f} "
                 f"({min(ratios):.3f}-{max(ratios):.3f})")
    return "\n".join(lines), ratios


def main():
    p = harness.parser(__doc__, np=8, timeout=600)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--step-ms", type=float, default=10.0)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--metric-every", type=int, default=50,
                   help="steps between metric allreduces (0: none)")
    p.add_argument("--optimizer", choices=("wagma", "horovod"), default="wagma")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hosts", type=int, default=0,
                   help="emulated hosts of 2 ranks each (0: this host, --np ranks)")
    p.add_argument("--json", default=None)
    p.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rank:
        run_rank(args)
        return
    if args.hosts:
        sys.path.insert(0, os.path.dirname(HERE))
        from multihost.cluster import EmulatedCluster, HostSpec
        with tempfile.TemporaryDirectory() as work, \
                EmulatedCluster([HostSpec(2) for _ in range(args.hosts)], work) as cluster:
            rates, breakdowns = measure(args, cluster)
        where = f"{args.hosts} emulated hosts x 2 ranks"
    else:
        rates, breakdowns = measure(args)
        where = f"one host, {args.np} ranks"
    where += f", {args.optimizer}'s optimizer, metric every {args.metric_every or '-'}"
    text, ratios = table(rates, where)
    print(text)
    if args.json:
        harness.write_json(args.json, dict(where=where, args=vars(args), rates=rates,
                                           ratios=ratios, breakdowns=breakdowns), indent=1)


if __name__ == "__main__":
    main()
