"""Round numbering shared by the frontends (DESIGN.md §3).

Each call of a stream is round r = 0, 1, 2, ...; round 0 and every round with
(r + 1) % sync_period == 0 are global, the others group rounds. The engine applies the
same rule (cpp_ops/engine/round_plan.h); optimizers use it to know, before the call,
whether a round will be global (to average buffers, or to choose a compression rule).
"""


def is_global_round(round_index, sync_period):
    return round_index == 0 or (round_index + 1) % sync_period == 0
