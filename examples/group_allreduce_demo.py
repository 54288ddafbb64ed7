"""WAGMA group allreduce demo: a straggler is not waited for.

Run on 4 ranks (``make demo``):

    mpirun -np 4 --oversubscribe .venv/bin/python examples/group_allreduce_demo.py

One rank (``--straggler-rank``, default 3) sleeps ``--delay`` seconds before every
call. Every rank runs a gossip loop of ``--rounds`` calls of ``hvd.group_allreduce``
on one tensor, feeding each output back in as the next input after a small
rank-dependent "local step" (x += 0.01 * (rank + 1)), so the ranks drift apart
between global rounds. Calls r = 0 and (r + 1) % sync_period == 0 are blocking
global averages; the others are group rounds (groups of ``--group-size``, changing
every round along the butterfly schedule).

The loop runs twice, on two streams: with ``wait_avoiding=True`` (WAGMA) and with
``wait_avoiding=False``. Each rank times how long it spends inside the op calls,
separately for group and global rounds. With WAGMA, the first member of a group to
arrive activates the round and the straggler's background thread joins with its
latest published value, so in group rounds nobody waits for the sleeping rank.
Without it, the straggler's partners wait for it, and their partners wait for them.

Global rounds block by design: that is where WAGMA bounds staleness, and where the
fast ranks catch up with the straggler. In this demo the fast ranks have no compute
of their own, so the time they save in group rounds shows up as waiting at the next
global round; in training they would spend it computing. After the last round
(a global one) every rank holds exactly the same tensor again; the demo checks that.
"""
import argparse
import time

import torch

import horovod_wagma.torch as hvd
from horovod_wagma.common.optimizer.rounds import is_global_round


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20,
                   help="calls per loop; a multiple of --sync-period, so the last "
                        "round is global (default 20)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="call r is a global average when (r + 1) %% sync_period == 0 "
                        "(default 10)")
    p.add_argument("--group-size", type=int, default=2, help="group size S (default 2)")
    p.add_argument("--delay", type=float, default=0.3,
                   help="seconds the straggler sleeps before each call (default 0.3)")
    p.add_argument("--straggler-rank", type=int, default=3, help="default 3")
    p.add_argument("--numel", type=int, default=1024, help="tensor size (default 1024)")
    args = p.parse_args()
    if args.rounds < 1 or args.rounds % args.sync_period != 0:
        p.error(f"--rounds ({args.rounds}) must be a positive multiple of "
                f"--sync-period ({args.sync_period}) so that the last round is global")
    return args


def gossip_loop(args, wait_avoiding, name):
    """Runs the loop. Returns the mean wait per group round and per global round (s),
    the input to the last round and the final output."""
    rank = hvd.rank()
    x = torch.full((args.numel,), float(rank))
    waits = {True: [], False: []}  # is_global_round -> seconds spent inside the op
    for r in range(args.rounds):
        x = x + 0.01 * (rank + 1)  # the "local step": ranks drift apart
        if rank == args.straggler_rank:
            time.sleep(args.delay)
        last_input = x
        t0 = time.perf_counter()
        x = hvd.group_allreduce(x, name=name, wait_avoiding=wait_avoiding)
        waits[is_global_round(r, args.sync_period)].append(time.perf_counter() - t0)
    mean = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
    return mean(waits[False]), mean(waits[True]), last_input, x


def main():
    args = parse_args()
    hvd.init(group_size=args.group_size, sync_period=args.sync_period)
    rank, size = hvd.rank(), hvd.size()
    if not 0 <= args.straggler_rank < size:
        raise SystemExit(f"--straggler-rank must be in [0, {size})")

    if rank == 0:
        print(f"WAGMA demo: {size} ranks, group size {args.group_size}, "
              f"sync_period {args.sync_period}, {args.rounds} rounds per loop, "
              f"rank {args.straggler_rank} sleeps {args.delay * 1e3:.0f} ms before "
              "each call", flush=True)
        for p, phase in enumerate(hvd.groups(size, args.group_size)):
            print(f"  phase {p} groups: {phase}")
        n_global = sum(is_global_round(r, args.sync_period) for r in range(args.rounds))
        print(f"  per loop: {args.rounds - n_global} group rounds, "
              f"{n_global} global rounds (r = 0 and (r+1) % {args.sync_period} == 0)",
              flush=True)

    stats, lasts, finals, walls = [], {}, {}, {}
    for wait_avoiding, name in ((True, "demo.wait_avoiding"), (False, "demo.blocking")):
        hvd.barrier()
        t0 = time.perf_counter()
        group_wait, global_wait, last, final = gossip_loop(args, wait_avoiding, name)
        walls[wait_avoiding] = time.perf_counter() - t0
        stats += [group_wait, global_wait]
        lasts[wait_avoiding], finals[wait_avoiding] = last, final

    # Gather everything on every rank (allgather concatenates along dim 0).
    table = hvd.allgather(torch.tensor([stats], dtype=torch.float64)).numpy() * 1e3
    wall = hvd.allgather(torch.tensor([[walls[True], walls[False]]],
                                      dtype=torch.float64)).numpy()
    gathered = {wa: (hvd.allgather(lasts[wa].unsqueeze(0)),
                     hvd.allgather(finals[wa].unsqueeze(0))) for wa in (True, False)}

    if rank != 0:
        return
    print()
    print("Mean time spent inside group_allreduce per call, in ms "
          "(WA = wait_avoiding):")
    print("          |   group rounds    |   global rounds")
    print("  rank    |  WA=True WA=False |  WA=True WA=False")
    print("  --------+-------------------+------------------")
    for r in range(size):
        g_wa, gl_wa, g_no, gl_no = table[r]
        tag = "  <- straggler" if r == args.straggler_rank else ""
        print(f"  {r:<6}  | {g_wa:8.1f} {g_no:8.1f} | {gl_wa:8.1f} {gl_no:8.1f}{tag}")
    fast = [r for r in range(size) if r != args.straggler_rank]
    g_wa = table[fast, 0].mean()
    g_no = table[fast, 2].mean()
    print()
    print(f"Verdict: non-straggler ranks waited {g_wa:.1f} ms per group round with "
          f"WAGMA vs {g_no:.1f} ms without wait-avoidance.")
    print(f"  Loop wall time: {wall[:, 0].max():.2f} s with WAGMA, "
          f"{wall[:, 1].max():.2f} s without. The fast ranks have no compute of their")
    print("  own here, so with WAGMA they spend the time saved at the next (blocking)")
    print("  global round, where the straggler catches up; in training they would "
          "compute.")
    print()
    print("The last round is global. Element 0 of each rank's tensor:")
    for wa in (True, False):
        before, after = gathered[wa]
        same = all(torch.equal(after[i], after[0]) for i in range(size))
        spread = (after - after[0]).abs().max().item()
        print(f"  WA={str(wa):<5}  inputs: " +
              " ".join(f"{v:.4f}" for v in before[:, 0].tolist()) +
              f"  ->  output {after[0, 0].item():.4f} on every rank: "
              f"{'yes' if same else 'NO'} (max |difference| {spread:.1e})")
    exact = (size - 1) / 2 + args.rounds * 0.01 * (size + 1) / 2
    print(f"  Without wait-avoidance every average is over fresh values, so the mean is "
          f"kept ({exact:.4f});")
    print("  with WAGMA, group rounds mixed in the straggler's older published values.")


if __name__ == "__main__":
    main()
