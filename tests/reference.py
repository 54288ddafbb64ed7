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
