"""horovod_wagma.tensorflow: the whole horovod.tensorflow API plus WAGMA's group
allreduce for TF tensors.

    import horovod_wagma.tensorflow as hvd
    hvd.init(group_size=4, sync_period=10)
    y = hvd.group_allreduce(x, name="w")          # eager or inside tf.function
"""
from horovod_wagma.common.op.frameworks import require_modules

require_modules("horovod_wagma.tensorflow", {"tensorflow": "tensorflow"})

from horovod.tensorflow import *  # noqa: E402,F401,F403  (re-export: a drop-in superset)

from horovod_wagma.common.op.errors import WagmaError
from horovod_wagma.common.op.schedule import default_group_size, groups, optimizer_group_size
from horovod_wagma.tensorflow.ops import (GroupAllreduceHandle, group_allreduce,
                                          group_allreduce_async, group_process_set, init,
                                          join, poll, stats, synchronize)
