"""Horovod elastic for WAGMA with Keras: all of Horovod's Keras elastic API
(``CommitStateCallback``, ``UpdateBatchStateCallback``, ``UpdateEpochStateCallback``,
``KerasState``), a ``run`` that also resets on WAGMA's membership changes, and
``WagmaState``, a state object that never rolls back.

Horovod's Keras recipe, with one swap (``hvd`` is ``horovod_wagma.keras``, whose
``hvd.elastic`` is this module)::

    state = WagmaState(model, batch=0, epoch=0)       # was hvd.elastic.KerasState
    callbacks = [hvd.elastic.CommitStateCallback(state),
                 hvd.elastic.UpdateBatchStateCallback(state),
                 hvd.elastic.UpdateEpochStateCallback(state)]

    @hvd.elastic.run
    def train(state):
        model.fit(data, initial_epoch=state.epoch, epochs=epochs, callbacks=callbacks)

Why a ``run`` of our own: Horovod's TensorFlow ``run`` resets only on the errors of
Horovod's own ops. Inside ``model.fit`` the WAGMA op's "membership changed" reaches
Python as a ``tf.errors.AbortedError``; this ``run`` turns it into
``WagmaMembershipChanged`` (a ``HorovodInternalError``: Horovod resets) or, for
"fenced", ``WagmaFenced`` (the script ends), then defers to Horovod's.

What ``restore``, ``reset``, ``sync`` and ``commit`` do is common/elastic/elastic_state.py's.
The model averaged by ``sync()`` is ``model.variables`` (the floating ones), weights
and non-trainable statistics alike; optimizer slots (momentum) stay each rank's own
until the next global round averages them (``average_optimizer_state="on_sync"``, the
default). After a reset the model's
traced functions are dropped, so that the WAGMA ops are traced for the new member set.
"""
import functools

import horovod.tensorflow as _hvd_tf
import horovod.tensorflow.elastic as _hvd_tf_elastic
from horovod.tensorflow.keras.elastic import *  # noqa: F401,F403  (a drop-in superset)
import tensorflow as tf

from horovod_wagma.common.elastic.elastic_state import ElasticStateCore
from horovod_wagma.common.op.errors import engine_error
from horovod_wagma.tensorflow import ops

_ENGINE_VERDICTS = ("membership changed:", "fenced:")


def run(func):
    """Horovod's ``elastic.run``, which also resets on the WAGMA ops' membership
    changes (and ends the script on "fenced")."""
    @functools.wraps(func)
    def raising_wagma_errors(state, *args, **kwargs):
        try:
            return func(state, *args, **kwargs)
        except tf.errors.OpError as e:
            if any(v in e.message for v in _ENGINE_VERDICTS):
                raise engine_error(e.message) from e
            raise
    return _hvd_tf_elastic.run(raising_wagma_errors)


class WagmaState(ElasticStateCore):
    def __init__(self, model, optimizer=None, **kwargs):
        """Horovod's ``KerasState`` signature: ``optimizer`` defaults to the one
        compiled into the model."""
        self.model = model
        self.optimizer = optimizer if optimizer is not None else model.optimizer
        super().__init__(_hvd_tf, ops._basics, **kwargs)

    def _after_restart(self):
        # The traced train step holds the old member set's process-set sizes.
        self.model.train_function = None
        self.model.test_function = None
        self.model.predict_function = None

    def _floating_variables(self):
        return [v for v in self.model.variables if v.dtype.is_floating]

    def _broadcast_model(self, root_rank):
        _hvd_tf.broadcast_variables(self.model.variables, root_rank=root_rank)

    def _average_model(self, weight, survivors):
        variables = self._floating_variables()
        if not variables:
            return
        flat = tf.concat([tf.reshape(tf.cast(v, tf.float64), [-1]) for v in variables], 0)
        total = _hvd_tf.allreduce(flat * weight, op=_hvd_tf.Sum, name="wagma.elastic.average")
        mean = total / float(survivors)
        offset = 0
        for v in variables:
            n = int(tf.size(v))
            v.assign(tf.cast(tf.reshape(mean[offset:offset + n], v.shape), v.dtype))
            offset += n
