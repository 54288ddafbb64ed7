"""Round numbering shared by the frontends (design doc §3).

Each call of a stream is round r = 0, 1, 2, ...; round 0 and every round with
(r + 1) % sync_period == 0 are global, the others group rounds. The engine applies the
same rule (cpp_ops/engine/rounds/round_plan.h); optimizers use it to know, before the call,
whether a round will be global (to average buffers, or to choose a compression rule).
With wait-avoiding global rounds they learn the round that served a call afterwards
(a lagging app skips rounds), and key those duties to it (optimizer_core.py).
"""


def is_global_round(round_index, sync_period):
    """Whether round r is global: r == 0 or (r + 1) % sync_period == 0.

    Written with ``==``, ``%`` and ``|`` only, so the same expression serves a Python
    int (returns a bool) and an integer tensor inside a TensorFlow graph (returns a
    bool tensor), where ``or`` would need a concrete truth value."""
    return (round_index == 0) | ((round_index + 1) % sync_period == 0)


def global_round_between(after, upto, sync_period):
    """Whether any round r with after < r <= upto is global: with wait-avoiding global
    rounds a lagging app is served by round ``upto`` after skipping the others.

    Like is_global_round, one expression for Python ints and integer tensors: round 0
    when ``after`` < 0; past it the global rounds are those with r % tau == tau - 1,
    one in every tau rounds, and (r + 1) // tau counts them up to r."""
    return (upto > after) & ((after < 0) | (
        (upto + 1) // sync_period > (after + 1) // sync_period))
