"""The WAGMA group allreduce for torch tensors (semantics: docs/design.md §2).

``group_allreduce_async`` returns at once with a handle; ``synchronize`` waits for the
result and ``poll`` tells whether it is ready. Non-contiguous host tensors are staged
through contiguous ones. CUDA tensors go through pinned host buffers on a side stream
(cuda_staging.py); their result is ready on the stream current at ``synchronize``.
"""

import horovod.torch as _hvd
import torch

from horovod_wagma.common.op.basics import WagmaBasics
from horovod_wagma.common.op.config import call_knobs
from horovod_wagma.common.op.errors import WagmaError, engine_error
from horovod_wagma.common.op.stats import stream_stats
from horovod_wagma.torch import _torch_ops



def _horovod_join_async(device):
    """Horovod's torch join as a handle (what ``hvd.join`` does, without blocking):
    (done(), result()). join() polls it beside the engine's join (join_both.py)."""
    from horovod.common.exceptions import HorovodInternalError
    from horovod.torch import mpi_ops
    output = torch.tensor(-1, dtype=torch.int, device=torch.device("cpu"))
    try:
        handle = mpi_ops.mpi_lib.horovod_torch_join(output, device)
    except RuntimeError as e:
        raise HorovodInternalError(e)
    mpi_ops._handle_map[handle] = (None, output)
    return (lambda: mpi_ops.poll(handle)), (lambda: mpi_ops.synchronize(handle).item())


_basics = WagmaBasics(_hvd, _horovod_join_async)
# The engine reads inputs and writes outputs until a round completes, even when the
# caller drops the handle: keep those tensors alive until synchronize (as Horovod's
# _handle_map does).
_pending_tensors = {}

init = _basics.init
group_process_set = _basics.group_process_set
join = _basics.join
stats = stream_stats


class GroupAllreduceHandle:
    """A pending group allreduce. Keeps the tensors the engine writes into alive.

    After ``synchronize``, ``round`` is the round of the stream that served the call.
    It is the call's own number, except with ``global_rounds="wait_avoiding"``, where a
    lagging app skips the rounds its engine already served while it computed, and is
    served by the newest of them."""

    __slots__ = ("_id", "_host_output", "_target", "_cuda", "_result", "_error", "round")

    def __init__(self, handle_id, host_input, host_output, target, cuda=None):
        self._id = handle_id
        _pending_tensors[handle_id] = (host_input, host_output)
        self._host_output = host_output
        self._target = target  # where the caller wants the result, if not host_output
        self._cuda = cuda  # a CUDA call's StagedCall: it copies the result back
        self._result = None
        self._error = None
        self.round = None

    def _finish(self):
        if self._result is None and self._error is None:
            # A KeyboardInterrupt out of wait() leaves the round pending: the engine
            # still reads the input and writes the output, so the tensors stay in
            # _pending_tensors until a later synchronize sees the round end.
            try:
                self.round = _torch_ops.wait(self._id)
            except RuntimeError as e:
                _pending_tensors.pop(self._id, None)
                self._error = engine_error(str(e))
                if self._cuda is not None:
                    self._cuda.abandon()
            else:
                _pending_tensors.pop(self._id, None)
                if self._cuda is not None:
                    self._result = self._cuda.finish()
                elif self._target is not None:
                    self._target.copy_(self._host_output)
                    self._result = self._target
                else:
                    self._result = self._host_output
        if self._error is not None:
            raise self._error
        return self._result


_SUPPORTED_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _enqueue(tensor, output, name, process_set, knobs):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"group_allreduce expects a torch.Tensor, got {type(tensor).__name__}")
    if tensor.device.type not in ("cpu", "cuda"):
        raise ValueError(f"group_allreduce supports CPU and CUDA tensors, not "
                         f"{tensor.device.type} ones")
    name, fields, members = _basics.prepare_call(
        tensor.dtype in _SUPPORTED_DTYPES, str(tensor.dtype), name, process_set, **knobs)
    src = tensor.detach()
    if src.is_cuda:
        host_in, host_out, staged_call = _cuda_staging().stage_in(src, name, output)
        handle_id = _torch_ops.enqueue(host_in, host_out, name, fields, members)
        return GroupAllreduceHandle(handle_id, host_in, host_out, None, staged_call)
    host_in = src.contiguous()
    staged = not output.is_contiguous()
    host_out = torch.empty(host_in.shape, dtype=host_in.dtype) if staged else output
    handle_id = _torch_ops.enqueue(host_in, host_out, name, fields, members)
    return GroupAllreduceHandle(handle_id, host_in, host_out, output if staged else None)


_staging = None


def _cuda_staging():
    global _staging
    if _staging is None:
        from horovod_wagma.torch.cuda_staging import CudaStaging
        _staging = CudaStaging()
    return _staging


def group_allreduce_async(tensor, name=None, group_size=None, sync_period=None,
                          averaging=None, wait_avoiding=None, process_set=None,
                          global_rounds=None, max_staleness=None):
    """Starts round r of stream ``name`` with fresh input ``tensor``; returns a handle.

    ``process_set`` (a registered Horovod ProcessSet) restricts the stream to its
    ranks: groups are formed among them. The result lands in a new tensor. As with
    Horovod's async ops, do not modify ``tensor`` until the handle is synchronized.
    Per-call knobs override ``init``'s defaults and must match across ranks (checked
    at the stream's round 0, and at later rounds through the activations).
    ``global_rounds="wait_avoiding"`` makes global rounds wait-avoiding too; then the
    handle's ``round`` tells which round served the call (see GroupAllreduceHandle).
    """
    # A non-tensor gets _enqueue's TypeError, not torch.empty's.
    output = torch.empty(tensor.shape, dtype=tensor.dtype, device=tensor.device) \
        if isinstance(tensor, torch.Tensor) else None
    return _enqueue(tensor, output, name, process_set, call_knobs(locals()))


def group_allreduce_async_(tensor, name=None, group_size=None, sync_period=None,
                           averaging=None, wait_avoiding=None, process_set=None,
                           global_rounds=None, max_staleness=None):
    """In-place ``group_allreduce_async``: the result is written back into ``tensor``."""
    return _enqueue(tensor, tensor, name, process_set, call_knobs(locals()))


def group_allreduce(tensor, name=None, group_size=None, sync_period=None, averaging=None,
                    wait_avoiding=None, process_set=None, global_rounds=None,
                    max_staleness=None):
    """Blocking ``group_allreduce_async``: returns the result tensor."""
    return synchronize(group_allreduce_async(tensor, name, process_set=process_set,
                                             **call_knobs(locals())))


def group_allreduce_(tensor, name=None, group_size=None, sync_period=None, averaging=None,
                     wait_avoiding=None, process_set=None, global_rounds=None,
                     max_staleness=None):
    """Blocking in-place group allreduce; returns ``tensor``."""
    return synchronize(group_allreduce_async_(tensor, name, process_set=process_set,
                                              **call_knobs(locals())))


def _check_handle(handle):
    if not isinstance(handle, GroupAllreduceHandle):
        raise TypeError("expected a handle from group_allreduce_async, got "
                        f"{type(handle).__name__}")


def poll(handle):
    """True when the result of ``handle`` is ready (``synchronize`` will not block)."""
    _check_handle(handle)
    if handle._result is not None or handle._error is not None:
        return True
    return _torch_ops.poll(handle._id)


def synchronize(handle):
    """Waits for ``handle`` and returns the result tensor; raises WagmaError on failure."""
    _check_handle(handle)
    return handle._finish()
