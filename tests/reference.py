"""Exact WAGMA trajectories for tests: the averaging-matrix view of DESIGN.md §3.

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
