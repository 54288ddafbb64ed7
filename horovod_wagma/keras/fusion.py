"""Fusion for TF variables: one flat tensor per dtype (or per bucket and dtype), so
that one group allreduce averages a whole model. The TF counterpart of
horovod_wagma/torch/fusion.py; the bucket plan itself is shared
(horovod_wagma/common/optimizer/fusion_plan.py)."""
import tensorflow as tf

from horovod_wagma.common.optimizer.fusion_plan import FusionPlan
from horovod_wagma.tensorflow import ops


def dtype_buckets(variables, plan=None):
    """Lists of variables that share a dtype, in order: per plan bucket, per dtype."""
    return FusionPlan.by_kind((plan or FusionPlan()).buckets(variables),
                              lambda v: v.dtype.name)


def pack(variables):
    return tf.concat([tf.reshape(v, [-1]) for v in variables], axis=0)


def unpack_assign(variables, flat):
    sizes = [int(tf.size(v)) if v.shape.num_elements() is None else v.shape.num_elements()
             for v in variables]
    for v, part in zip(variables, tf.split(flat, sizes)):
        v.assign(tf.reshape(part, v.shape))


def average_globally(variables, stream_name, knobs):
    """Averages the floating-point ``variables`` through streams whose every round is
    global (``knobs``, e.g. optimizer_core.BLOCKING_GLOBAL: exact and identical on
    every rank); ``stream_name(i)`` names the i-th dtype's stream."""
    floating = [v for v in variables if v.dtype.is_floating]
    for i, bucket in enumerate(dtype_buckets(floating)):
        averaged = ops.group_allreduce(pack(bucket), name=stream_name(i), **knobs)
        unpack_assign(bucket, averaged)
