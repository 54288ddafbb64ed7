"""Quasi-global momentum for Keras SGD (the rule and its derivation:
horovod_wagma/common/optimizer/quasi_global.py).

Keras 2's ``tf.keras.optimizers.SGD`` keeps a velocity v per variable x
(v <- beta * v - lr * g; x <- x + v, or the nesterov variant). Its velocity already
includes -lr, so the rule needs no division:

    v <- beta * v_old + (1 - beta) * (x_new - x)

where x and v_old are read before the wrapped step and x_new after WAGMA averaging.
Graph (``model.fit``) and eager mode alike: every read and write is a variable op,
ordered by TensorFlow's automatic control dependencies.
"""
import tensorflow as tf

from horovod_wagma.common.optimizer.quasi_global import check_momentum_sgd


class QuasiGlobalMomentum:
    @staticmethod
    def check(optimizer):
        """ValueError unless ``optimizer`` is a tf.keras.optimizers.SGD with
        momentum > 0."""
        is_sgd = isinstance(optimizer, tf.keras.optimizers.SGD)
        name = type(optimizer).__name__
        if isinstance(optimizer, tf.keras.optimizers.legacy.Optimizer):
            name = "tf.keras.optimizers.legacy." + name
        check_momentum_sgd(name, is_sgd,
                           [optimizer.momentum] if is_sgd else [],
                           "tf.keras.optimizers.SGD", "'never'")

    def snapshot(self, optimizer, all_variables, variables):
        """(variables, their velocities, x, v_old), read before the wrapped step."""
        with tf.init_scope():
            optimizer.build(all_variables)  # the velocities exist from the first step
        velocities = [optimizer.momentums[optimizer._index_dict[optimizer._var_key(x)]]
                      for x in variables]
        return (variables, velocities, [tf.identity(x) for x in variables],
                [tf.identity(v) for v in velocities])

    def rebuild(self, optimizer, snap):
        """Replaces the velocities by the rule, after averaging."""
        for x, v, x_old, v_old in zip(*snap):
            beta = tf.cast(optimizer.momentum, x.dtype)
            v.assign(beta * v_old + (1 - beta) * (tf.identity(x) - x_old))
