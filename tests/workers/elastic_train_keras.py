"""The Keras twin of elastic_train.py: Horovod's Keras elastic recipe (``model.fit``
inside ``hvd.elastic.run``, ``CommitStateCallback``) with ``horovod_wagma.keras``'s
``WagmaState`` in place of ``KerasState``, a metric allreduce every 10 steps (a Horovod
collective mid-run, from a callback) and a commit every 5. It logs the same records
(elastic_train.py's docstring). argv: total steps, seconds of sleep per step.
"""
import os
import sys
import time

STARTED = time.time()  # before the heavy imports: where a joiner's seconds go

import horovod_wagma.keras as hvd  # noqa: E402  (imports TensorFlow with Keras 2)
import horovod.tensorflow as hvd_tf  # noqa: E402
import horovod.tensorflow.elastic as hvd_tf_elastic  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from horovod_wagma.common.elastic import membership  # noqa: E402
from elastic_log import log, logged_state, timed  # noqa: E402

TOTAL = int(sys.argv[1])
STEP_S = float(sys.argv[2])


def flat(model):
    return np.concatenate([v.numpy().ravel() for v in model.variables]).tolist()


LoggedState = logged_state(hvd.elastic.WagmaState, hvd, flat,
                           lambda: membership.MEMBERSHIP.was_survivor)


class StepLog(tf.keras.callbacks.Callback):
    """The script's own per-batch work: a slow step, the step record, a metric."""

    def __init__(self, state):
        super().__init__()
        self.state = state

    def on_train_batch_begin(self, batch, logs=None):
        time.sleep(STEP_S)

    def on_train_batch_end(self, batch, logs=None):
        self.state.step += 1
        log(kind="step", step=self.state.step, rank=hvd.rank(), size=hvd.size())
        if self.state.step % 10 == 0:
            hvd_tf.allreduce(tf.constant([float(self.state.step)]), name="metric")


hvd_tf_elastic.shutdown = timed("shutdown", hvd_tf_elastic.shutdown)
hvd_tf_elastic.init = timed("init", hvd_tf_elastic.init)
imported = time.time()
tf.config.threading.set_intra_op_parallelism_threads(1)  # before TF's context exists
hvd.init()
log(kind="start", started=STARTED, imported=imported)
tf.random.set_seed(hvd.rank())
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
model.compile(optimizer=hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05)),
              loss="mse")
rng = np.random.default_rng(1000 + os.getpid())
x = rng.standard_normal((1024, 4)).astype(np.float32)
y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]], dtype=np.float32)
data = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)
state = LoggedState(model, step=0)
callbacks = [StepLog(state), hvd.elastic.CommitStateCallback(state, batches_per_commit=5)]


@hvd.elastic.run
def train(state):
    if state.step < TOTAL:
        model.fit(data, steps_per_epoch=TOTAL - state.step, epochs=1, callbacks=callbacks,
                  verbose=0)


log(kind="ready")  # the script's own setup done (imports, model, optimizer)
train(state)
model.optimizer.join()
log(kind="done", rank=hvd.rank(), size=hvd.size(), step=state.step, stats=hvd.stats(),
    changes=hvd.membership_changes())
