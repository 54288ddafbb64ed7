"""drift_correction's default, for both frameworks (the mechanism: docs/design.md §3;
PyTorch: torch/drift_correction.py, Keras: keras/drift_correction.py).

Per rank i and parameter, at every global round that averages the optimizer state
("on_sync"), with m_i its first moment just before the average, sent on the "drift"
stream (OptimizerCore.drift_stream_knobs: rule "delta"), whose result moves it by
m̄ - c_i (c_i: what this rank counted in the round):

    c_i <- c_i + alpha * k * (m̄ - c_i)      g_i <- g_i + c_i before every step

k converts the moment to gradient units (its scale is each framework's). The fixed
point is c_i = mean_j g_j - g_i for any 0 < alpha <= 1, and the moves, so the
variates, sum to zero over the ranks at every round.
"""

# drift_correction=None's alpha where the optimizer keeps a first moment and the state
# is averaged "on_sync". Measured at P=8 (docs/benchmarks.md, "Drift correction on
# wait-avoiding global rounds"): against no correction it won or tied 11 of 12
# time-to-accuracy cases (3 tasks, IID and non-IID, random and persistent stragglers;
# it lost seq IID persistent, 0.95x against 0.89x Horovod's time), and with no
# stragglers closed most of the non-IID gap between the ranks' own models and their
# average; 0.5 closed more of the gap but lost accuracy under random stragglers (its
# estimate's noise, alpha/(2-alpha) of one round's, is 2.4x 0.25's).
DEFAULT_ALPHA = 0.25

# Keras's default: off. Measured at P=8 on mlp (docs/benchmarks.md, "Drift correction
# in Keras: off by default"): with a persistent straggler in the epoch loop, 7 of 13
# long runs with 0.25 fell 4-13 points below their peak (86-87%), none of 6 without;
# in the time-to-accuracy matrix 0.25 lost IID (0.61x and 0.96x Horovod's time against
# 0.57x and 0.77x), tied non-IID persistent (0.96x) and won non-IID random within the
# spread (0.67x against 0.70x). Keras's fast ranks lag the slow one by a growing
# number of drift rounds there, and the variates' sum, zero at rounds all ranks
# collected, reached 1.5-3.5 against each variate's 0.3-0.8 in the runs that fell.
KERAS_DEFAULT_ALPHA = 0.0


def resolve_alpha(alpha, check_moment, state_mode, default_alpha=DEFAULT_ALPHA):
    """drift_correction's value: ``alpha`` when given (``check_moment()`` raises a
    ValueError naming the optimizer when it keeps no first moment); None:
    ``default_alpha`` where the optimizer keeps one and the state is averaged
    "on_sync", else 0.0 (off: plain SGD, Adagrad, ... have nothing to learn the bias
    from)."""
    if alpha is not None:
        if alpha:
            check_moment()
        return float(alpha)
    if state_mode != "on_sync":
        return 0.0
    try:
        check_moment()
    except ValueError:
        return 0.0
    return default_alpha
