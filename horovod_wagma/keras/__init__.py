"""horovod_wagma.keras: the whole horovod.tensorflow.keras API plus WAGMA's
DistributedWagmaOptimizer and callbacks.

Horovod's Keras support needs Keras 2 (the ``tf_keras`` package). Importing this
module before TensorFlow makes ``tf.keras`` resolve to it (it sets
``TF_USE_LEGACY_KERAS=1``). If TensorFlow already handed out Keras 3 as ``tf.keras``,
the import fails with an error that says how to fix it.
"""
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def _check_keras_2():
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return
    keras = tf.keras  # resolves now, honouring TF_USE_LEGACY_KERAS if not resolved yet
    if not keras.__name__.startswith("tf_keras"):
        raise ImportError(
            "horovod_wagma.keras needs Keras 2 (tf_keras), but tf.keras is already Keras 3 "
            "in this process. Import horovod_wagma.keras before tensorflow, or set "
            "TF_USE_LEGACY_KERAS=1 in the environment before starting Python (and "
            "pip install tf-keras).")


from horovod_wagma.common.op.frameworks import require_modules  # noqa: E402

# Before TensorFlow is imported: tf_keras must exist for TF_USE_LEGACY_KERAS to work.
require_modules("horovod_wagma.keras", {"tensorflow": "tensorflow", "tf_keras": "tf-keras"})
_check_keras_2()

from horovod.tensorflow.keras import *  # noqa: E402,F401,F403  (a drop-in superset)

from horovod_wagma.common.op.errors import WagmaError  # noqa: E402,F401
from horovod_wagma.common.optimizer.checkpoint import CheckpointMismatch  # noqa: E402,F401
from horovod_wagma.common.elastic.membership import membership_changes  # noqa: E402,F401
from horovod_wagma.common.op.schedule import default_group_size, groups, optimizer_group_size  # noqa: E402,F401
# Replaces the `callbacks` that the star import bound to Horovod's module: ours
# re-exports all of Horovod's callbacks and adds WAGMA's.
import horovod_wagma.keras.callbacks  # noqa: E402,F401
callbacks = sys.modules["horovod_wagma.keras.callbacks"]
# Likewise `elastic`: Horovod's Keras elastic API, a run that resets on WAGMA's
# membership changes too, and WagmaState.
import horovod_wagma.keras.elastic  # noqa: E402,F401
elastic = sys.modules["horovod_wagma.keras.elastic"]
from horovod_wagma.keras.optimizer import DistributedWagmaOptimizer  # noqa: E402,F401
from horovod_wagma.keras.balanced_sequence import BalancedSequence  # noqa: E402,F401
from horovod_wagma.tensorflow.ops import (group_allreduce, group_allreduce_async,  # noqa: E402,F401
                                          group_process_set, init, join, poll, stats,
                                          synchronize)
