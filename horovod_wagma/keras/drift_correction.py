"""Drift correction for Keras optimizers: the control variates of
common/optimizer/drift_policy.py, learnt at the "on_sync" global rounds (keras/state_averaging.py)
from the first moment, read before the state's round and sent on the "drift" stream
(rule "delta": moves that sum to zero over the ranks); the PyTorch counterpart is
torch/drift_correction.py, its derivation docs/design.md §3.

The moment's scale k (gradient units per moment unit), per tf_keras optimizer:
- SGD with momentum beta keeps a velocity v <- beta v - lr g (x <- x + v), so
  v ~ -lr g / (1 - beta) and k = -(1 - beta) / lr, with lr the current learning rate
  (a schedule's too: tf_keras keeps it in a variable);
- Adam, AdamW and Nadam keep m <- beta_1 m + (1 - beta_1) g: k = 1.

Every read and write is a variable op, so graph mode (model.fit) and eager loops
alike; the variates are created once, outside any tf.function (tf.init_scope).
"""
import tensorflow as tf

from horovod_wagma.keras.fusion import pack
from horovod_wagma.tensorflow import ops

_ADAM_FAMILY = ("Adam", "AdamW", "Nadam")


def is_adam_family(optimizer):
    return any(isinstance(optimizer, getattr(tf.keras.optimizers, n)) for n in _ADAM_FAMILY)


def check_moment(optimizer):
    """ValueError naming ``optimizer`` unless it keeps a first moment
    (tf.keras.optimizers.SGD with momentum > 0, or Adam, AdamW, Nadam)."""
    name = type(optimizer).__name__
    if isinstance(optimizer, tf.keras.optimizers.SGD):
        if float(optimizer.momentum) <= 0:
            raise ValueError(f"drift_correction needs momentum > 0 in {name}")
        return
    if not is_adam_family(optimizer):
        raise ValueError("drift_correction needs tf.keras.optimizers.SGD with momentum or "
                         f"Adam, AdamW or Nadam (a first moment); got {name}")


class DriftCorrection:
    def __init__(self, alpha, core):
        """``alpha`` in (0, 1]; ``core``: the optimizer's OptimizerCore (stream names
        and knobs)."""
        self._alpha = float(alpha)
        self._core = core
        self._c = {}   # variable's key -> its control variate
        # Variates a checkpoint restored before they were created (flat, float64).
        self._pending = None

    @staticmethod
    def _key(variable):
        return variable.ref()

    def create_variates(self, variables):
        """A zero control variate per variable, created once outside any graph."""
        with tf.init_scope():
            for v in variables:
                if self._key(v) not in self._c:
                    self._c[self._key(v)] = tf.Variable(
                        tf.zeros(v.shape, v.dtype), trainable=False,
                        name="wagma_drift_" + v.name.split(":")[0].replace("/", "_"))
            if self._pending is not None:
                self.restore_flat(self._pending)

    def flat_variates(self):
        """This rank's variates, flat in float64 (exact for every float dtype), in the
        order they were created (the model's, the same on every rank)."""
        if not self._c:
            return tf.zeros([0], tf.float64)
        return tf.concat([tf.reshape(tf.cast(c, tf.float64), [-1]) for c in self._c.values()], 0)

    def restore_flat(self, flat):
        """The variates from ``flat`` (flat_variates' layout; None: zero), now or, if
        they do not exist yet, when they are created."""
        if not self._c:
            self._pending = flat
            return
        self._pending = None
        sizes = [c.shape.num_elements() for c in self._c.values()]
        if flat is not None and len(flat) != sum(sizes):
            raise ValueError(f"the checkpoint holds {len(flat)} drift variate values for "
                             f"this rank; the model has {sum(sizes)}")
        offset = 0
        for c, n in zip(self._c.values(), sizes):
            part = tf.zeros(c.shape, c.dtype) if flat is None else \
                tf.cast(tf.reshape(flat[offset:offset + n], c.shape), c.dtype)
            c.assign(part)
            offset += n

    def variate(self, variable):
        return self._c[self._key(variable)]

    def correct_gradients(self, grads_and_vars):
        """g_i <- g_i + c_i, before the wrapped optimizer's step (a sparse gradient
        becomes dense: c_i is)."""
        return [(g if g is None else tf.convert_to_tensor(g) + self.variate(v), v)
                for g, v in grads_and_vars]

    @staticmethod
    def _moments(optimizer, variables):
        """[(variable, its first moment, k)]."""
        if isinstance(optimizer, tf.keras.optimizers.SGD):
            slots = optimizer.momentums
            k = -(1.0 - tf.cast(optimizer.momentum, tf.float32)) / tf.cast(
                optimizer.learning_rate, tf.float32)
        else:
            slots, k = optimizer._momentums, tf.constant(1.0)
        return [(v, slots[optimizer._index_dict[optimizer._var_key(v)]], k)
                for v in variables]

    def before_average(self, optimizer, variables):
        """This rank's moments, read before a global round averages them."""
        return [(v, m, k, tf.identity(m)) for v, m, k in self._moments(optimizer, variables)]

    def after_average(self, before):
        """c_i <- c_i + alpha k (m̄ - m_i), with m̄ - m_i the move of the moments read
        before the state's round, sent on the drift stream (rule "delta")."""
        by_dtype = {}
        for entry in before:
            by_dtype.setdefault(entry[3].dtype.name, []).append(entry)
        for i, entries in enumerate(by_dtype.values()):
            sent = pack([old_m for _, _, _, old_m in entries])
            moves = ops.group_allreduce(sent, name=self._core.names.stream("drift", i),
                                        **self._core.drift_stream_knobs()) - sent
            parts = tf.split(moves, [old_m.shape.num_elements() for *_, old_m in entries])
            for (v, _, k, old_m), part in zip(entries, parts):
                c = self.variate(v)
                c.assign_add(tf.cast(self._alpha * k, c.dtype) * tf.reshape(part, c.shape))
