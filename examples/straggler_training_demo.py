"""Straggler demo: the same training script with Horovod and with WAGMA, side by side.

    python examples/straggler_training_demo.py          # steps/s only; `make demo` shows time to accuracy

Runs examples/pytorch_mnist.py twice under ``mpirun -np 4 --oversubscribe``:
once with ``--optimizer horovod`` (hvd.DistributedOptimizer, a global gradient
allreduce every step) and once with ``--optimizer wagma`` (DistributedWagmaOptimizer,
wait-avoiding group model averaging). The two runs are identical otherwise, including
the injected stragglers: at every step one rank, drawn from a seed all ranks share,
sleeps ``--straggle`` seconds before its forward pass.

Horovod's allreduce makes every rank wait for that step's straggler, so every step
costs at least the sleep. With WAGMA the straggler's group partners average with its
last published model and go on; ranks only meet at the global average every
``--sync-period`` steps, so each rank mostly pays for its own sleeps (about 1/P of
them).

Prints a table (steps/s, training time, wall time including launch, final test
accuracy) and the speedup, and writes a bar chart to examples/results/straggler_demo.png
and the numbers to examples/results/straggler_demo.json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_SCRIPT = os.path.join(HERE, "pytorch_mnist.py")
RESULTS = os.path.join(HERE, "results")

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    # more ranks than cores: MPI must not busy-poll cores away from training
    "OMPI_MCA_mpi_yield_when_idle": "1",
}

LABELS = {"horovod": "Horovod\n(gradient allreduce)",
          "wagma": "WAGMA\n(group model averaging)",
          "horovod-nostraggle": "Horovod,\nno straggler"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4, help="MPI ranks (default 4)")
    p.add_argument("--straggle", type=float, default=0.02,
                   help="seconds one random rank sleeps per step (default 0.02)")
    p.add_argument("--epochs", type=int, default=5,
                   help="epochs per run; 32 steps each with 4 ranks (default 5)")
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size (default: the library's, 2 for 4 ranks)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="WAGMA global average every this many steps (default 10)")
    p.add_argument("--baseline", action="store_true",
                   help="also run Horovod without stragglers, for reference (+~15 s)")
    p.add_argument("--png", default=os.path.join(RESULTS, "straggler_demo.png"))
    p.add_argument("--json", default=os.path.join(RESULTS, "straggler_demo.json"),
                   help="where to write all runs' summaries")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter for the ranks (default: this one)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run")
    return p.parse_args()


def run(args, optimizer, straggle, tmpdir, tag):
    out = os.path.join(tmpdir, f"{tag}.json")
    cmd = [args.mpirun, "-np", str(args.np), "--oversubscribe", args.python, TRAIN_SCRIPT,
           "--optimizer", optimizer, "--straggle", str(straggle),
           "--epochs", str(args.epochs), "--sync-period", str(args.sync_period),
           "--no-progress", "--json", out]
    if args.group_size:
        cmd += ["--group-size", str(args.group_size)]
    env = dict(os.environ, **MPI_ENV)
    print(f"\n[{tag}] " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"[{tag}] timed out after {args.timeout:.0f} s")
    wall = time.monotonic() - t0
    if proc.returncode != 0 or not os.path.exists(out):
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        sys.exit(f"[{tag}] failed (exit code {proc.returncode})")
    with open(out) as f:
        summary = json.load(f)
    summary.update(label=tag, straggle=straggle, wall_seconds=wall)
    print(f"[{tag}] {summary['steps']} steps in {summary['seconds']:.2f} s "
          f"({summary['steps_per_s']:.1f} steps/s), accuracy {summary['accuracy']:.4f}, "
          f"{wall:.1f} s with launch", flush=True)
    return summary


def print_table(runs, args):
    header = (f"{'optimizer':<20} {'straggle':>8} {'steps':>6} {'steps/s':>8} "
              f"{'train s':>8} {'wall s':>7} {'accuracy':>9}")
    print("\n" + header)
    print("-" * len(header))
    for r in runs:
        print(f"{r['label']:<20} {r['straggle'] * 1000:>6.0f}ms {r['steps']:>6d} "
              f"{r['steps_per_s']:>8.1f} {r['seconds']:>8.2f} {r['wall_seconds']:>7.1f} "
              f"{r['accuracy']:>9.4f}")
    print("(train s: the training loop, timed by rank 0; wall s: the whole mpirun, "
          "including start-up)")
    hvd_run, wagma_run = runs[0], runs[1]
    speedup = wagma_run["steps_per_s"] / hvd_run["steps_per_s"]
    sleep_per_step = args.straggle
    print(f"\nSpeedup (WAGMA steps/s / Horovod steps/s): {speedup:.2f}x")
    if sleep_per_step > 0:
        print(f"Injected sleep: {args.straggle * 1000:.0f} ms per step on one of {args.np} ranks. "
              f"Horovod waits for it every step, so it cannot beat "
              f"{1 / sleep_per_step:.0f} steps/s; a rank that only paid for its own sleeps "
              f"would lose {sleep_per_step / args.np * 1000:.1f} ms per step on average.")
    print(f"Accuracy difference (WAGMA - Horovod): "
          f"{(wagma_run['accuracy'] - hvd_run['accuracy']) * 100:+.2f} points")
    return speedup


def plot(runs, speedup, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG written")
        return
    names = [LABELS[r["label"]] for r in runs]
    colors = {"horovod": "#7f7f7f", "wagma": "#1f77b4", "horovod-nostraggle": "#c7c7c7"}
    color = [colors[r["label"]] for r in runs]
    panels = [("steps_per_s", "Throughput (steps/s, higher is better)", "{:.1f}"),
              ("seconds", f"Training time for {runs[0]['steps']} steps (s)", "{:.1f} s"),
              ("accuracy", "Final test accuracy", "{:.2%}")]
    fig, axes = plt.subplots(1, 3, figsize=(3 * (2.2 + 0.9 * len(runs)), 5.0))
    for ax, (key, title, fmt) in zip(axes, panels):
        values = [r[key] for r in runs]
        bars = ax.bar(range(len(runs)), values, color=color, width=0.6)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels(names, fontsize=9)
        ax.set_title(title, fontsize=10.5)
        top = 1.0 if key == "accuracy" else max(values)
        if key == "steps_per_s" and args.straggle:
            ceiling = 1.0 / args.straggle  # every step waits for one full sleep
            top = max(top, ceiling)
            ax.axhline(ceiling, color="#d62728", ls="--", lw=1.2,
                       label=f"Horovod's limit: 1/straggle = {ceiling:.0f}")
            ax.legend(loc="upper left", fontsize=8.5, framealpha=0.95)
        ax.set_ylim(0, top * (1.32 if key == "steps_per_s" else 1.18))
        for b, v in zip(bars, values):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height() + top * 0.02,
                    fmt.format(v), ha="center", va="bottom", fontsize=9.5,
                    bbox=dict(facecolor="white", edgecolor="none", pad=1))
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    group = f"group size {args.group_size}" if args.group_size else "default group size"
    fig.suptitle(f"WAGMA vs Horovod under stragglers: {speedup:.2f}x the steps/s",
                 y=0.985, fontsize=12.5, fontweight="bold")
    fig.text(0.5, 0.915, f"{args.np} ranks; at every step one random rank sleeps "
             f"{args.straggle * 1000:.0f} ms (same stragglers in both runs); "
             f"WAGMA: {group}, global average every {args.sync_period} steps",
             ha="center", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.91))
    os.makedirs(os.path.dirname(os.path.abspath(args.png)), exist_ok=True)
    fig.savefig(args.png, dpi=110)
    plt.close(fig)
    print(f"Wrote {args.png}")


def main():
    args = parse_args()
    print(f"Straggler demo: {args.np} ranks, {args.epochs} epochs, one random rank "
          f"sleeps {args.straggle * 1000:.0f} ms per step. Each run takes some seconds "
          f"to launch.", flush=True)
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores:
        print(f"Note: 1-minute load average {load:.1f} on {cores} cores. If other jobs are "
              f"still running, they compete with the ranks and the times get noisy.",
              flush=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        runs = [run(args, "horovod", args.straggle, tmpdir, "horovod"),
                run(args, "wagma", args.straggle, tmpdir, "wagma")]
        if args.baseline:
            runs.append(run(args, "horovod", 0.0, tmpdir, "horovod-nostraggle"))
    speedup = print_table(runs, args)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(np=args.np, straggle=args.straggle, epochs=args.epochs,
                       group_size=args.group_size, sync_period=args.sync_period,
                       speedup=speedup, runs=runs), f, indent=2)
    print(f"Wrote {args.json}")
    plot(runs, speedup, args)


if __name__ == "__main__":
    main()
