"""Fusion for TF variables: one flat tensor per dtype (or per bucket and dtype), so
that one group allreduce averages a whole model. The TF counterpart of
horovod_wagma/torch/fusion.py; the bucket plan itself is shared
(horovod_wagma/common/optimizer_args.py)."""
import tensorflow as tf


def dtype_buckets(variables, plan=None):
    """Lists of variables that share a dtype, in order: per plan bucket, per dtype."""
    buckets = plan(list(variables)) if plan else [list(variables)]
    out = []
    for bucket in buckets:
        by_dtype = {}
        for v in bucket:
            by_dtype.setdefault(v.dtype.name, []).append(v)
        out.extend(by_dtype[k] for k in sorted(by_dtype))
    return out


def pack(variables):
    return tf.concat([tf.reshape(v, [-1]) for v in variables], axis=0)


def unpack_assign(variables, flat):
    sizes = [int(tf.size(v)) if v.shape.num_elements() is None else v.shape.num_elements()
             for v in variables]
    for v, part in zip(variables, tf.split(flat, sizes)):
        v.assign(tf.reshape(part, v.shape))
