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
  mean of the measured ones; with none measured, the shares are equal;
- weights within ``dead_band`` (relative) of their median count as the median, so
  ranks of the same hardware get equal shares: one epoch's measurement carries a few
  percent of noise, and shares that follow it make the ranks idle at the epoch's end
  for nothing.
"""
import math

# Throughputs within 10% of the median count as equal. Measured, P=8 on equal ranks
# (bench/epoch_loop.py, homogeneous): one epoch's throughputs spread ±6% around
# their median (1179-1331 samples/s, mlp, seed 0); a persistent straggler (2x, 1.5x)
# lies far outside.
DEFAULT_DEAD_BAND = 0.1


def usable_weights(weights):
    """``weights`` with the unmeasured (not finite, or <= 0) replaced by the measured
    ones' mean; all 1.0 when none is measured."""
    ok = [w for w in weights if math.isfinite(w) and w > 0]
    fill = sum(ok) / len(ok) if ok else 1.0
    return [w if math.isfinite(w) and w > 0 else fill for w in weights]


def snapped_to_median(weights, dead_band):
    """``weights`` with those within ``dead_band`` (relative) of the median replaced by
    the median."""
    ordered = sorted(weights)
    n = len(ordered)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2.0
    return [median if abs(w - median) <= dead_band * median else w for w in weights]


def proportional_shares(total, weights, min_fraction=0.25, dead_band=0.0):
    """Integer shares of ``total`` samples, one per weight (see the invariants)."""
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    check_share_options(min_fraction, dead_band)
    weights = snapped_to_median(usable_weights(list(weights)), dead_band)
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


def check_share_options(min_share, dead_band):
    """The samplers' ``min_share`` and ``dead_band``, checked (ValueError naming the
    bad one)."""
    if not 0.0 <= min_share <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_share!r}")
    if not 0.0 <= dead_band < 1.0:
        raise ValueError(f"dead_band must be in [0, 1), got {dead_band!r}")


def epoch_total(n, replicas, drop_last):
    """Samples dealt per epoch, as torch's DistributedSampler: the dataset padded up
    to a multiple of ``replicas``, or with ``drop_last`` truncated down to one."""
    if drop_last and n % replicas != 0:
        return math.ceil((n - replicas) / replicas) * replicas
    return math.ceil(n / replicas) * replicas


def padded(indices, total):
    """``indices`` truncated to ``total``, or padded by repeating from the start (as
    torch's DistributedSampler pads)."""
    indices = list(indices)
    if total <= len(indices):
        return indices[:total]
    padding = total - len(indices)
    if padding <= len(indices):
        return indices + indices[:padding]
    return indices + (indices * math.ceil(padding / len(indices)))[:padding]
