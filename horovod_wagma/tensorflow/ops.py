"""The WAGMA group allreduce for TensorFlow tensors (semantics: docs/design.md §2).

``group_allreduce`` is the custom op (an async kernel): it works eagerly and inside
``tf.function``, where TensorFlow runs it without holding a thread while the round
waits. ``group_allreduce_async`` returns a handle at once (eager mode only; inside a
``tf.function`` TensorFlow already schedules ``group_allreduce`` asynchronously).
"""
import os

import horovod.tensorflow as _hvd
import numpy as np
import tensorflow as tf

from horovod_wagma.common.op import engine_lib
from horovod_wagma.common.op.basics import WagmaBasics
from horovod_wagma.common.op.config import call_knobs
from horovod_wagma.common.op.errors import WagmaError
from horovod_wagma.common.op.frameworks import tf_op_library
from horovod_wagma.common.op.stats import stream_stats

_basics = WagmaBasics(_hvd)
_op_lib = tf.load_op_library(tf_op_library(os.path.dirname(os.path.abspath(__file__))))

init = _basics.init
group_process_set = _basics.group_process_set
join = _basics.join
stats = stream_stats
_DTYPE_NAMES = {tf.float32: "float32", tf.float64: "float64", tf.float16: "float16",
                tf.bfloat16: "bfloat16"}


def _prepare(tensor, name, process_set, knobs):
    tensor = tf.convert_to_tensor(tensor)
    name, fields, members = _basics.prepare_call(
        tensor.dtype in _DTYPE_NAMES, tensor.dtype.name, name, process_set, **knobs)
    return tensor, name, fields, members


def group_allreduce(tensor, name=None, group_size=None, sync_period=None, averaging=None,
                    wait_avoiding=None, process_set=None, global_rounds=None,
                    max_staleness=None, return_round=False):
    """Round r of stream ``name`` with fresh input ``tensor``; returns the result.

    Same arguments and semantics as ``horovod_wagma.torch.group_allreduce``. Inside a
    ``tf.function`` each execution of the op is one round; give streams a ``name``.
    With ``return_round=True`` returns ``(result, round)``: the round that served the
    call (an int64 scalar tensor), later than the call count when a lagging app
    skipped rounds (``global_rounds="wait_avoiding"``).
    """
    tensor, name, fields, members = _prepare(tensor, name, process_set, call_knobs(locals()))
    size, sync_period, averaging, wait_avoiding, global_rounds, max_staleness = fields
    result, served = _op_lib.wagma_group_allreduce(
        tensor, stream_name=name, group_size=size, sync_period=sync_period,
        averaging=averaging, wait_avoiding=bool(wait_avoiding),
        global_rounds=global_rounds, max_staleness=max_staleness, members=members)
    return (result, served) if return_round else result


class GroupAllreduceHandle:
    """A pending eager-mode group allreduce; keeps its host buffers alive."""

    __slots__ = ("_id", "_input", "_output", "_dtype", "_result", "round")

    def __init__(self, handle_id, host_input, host_output, dtype):
        self._id, self._input, self._output, self._dtype = (handle_id, host_input,
                                                            host_output, dtype)
        self._result = None
        self.round = None  # after synchronize: the round that served the call


def group_allreduce_async(tensor, name=None, group_size=None, sync_period=None,
                          averaging=None, wait_avoiding=None, process_set=None,
                          global_rounds=None, max_staleness=None):
    """Eager mode: starts the round and returns a handle for ``synchronize``/``poll``."""
    if not tf.executing_eagerly():
        raise WagmaError("group_allreduce_async works in eager mode only; inside "
                         "tf.function use group_allreduce, which TensorFlow already runs "
                         "asynchronously")
    tensor, name, fields, members = _prepare(tensor, name, process_set, call_knobs(locals()))
    dtype = _DTYPE_NAMES[tensor.dtype]
    # bfloat16 has no NumPy dtype of its own: move its bits as uint16.
    host_in = np.require(  # not ascontiguousarray: that makes a 0-d array 1-d
        tf.bitcast(tensor, tf.uint16).numpy() if dtype == "bfloat16" else tensor.numpy(),
        requirements="C")
    host_out = np.empty_like(host_in)
    handle_id = engine_lib.enqueue(name, dtype, list(host_in.shape),
                                   host_in.ctypes.data, host_out.ctypes.data, fields,
                                   members)
    return GroupAllreduceHandle(handle_id, host_in, host_out, tensor.dtype)


def poll(handle):
    """True when ``synchronize(handle)`` will not block."""
    return handle._result is not None or engine_lib.poll(handle._id)


def synchronize(handle):
    """Waits for ``handle`` and returns the result as a tf.Tensor."""
    if handle._result is None:
        handle.round = engine_lib.wait(handle._id)
        out = tf.constant(handle._output)
        handle._result = tf.bitcast(out, tf.bfloat16) if handle._dtype == tf.bfloat16 else out
        handle._input = handle._output = None
    return handle._result
