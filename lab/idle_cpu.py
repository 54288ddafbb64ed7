"""Idle cost of the engine's progress thread.

Starts the engine on 2 ranks, runs a few rounds so every code path is warm, then sits
idle and reads the CPU time of each thread from /proc over the idle window. The
engine's thread is named "wagma-engine"; Horovod's own background thread and the
rest of the process are reported beside it for scale.

    python lab/idle_cpu.py            # re-launches itself under mpirun, 2 ranks
    HOROVOD_CYCLE_TIME=20 python lab/idle_cpu.py --np 8

It also prints the host's CPU busy share over the window (bench/host_load.py): with 8
ranks on this 2-core host, Horovod's background loop at its default 1 ms cycle keeps
the host busy on its own (docs/benchmarks.md, "Regimes").
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from harness import relaunch_under_mpirun, thread_cpu_seconds  # noqa: E402
from host_load import HostLoad, fmt_busy  # noqa: E402


def cpu_by_thread_name():
    """{thread name: CPU seconds} summed over this process's threads of that name."""
    out = {}
    for _, name, seconds in thread_cpu_seconds():
        out[name] = out.get(name, 0.0) + seconds
    return out


def worker(args):
    import torch
    import horovod_wagma.torch as hvd
    from mpi4py import MPI
    hvd.init()
    x = torch.ones(1000)
    for _ in range(25):
        x = hvd.group_allreduce(x, name="warm")
    MPI.COMM_WORLD.Barrier()
    before, t0, load = cpu_by_thread_name(), time.monotonic(), HostLoad()
    time.sleep(args.window)
    after, elapsed, busy = cpu_by_thread_name(), time.monotonic() - t0, load.busy_share()
    engine = 100.0 * (after.get("wagma-engine", 0) - before.get("wagma-engine", 0)) / elapsed
    total = 100.0 * (sum(after.values()) - sum(before.values())) / elapsed
    busiest = sorted(((after[k] - before.get(k, 0)) * 100.0 / elapsed, k) for k in after)[-3:]
    rows = MPI.COMM_WORLD.gather((engine, total, busiest[::-1]))
    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"idle window {args.window:.0f} s, {len(rows)} ranks, HOROVOD_CYCLE_TIME="
              f"{os.environ.get('HOROVOD_CYCLE_TIME', 'default')}: host busy "
              f"{fmt_busy(busy)}; CPU as % of one core:")
        for rank, (e, t, busiest) in enumerate(rows):
            top = ", ".join(f"{name} {pct:.1f}%" for pct, name in busiest)
            print(f"  rank {rank}: wagma-engine thread {e:5.2f}%   whole process {t:6.2f}%"
                  f"   (busiest threads: {top})")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--window", type=float, default=10.0)
    p.add_argument("--np", type=int, default=2)
    args = p.parse_args()
    relaunch_under_mpirun(__file__, args.np, timeout=600)
    worker(args)


if __name__ == "__main__":
    main()
