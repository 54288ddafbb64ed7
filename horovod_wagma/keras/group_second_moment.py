"""The group's second moment for Keras's Adam family (``second_moment="group"``): the
TF counterpart of horovod_wagma/torch/group_second_moment.py, whose docstring states
the math. Each bucket's gradients ride its model round (appended to the flat buffer);
after the round each variable's second moment (the optimizer's ``_velocities`` slot)
moves by (1 - beta_2)(g_G^2 - g_i^2), floored at 0.
"""
import tensorflow as tf

from horovod_wagma.common.optimizer import second_moment_policy
from horovod_wagma.keras.drift_correction import is_adam_family
from horovod_wagma.keras.fusion import pack


def resolve(mode, optimizer):
    """second_moment's value for ``optimizer`` (common/optimizer/second_moment_policy.py)."""
    return second_moment_policy.resolve(mode, is_adam_family(optimizer),
                                        type(optimizer).__name__, "Adam, AdamW, Nadam")


def attach(flat, grads):
    """(the model buffer ``flat`` with this rank's gradients appended, those gradients
    flat); ``grads``: the bucket's gradients, dense, in its order and dtype."""
    own = pack([tf.cast(tf.convert_to_tensor(g), flat.dtype) for g in grads])
    return tf.concat([flat, own], axis=0), own


def detach_and_correct(optimizer, bucket, combined, own):
    """The averaged model part of ``combined``; moves each variable's second moment to
    the group's mean gradient's."""
    n = tf.size(own)
    model, mean = combined[:-n], combined[-n:]
    # Squares in float32 at least (half types), float64 kept.
    wide = tf.float64 if own.dtype == tf.float64 else tf.float32
    # tf.cast(0.999, tf.float64) would round through float32 first.
    beta_2 = tf.cast(tf.convert_to_tensor(optimizer.beta_2, dtype_hint=wide), wide)
    move = tf.square(tf.cast(mean, wide)) - tf.square(tf.cast(own, wide))
    sizes = [v.shape.num_elements() for v in bucket]
    for var, part in zip(bucket, tf.split(move, sizes)):
        velocity = optimizer._velocities[optimizer._index_dict[optimizer._var_key(var)]]
        delta = tf.cast((1.0 - beta_2) * tf.reshape(part, velocity.shape), velocity.dtype)
        velocity.assign(tf.maximum(velocity + delta, tf.zeros_like(velocity)))
    return model
