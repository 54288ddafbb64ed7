"""Gossip exactness: each rank feeds its previous output back, with a barrier after
every round so that no rank ever joins a round with a stale value. With
wait-avoidance the last rank arrives a little late, so that its engine joins
passively (with its published value, which the barrier makes fresh). Every result must
then equal the exact averaging-matrix trajectory (tests/reference.py), with blocking
and with wait-avoiding global rounds alike; a call served by any round but its own
counts as an infinite error.

Prints, per configuration, the max abs error over all rounds and elements."""
import itertools
import time

import numpy as np

import frameworks as fw
from common import emit, initial_value
from world import world
from reference import gossip_trajectory

from horovod_wagma.common.op import engine_lib

hvd = fw.hvd
DTYPES = ["float64", "float32", "float16", "bfloat16"]
ROUNDS = 12


def run_config(comm, rank, size, S, tau, dtype, wa, averaging, n, global_rounds="blocking"):
    mode = "wag" if global_rounds == "wait_avoiding" else ("wa" if wa else "sync")
    name = f"g.S{S}.t{tau}.{dtype}.{mode}.{averaging}.{n}"
    phases = hvd.groups(size, S)
    x0 = np.stack([initial_value(r, n, size) for r in range(size)])
    x0_cast = fw.numpy(fw.tensor(x0, dtype))
    expected = gossip_trajectory(x0_cast, phases, tau, ROUNDS, averaging)
    x = fw.tensor(x0[rank], dtype)
    max_err = 0.0
    for r in range(ROUNDS):
        if wa and rank == size - 1:
            time.sleep(0.003)  # others arrive first: this rank's engine joins passively
        x, served = fw.group_allreduce_with_round(
            x, name=name, group_size=S, sync_period=tau, averaging=averaging,
            wait_avoiding=wa, global_rounds=global_rounds)
        if served != r:  # in lockstep no round is ever skipped
            return name, float("inf")
        err = np.abs(fw.numpy(x) - expected[r][rank]).max()
        max_err = max(max_err, float(err))
        comm.Barrier()
    return name, max_err


def main():
    hvd.init()
    comm = world()
    rank, size = hvd.rank(), hvd.size()
    # The counts are this run's own: a resident launch ran other workers before it.
    before = engine_lib.stats()
    errors = {}
    configs = list(itertools.product([2, 3, 4], [1, 3, 10], DTYPES, [True, False]))
    for S, tau, dtype, wa in configs:
        name, err = run_config(comm, rank, size, S, tau, dtype, wa, "fresh", 33)
        errors[name] = err
    # The "paper" rule, and tensors large enough for the reduce-scatter/allgather path.
    for S, dtype, wa in itertools.product([2, 4], ["float32", "float64"], [True, False]):
        name, err = run_config(comm, rank, size, S, 3, dtype, wa, "paper", 33)
        errors[name] = err
    for S, dtype, wa in itertools.product([3, 4], ["float32", "float16"], [True, False]):
        name, err = run_config(comm, rank, size, S, 4, dtype, wa, "fresh", 50001)
        errors[name] = err
    # Wait-avoiding global rounds: in lockstep, the blocking mode's exact trajectory
    # (the last rank's engine joins the global rounds too, with its fresh output).
    for S, tau, dtype in itertools.product([2, 3, 4], [1, 3, 10], ["float64", "float32"]):
        name, err = run_config(comm, rank, size, S, tau, dtype, True, "fresh", 33,
                               "wait_avoiding")
        errors[name] = err
    for averaging, dtype in itertools.product(["paper", "local"], ["float64", "float16"]):
        name, err = run_config(comm, rank, size, 2, 3, dtype, True, averaging, 33,
                               "wait_avoiding")
        errors[name] = err
    after = engine_lib.stats()
    emit(rank, errors=errors, stats={k: after[k] - before[k] for k in
                                     ("passive_joins", "messages_cut")})


if __name__ == "__main__":
    main()
