"""Exact WAGMA trajectories for tests: the averaging-matrix view of docs/design.md, section 2.

In a gossip loop without stragglers (each rank feeds its previous output back, and
no rank joins a round with anything but its fresh input), round r maps the stacked
rank values X (P x n) to A_r X, where A_r averages each group of the round's phase
(or all ranks, in a global round).
"""
import numpy as np


def is_global(r, sync_period):
    return r == 0 or (r + 1) % sync_period == 0


def phase_of(r, sync_period, num_phases):
    k = r - 1 - r // sync_period
    return k % num_phases


def average_round(x, r, phases, sync_period, averaging="fresh"):
    """A_r x: round r's outputs from the stacked fresh inputs x (P x n, float64)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.empty_like(x)
    if is_global(r, sync_period):
        y[:] = x.mean(axis=0)
        return y
    for members in phases[phase_of(r, sync_period, len(phases))]:
        s = x[members].sum(axis=0)
        g = len(members)
        for i in members:
            # "local" with c = x (no stale contribution) is the plain mean too.
            y[i] = s / g if averaging != "paper" else (s + x[i]) / (g + 1)
    return y


def gossip_trajectory(x0, phases, sync_period, rounds, averaging="fresh"):
    """List of P x n arrays: the outputs of rounds 0..rounds-1 (float64)."""
    x = np.array(x0, dtype=np.float64)
    out = []
    for r in range(rounds):
        x = average_round(x, r, phases, sync_period, averaging)
        out.append(x)
    return out


# Gossip results against the exact trajectory: per dtype, the largest |error| allowed
# (the half types accumulate in float32 but store their inputs and outputs rounded).
GOSSIP_TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 3e-2, "bfloat16": 2e-1}


def gossip_error_failures(results):
    """(rank, stream, error) for every stream whose error (the worker's errors[name],
    the stream's dtype in its name as '.float32.') exceeds GOSSIP_TOLERANCE; every
    rank must report the same streams."""
    names = next(iter(results.values()))["errors"].keys()
    failures = []
    for rank, res in results.items():
        assert res["errors"].keys() == names, rank
        for name, err in res["errors"].items():
            dtype = next(d for d in GOSSIP_TOLERANCE if f".{d}." in name)
            if not err <= GOSSIP_TOLERANCE[dtype]:
                failures.append((rank, name, err))
    return failures


# The left-out scenario (tests/workers/global_rounds.py: left_out): tau 3 (global rounds
# 0, 2, 5, 8), S 2, max_staleness 1, rounds 0..10; rank 1's app collects at rounds 5 (a
# global round) and 10 (a group round), its input its published value plus the delta.
# Rank 1, not the last: a left-out value first or in the middle of its group's sources
# must be dropped, not the last one.
LEFT_OUT = dict(sync_period=3, group_size=2, max_staleness=1, rounds=11, collects=(5, 10),
                deltas=(0.75, -1.25), away=1)


def left_out_trajectory(x0, phases, sync_period, rounds, away, collects, deltas,
                        max_staleness, averaging):
    """Wait-avoiding global rounds with one rank (`away`) whose app enters round 0,
    then only collects, at the rounds in `collects`, the newest round its engine served
    (its fresh input: its published value + deltas[k]); the others run a gossip loop in
    lockstep. Its engine joins every other round with its published value c, which
    counts while the round is at most max_staleness past its app's last one (its app
    is far behind in steps by construction) and is left out after that.

    Returns a list of P x n arrays, one per round: every rank's output (the away rank's
    row only at its collects, NaN elsewhere). docs/design.md, section 2: m is the mean
    of the included contributions s / g; an active rank (c = x) gets m, or with 'paper'
    at a group round (s + x) / (g + 1); the away rank, included: fresh m + (x - c) / g,
    local m + (x - c), paper (s + x) / (g + 1); left out: fresh and paper
    (s + x) / (g + 1) (x joins as one more member), local m + (x - c). 'delta': x +
    (m - c) included, x left out, plus m - c of every round its app skipped in which
    its value counted. 'follow': as 'fresh', but after each round its engine served
    (not a collect) c becomes that round's m, its group's mean of the counted values;
    x stays the app's last output + the delta."""
    x = np.array(x0, dtype=np.float64)
    published, app_value, last_app = None, None, 0
    skipped_delta = 0.0
    collect_delta = dict(zip(collects, deltas))
    out = []
    for r in range(rounds):
        y = np.full_like(x, np.nan)
        if r == 0:
            y[:] = x.mean(axis=0)
        else:
            groups = ([list(range(len(x)))] if is_global(r, sync_period)
                      else phases[phase_of(r, sync_period, len(phases))])
            included = r - last_app <= max_staleness
            served_mean = None
            for members in groups:
                counted = [i for i in members if i != away or included]
                values = [published if i == away else x[i] for i in counted]
                s, g = np.sum(values, axis=0), len(counted)
                m = s / g
                for i in members:
                    if i == away:
                        continue
                    paper = averaging == "paper" and not is_global(r, sync_period)
                    y[i] = (s + x[i]) / (g + 1) if paper else m
                if away in members and r not in collect_delta and included:
                    skipped_delta = skipped_delta + (m - published)
                if away in members:
                    served_mean = m
                if away in members and r in collect_delta:
                    xa, c = app_value + collect_delta[r], published
                    if averaging == "delta":
                        y[away] = xa + (m - c if included else 0.0) + skipped_delta
                        skipped_delta = 0.0
                    elif averaging == "local":
                        y[away] = m + (xa - c)
                    elif averaging in ("fresh", "follow") and included:
                        y[away] = m + (xa - c) / g
                    else:
                        y[away] = (s + xa) / (g + 1)
        if r == 0 or r in collect_delta:
            published, app_value, last_app = y[away].copy(), y[away].copy(), r
        elif averaging == "follow":
            published = served_mean.copy()
        x = np.where(np.isnan(y), x, y)
        out.append(y)
    return out
