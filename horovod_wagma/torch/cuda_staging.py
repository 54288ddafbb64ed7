"""CudaStaging: CUDA tensors through pinned host memory, off the caller's stream.

The engine is host code: it reads inputs and writes results in host memory, and its
background thread never touches the GPU (a passive join contributes the stream's
published value, which is a host buffer). A CUDA call therefore goes

    caller's stream --event--> side stream: device-to-host copy into a pinned buffer
    --event--> the caller's thread waits for that one copy, then enqueues;
    engine round (host) --> synchronize: side stream waits for the caller's stream,
    host-to-device copy into the result --event--> the caller's current stream waits.

Why each step:
  * An event, not ``torch.cuda.synchronize()``: the copy must follow the kernels that
    produced the input, and nothing else on the device.
  * The caller's thread waits for the device-to-host copy (``Event.synchronize``)
    because the engine may read the input as soon as it is enqueued; it waits for no
    other GPU work.
  * The result copy is queued at ``synchronize`` after the caller's stream so far
    (the in-place variant overwrites a tensor the caller's kernels may still read),
    and the caller's current stream, not its thread, waits for it: the result is
    ready on that stream.
  * ``record_stream`` tells PyTorch's caching allocator that the side stream uses
    the input and the result, so a tensor the caller frees at once is not reused
    before the copies are done.

Pinned buffers are pooled per stream (name, device, dtype, element count). A call
takes a pair (input, output) that is idle: returned by an earlier call, and whose
host-to-device copy has finished. Two calls of one stream in flight at once get two
pairs. At most ``keep_per_stream`` idle pairs are kept.

``cuda`` is the CUDA API used (``torch.cuda``, plus ``record_stream`` and
``pin_memory``): tests on machines without a GPU pass a stand-in that records what
would be queued (tests/test_cuda_staging.py).
"""
import torch


class TorchCuda:
    """The calls CudaStaging makes, from torch."""
    pin_memory = True
    Event = torch.cuda.Event
    Stream = torch.cuda.Stream
    current_stream = staticmethod(torch.cuda.current_stream)
    current_device = staticmethod(torch.cuda.current_device)
    stream = staticmethod(torch.cuda.stream)

    @staticmethod
    def record_stream(tensor, stream):
        tensor.record_stream(stream)


class _PinnedPair:
    __slots__ = ("host_in", "host_out", "copied_back")

    def __init__(self, shape, dtype, pin_memory):
        self.host_in = torch.empty(shape, dtype=dtype, pin_memory=pin_memory)
        self.host_out = torch.empty(shape, dtype=dtype, pin_memory=pin_memory)
        self.copied_back = None  # event of the last host-to-device copy from host_out

    def idle(self):
        return self.copied_back is None or self.copied_back.query()


class StagedCall:
    """One CUDA call's staging: its pinned pair, and where the result goes."""

    __slots__ = ("_staging", "_key", "pair", "target")

    def __init__(self, staging, key, pair, target):
        self._staging, self._key, self.pair, self.target = staging, key, pair, target

    def finish(self):
        """After the engine wrote ``pair.host_out``: copies it into ``target`` on the
        side stream and makes the caller's current stream wait for the copy. Returns
        ``target``; the pair goes back to the pool."""
        cuda = self._staging.cuda
        device = self.target.device
        side = self._staging.side_stream(device)
        caller = cuda.current_stream(device)
        side.wait_stream(caller)
        with cuda.stream(side):
            self.target.copy_(self.pair.host_out, non_blocking=True)
            done = cuda.Event()
            done.record(side)
        cuda.record_stream(self.target, side)
        caller.wait_event(done)
        self.pair.copied_back = done
        self._staging.give_back(self._key, self.pair)
        return self.target

    def abandon(self):
        """The call failed: nothing to copy back; the engine no longer reads the pair."""
        self._staging.give_back(self._key, self.pair)


class CudaStaging:
    def __init__(self, keep_per_stream=2, cuda=TorchCuda):
        self.cuda = cuda
        self._keep = keep_per_stream
        self._idle = {}  # key -> [_PinnedPair]
        self._side = {}  # device index -> side stream

    def side_stream(self, device):
        index = device.index if device.index is not None else self.cuda.current_device()
        stream = self._side.get(index)
        if stream is None:
            stream = self._side[index] = self.cuda.Stream(device=index)
        return stream

    def stage_in(self, tensor, name, target):
        """Copies CUDA ``tensor`` (any strides) into a pinned host buffer and returns
        (host_in, host_out, StagedCall); the result will go to CUDA ``target``."""
        key = (name, tensor.device, tensor.dtype, tensor.numel())
        pair = self._take(key, tensor.shape, tensor.dtype)
        cuda = self.cuda
        side = self.side_stream(tensor.device)
        side.wait_stream(cuda.current_stream(tensor.device))
        with cuda.stream(side):
            pair.host_in.copy_(tensor, non_blocking=True)
            copied = cuda.Event()
            copied.record(side)
        cuda.record_stream(tensor, side)
        copied.synchronize()  # the engine may read host_in from now on
        return pair.host_in, pair.host_out, StagedCall(self, key, pair, target)

    def _take(self, key, shape, dtype):
        pool = self._idle.get(key, [])
        for i, pair in enumerate(pool):
            if pair.idle():
                pool.pop(i)
                pair.host_in = pair.host_in.view(shape)
                pair.host_out = pair.host_out.view(shape)
                return pair
        return _PinnedPair(shape, dtype, self.cuda.pin_memory)

    def give_back(self, key, pair):
        pool = self._idle.setdefault(key, [])
        if len(pool) < self._keep:
            pool.append(pair)
