"""Checks and mappings of Horovod's DistributedOptimizer arguments, shared by the
torch and Keras DistributedWagmaOptimizer.

WAGMA averages models, not gradients, so some of Horovod's arguments cannot apply:
``op`` must be Average (Adasum and Sum are errors), gradient-only knobs are accepted
and ignored with a warning, and the grouping arguments only split the fusion buffers.
"""
import warnings

from horovod_wagma.common.config import validate_state_averaging


def check_horovod_arguments(hvd, op, backward_passes_per_step, compression,
                            gradient_predivide_factor, average_optimizer_state="never"):
    """Raises ValueError for arguments WAGMA cannot honour; warns for no-ops."""
    if op is hvd.Adasum:
        raise ValueError("op=Adasum is not supported by DistributedWagmaOptimizer: WAGMA "
                         "averages models (op=Average)")
    if op is not hvd.Average:
        raise ValueError(f"DistributedWagmaOptimizer averages models; op must be "
                         f"hvd.Average, got {op!r}")
    if backward_passes_per_step <= 0:
        raise ValueError("backward_passes_per_step must be > 0")
    if compression not in (hvd.Compression.none, hvd.Compression.fp16):
        raise ValueError("compression must be hvd.Compression.none or hvd.Compression.fp16")
    if gradient_predivide_factor != 1.0:
        warnings.warn("gradient_predivide_factor has no effect: DistributedWagmaOptimizer "
                      "does not allreduce gradients")
    validate_state_averaging(average_optimizer_state)


def buckets_from_groups(groups, num_groups=0):
    """Horovod's ``groups=`` (or the older ``num_groups=``) as a fusion plan: a function
    from the ordered variable list to a list of buckets, or None for one bucket.

    An int K splits the variables into K contiguous buckets; a list of lists makes
    each list a bucket and every other variable a bucket of its own."""
    if groups is None and num_groups:
        groups = num_groups
    if groups is None or groups == 0:
        return None
    if isinstance(groups, int):
        if groups < 0:
            raise ValueError("groups must be a non-negative integer or a list of lists")

        def split(variables):
            k = min(groups, len(variables))
            size = -(-len(variables) // k)
            return [variables[i:i + size] for i in range(0, len(variables), size)]
        return split
    lists = [list(g) for g in groups]

    def explicit(variables):
        ids = {id(v) for g in lists for v in g}
        return [g for g in lists if g] + [[v] for v in variables if id(v) not in ids]
    return explicit


def fp16_correction_rule(global_round):
    """How an fp16-on-the-wire result is applied to the full-precision model x.

    Global rounds take the fp16 average itself, the same bytes on every rank; group
    rounds apply it as a correction, x + (avg16 - x16), keeping this rank's own
    full-precision residual. Returns "replace" or "correct"."""
    return "replace" if global_round else "correct"


# The optimizers' own defaults, chosen by the time-to-accuracy matrix (README,
# "Defaults"): they differ from init()'s op defaults ("fresh", blocking), which keep
# the op's normative semantics (DESIGN.md §3).
OPTIMIZER_AVERAGING = "local"


def optimizer_global_rounds(global_rounds, wait_avoiding):
    """The optimizers' global_rounds: as given, else wait-avoiding, unless group
    rounds wait for every member (wait_avoiding=False), which makes them blocking."""
    if global_rounds is not None:
        return global_rounds
    return "wait_avoiding" if wait_avoiding else "blocking"

