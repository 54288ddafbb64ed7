"""Cutting one epoch's samples into per-rank shares proportional to throughput.

Invariants (what BalancedDistributedSampler and its Keras counterpart rely on):
- the shares sum to ``total`` exactly, so every sample of the epoch's permutation is
  dealt to exactly one rank;
- every share is at least the floor, ``min_fraction`` of an equal share (rounded
  down, and never above an equal share), so no rank starves however slow it measured;
- above the floor the shares follow the weights: water-filling, then the largest
  remainders get the leftover samples, ties to the lower rank;
- the result is a pure function of its arguments, so every rank computes the same
  shares from the same gathered throughputs;
- weights that are not finite and positive mean "not measured": such a rank gets the
  mean of the measured ones; with none measured, the shares are equal.
"""
import math


def usable_weights(weights):
    """``weights`` with the unmeasured (not finite, or <= 0) replaced by the measured
    ones' mean; all 1.0 when none is measured."""
    ok = [w for w in weights if math.isfinite(w) and w > 0]
    fill = sum(ok) / len(ok) if ok else 1.0
    return [w if math.isfinite(w) and w > 0 else fill for w in weights]


def proportional_shares(total, weights, min_fraction=0.25):
    """Integer shares of ``total`` samples, one per weight (see the invariants)."""
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    if not 0.0 <= min_fraction <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_fraction!r}")
    weights = usable_weights(list(weights))
    n = len(weights)
    floor = min(total // n, int(min_fraction * total / n))
    pinned = set()  # ranks held at the floor
    while True:
        free = [i for i in range(n) if i not in pinned]
        budget = total - floor * len(pinned)
        mass = sum(weights[i] for i in free)
        exact = {i: budget * weights[i] / mass for i in free}
        low = [i for i in free if exact[i] < floor]
        if not low or len(low) == len(free):
            break
        pinned.update(low)
    shares = [floor if i in pinned else int(math.floor(exact[i])) for i in range(n)]
    leftover = total - sum(shares)
    by_remainder = sorted(free, key=lambda i: (-(exact[i] - math.floor(exact[i])), i))
    for k in range(leftover):
        shares[by_remainder[k % len(by_remainder)]] += 1
    return shares


def share_bounds(shares, rank):
    """[start, stop) of ``rank``'s contiguous share in the epoch's permutation."""
    start = sum(shares[:rank])
    return start, start + shares[rank]
