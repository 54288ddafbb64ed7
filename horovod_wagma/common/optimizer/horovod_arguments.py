"""Checks of Horovod's DistributedOptimizer arguments, for both frameworks.

WAGMA averages models, not gradients, so some of Horovod's arguments cannot apply:
``op`` must be Average (Adasum and Sum are errors), gradient-only knobs are accepted
and ignored with a warning, and the grouping arguments only split the fusion buffers
(fusion_plan.py). The checks read the arguments alone, so every rank raises alike.
"""
import warnings


def check_horovod_arguments(hvd, op, backward_passes_per_step, compression,
                            gradient_predivide_factor):
    """Raises ValueError for arguments WAGMA cannot honour; warns for no-ops.
    ``hvd``: the framework's Horovod module (its Average, Adasum and Compression)."""
    if op is hvd.Adasum:
        raise ValueError("op=Adasum is not supported by DistributedWagmaOptimizer: WAGMA "
                         "averages models (op=Average)")
    if op is not hvd.Average:
        raise ValueError(f"DistributedWagmaOptimizer averages models; op must be "
                         f"hvd.Average, got {op!r}")
    check_backward_passes(backward_passes_per_step)
    if compression not in (hvd.Compression.none, hvd.Compression.fp16):
        raise ValueError("compression must be hvd.Compression.none or hvd.Compression.fp16")
    if gradient_predivide_factor != 1.0:
        warnings.warn("gradient_predivide_factor has no effect: DistributedWagmaOptimizer "
                      "does not allreduce gradients")


def check_backward_passes(backward_passes_per_step):
    if backward_passes_per_step <= 0:
        raise ValueError("backward_passes_per_step must be > 0")
