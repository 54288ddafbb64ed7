"""Wait-avoiding global rounds (docs/design.md, section 2) with a persistent straggler: the last
rank takes SLOW_FACTOR times as long per step as the others (a sleep stands in for
compute). Every rank calls the stream until it has been served round ROUNDS - 1; a
lagging app skips rounds, so the slow rank makes fewer calls.

Usage: global_rounds.py SCENARIO... where a scenario is
"SLOW_FACTOR,GLOBAL_ROUNDS,MAX_STALENESS,ROUNDS,SYNC_PERIOD,GROUP_SIZE,STEP_S"; each
runs its own stream, with these knobs. Each rank reports, per call, the round that
served it and the time it waited in synchronize, the stream's statistics and the
most rounds its engine ever held beyond what it held when the scenario began (an
earlier scenario's stream keeps what it holds).

A scenario "left_out,AVERAGING[,MAX_STALENESS]" checks values instead (left_out below),
"delta_moves" the 'delta' rule's zero sum (delta_moves below), and "local_base" the
"local" rule's base and its "fresh" fallback on a blocking stream (local_base below)."""
import sys
import time

import frameworks as fw
from common import run_scenarios

from horovod_wagma.common.op import engine_lib

hvd = fw.hvd
hvd.init()
rank, size = hvd.rank(), hvd.size()
slow = size - 1


def persistent_straggler(spec):
    factor, mode, max_staleness, rounds, tau, S, step_s = spec.split(",")
    factor, max_staleness, rounds, tau, S, step_s = (
        float(factor), int(max_staleness), int(rounds), int(tau), int(S), float(step_s))
    name = f"persist.{spec}"
    knobs = dict(group_size=S, sync_period=tau, global_rounds=mode,
                 max_staleness=max_staleness)
    held_before = engine_lib.stats()["rounds_held"]
    x = fw.tensor([float(rank)] * 256, "float32")
    served, waits, held = [], [], 0
    t_start = time.monotonic()
    while not served or served[-1] < rounds - 1:
        time.sleep(step_s * (factor if rank == slow else 1.0))
        h = hvd.group_allreduce_async(x, name=name, **knobs)
        t0 = time.monotonic()
        x = hvd.synchronize(h)
        waits.append(time.monotonic() - t0)
        served.append(h.round)
        held = max(held, engine_lib.stats()["rounds_held"] - held_before)
    return dict(served=served, waits=waits, held=held, seconds=time.monotonic() - t_start,
                stream=hvd.stats(name), final=fw.numpy(x)[:4].tolist())


def left_out(averaging, max_staleness=None):
    """Rank LEFT_OUT["away"]'s app enters round 0, then sits in barriers (as in a Horovod
    collective) while the others gossip in lockstep, and collects the newest served
    round only at LEFT_OUT's collects, with its published value + a delta as its fresh
    input: its engine's value counts one round past each of its app's calls and is
    left out after that. Barriers around each collect keep every passive value
    deterministic. Every output is returned, to be compared exactly with
    reference.left_out_trajectory. ``max_staleness``: LEFT_OUT's unless given."""
    from common import initial_value
    from reference import LEFT_OUT as c
    from world import world
    comm, away = world(), c["away"]
    max_staleness = c["max_staleness"] if max_staleness is None else max_staleness
    name = f"left_out.{averaging}.{max_staleness}"
    knobs = dict(group_size=c["group_size"], sync_period=c["sync_period"],
                 averaging=averaging, global_rounds="wait_avoiding",
                 max_staleness=max_staleness)
    x0 = initial_value(rank, 8, size)
    x = fw.tensor(x0, "float64")
    x, served = fw.group_allreduce_with_round(x, name=name, **knobs)
    outputs, rounds = {0: fw.numpy(x).tolist()}, [served]
    collect_delta = dict(zip(c["collects"], c["deltas"]))
    for r in range(1, c["rounds"]):
        if rank != away:
            x, served = fw.group_allreduce_with_round(x, name=name, **knobs)
            outputs[served] = fw.numpy(x).tolist()
            rounds.append(served)
        comm.Barrier()
        if rank == away and r in collect_delta:
            x, served = fw.group_allreduce_with_round(x + collect_delta[r], name=name,
                                                      **knobs)
            outputs[served] = fw.numpy(x).tolist()
            rounds.append(served)
        comm.Barrier()
    return dict(outputs=outputs, served=rounds, stream=hvd.stats(name), x0=x0.tolist(),
                phases=hvd.groups(size, c["group_size"]))


def delta_moves(rounds=150, factor=4, every=25, step_s=0.004):
    """The 'delta' rule (drift correction's stream) where its bookkeeping is hardest:
    the last rank is `factor` times slower, values older than max_staleness=2 rounds are
    left out, and every `every` rounds all ranks meet in a barrier (a Horovod
    collective mid-run; each rank once per multiple of `every` its served rounds
    pass), after which the fast apps skip the rounds their engines served meanwhile.
    Every rank calls until it has been served round `rounds` - 1.
    Each rank's input drifts by its own noise after every call (a moment between global
    rounds); it reports, per collected round, its cumulative move sum of (y - x)."""
    import numpy as np
    from world import world
    comm = world()
    knobs = dict(sync_period=1, averaging="delta", global_rounds="wait_avoiding",
                 max_staleness=2)
    rng = np.random.default_rng(rank)
    x = rng.normal(size=16)
    moved = np.zeros(16)
    cumulative, served = {}, -1
    while served < rounds - 1:
        before = served
        time.sleep(step_s * (factor if rank == slow else 1.0))
        y, served = fw.group_allreduce_with_round(fw.tensor(x, "float64"),
                                                  name="delta_moves", **knobs)
        y = fw.numpy(y)
        moved += y - x
        cumulative[served] = moved.tolist()
        x = y + rng.normal(scale=0.1, size=16)
        for _ in range(served // every - max(before, 0) // every):
            comm.Barrier()
    return dict(cumulative=cumulative, stream=hvd.stats("delta_moves"))


# The "local" base scenario (local_base below): blocking global rounds (the op's
# default), tau 100 (only round 0 global here), S 2, the "local" rule; rank LOCAL_AWAY's
# app sits in barriers through rounds LOCAL_AWAY_ROUNDS, then collects them in order.
LOCAL_AWAY, LOCAL_AWAY_ROUNDS, LOCAL_TAU, LOCAL_S = 0, (3, 4, 5), 100, 2


def local_delta(r, k):
    """Rank r's step before its call of round k (exact binary fractions)."""
    return 0.25 * (r + 1) + 0.125 * k


def local_role(r, k, phases):
    """Who calls round k: in each group of the round's phase one app, "first", moves
    its value and calls; the others ("second") call after it, with their output
    unchanged (their engines joined with it already, so nothing depends on timing);
    the away rank ("away") calls later."""
    from reference import phase_of
    group = next(g for g in phases[phase_of(k, LOCAL_TAU, len(phases))] if r in g)
    if k in LOCAL_AWAY_ROUNDS:
        if r == LOCAL_AWAY:
            return "away"
        callers = [m for m in group if m != LOCAL_AWAY]
    else:
        callers = list(group)
    return "first" if r == callers[0] else "second"


def local_base():
    """docs/semantics.md, averaging rules: for "local", b is c plus the results the
    app applied after c was taken; past one such result the round takes "fresh". The
    away rank's engine joins rounds 3, 4 and 5 with its round-2 output c; its app then
    collects them in order, each with its output plus a step: round 3 by
    m + (x - c), round 4 by m + (x - b) with b = c + (out3 - x3), round 5 (two results
    since c) by "fresh", m + (x - c) / 2. Every input and output is returned, for
    test_global_rounds' exact trajectory."""
    import numpy as np
    from common import initial_value
    from world import world
    comm = world()
    name = "local_base"
    knobs = dict(group_size=LOCAL_S, sync_period=LOCAL_TAU, averaging="local",
                 global_rounds="blocking")
    phases = hvd.groups(size, LOCAL_S)
    x0 = initial_value(rank, 4, size)

    def call(x, k):
        y, served = fw.group_allreduce_with_round(fw.tensor(x, "float64"), name=name, **knobs)
        inputs[k], outputs[k], rounds[k] = x.tolist(), fw.numpy(y).tolist(), served
        return fw.numpy(y)

    inputs, outputs, rounds = {}, {}, {}
    y = call(x0, 0)
    last = max(LOCAL_AWAY_ROUNDS)
    for k in range(1, last + 1):
        role = local_role(rank, k, phases)
        comm.Barrier()
        if role == "first":
            y = call(y + local_delta(rank, k), k)
        comm.Barrier()
        if role == "second":
            y = call(np.array(y), k)
        comm.Barrier()
    if rank == LOCAL_AWAY:
        for k in LOCAL_AWAY_ROUNDS:
            y = call(y + local_delta(rank, k), k)
    comm.Barrier()
    return dict(inputs=inputs, outputs=outputs, served=rounds, x0=x0.tolist(),
                phases=phases, stream=hvd.stats(name))


SCENARIOS = {"delta_moves": delta_moves, "local_base": local_base}
specs = sys.argv[1:]
run_scenarios({spec: (lambda spec=spec: left_out(*spec.split(",")[1:2],
                                                  *map(int, spec.split(",")[2:3]))
                      if spec.startswith("left_out,") else
                      SCENARIOS[spec]() if spec in SCENARIOS else persistent_straggler(spec))
               for spec in specs}, specs)
