"""CudaStaging's ordering and buffer reuse, on a machine without a GPU: a stand-in for
the CUDA API records what would be queued on which stream, and events complete when
the test says so. CPU tensors stand in for device tensors (the copies run at once).
What this proves: the order of waits and copies, that the caller's thread blocks only
on its own input copy, and that a pinned pair is never handed out while a round can
still read it or its result copy can still read it. The CUDA semantics themselves are
tests/test_cuda.py's, on a GPU."""
import contextlib

import torch

from horovod_wagma.torch.cuda_staging import CudaStaging


class FakeCuda:
    pin_memory = False

    def __init__(self):
        self.log = []
        self.events = 0
        self.caller = self.Stream(device=0, name="caller")
        fake = self

        class Event:
            def __init__(self):
                self.done = False
                self.name = f"event{fake.events}"
                fake.events += 1

            def record(self, stream):
                fake.log.append(("record", self.name, stream.name))

            def query(self):
                return self.done

            def synchronize(self):
                fake.log.append(("host waits", self.name))
                self.done = True

        self.Event = Event

    def Stream(self, device, name="side"):
        fake = self

        class Stream:
            def wait_stream(self, other):
                fake.log.append(("wait_stream", self.name, other.name))

            def wait_event(self, event):
                fake.log.append(("wait_event", self.name, event.name))
        s = Stream()
        s.name = name
        return s

    def current_stream(self, device=None):
        return self.caller

    def current_device(self):
        return 0

    @contextlib.contextmanager
    def stream(self, s):
        self.log.append(("enter", s.name))
        yield
        self.log.append(("leave", s.name))

    def record_stream(self, tensor, stream):
        self.log.append(("record_stream", stream.name))


def test_input_copy_follows_the_callers_stream_and_blocks_only_on_itself():
    cuda = FakeCuda()
    staging = CudaStaging(cuda=cuda)
    x = torch.arange(12.0).view(3, 4).t()  # non-contiguous
    host_in, host_out, call = staging.stage_in(x, "w", torch.empty(4, 3))
    assert torch.equal(host_in, x) and host_in.is_contiguous()
    assert cuda.log == [("wait_stream", "side", "caller"), ("enter", "side"),
                        ("record", "event0", "side"), ("leave", "side"),
                        ("record_stream", "side"), ("host waits", "event0")]


def test_result_copy_is_queued_after_the_caller_and_the_caller_stream_waits():
    cuda = FakeCuda()
    staging = CudaStaging(cuda=cuda)
    target = torch.zeros(5)
    _, host_out, call = staging.stage_in(torch.ones(5), "w", target)
    cuda.log.clear()
    host_out.fill_(7.0)  # what the engine wrote
    assert call.finish() is target
    assert torch.equal(target, torch.full((5,), 7.0))
    assert cuda.log == [("wait_stream", "side", "caller"), ("enter", "side"),
                        ("record", "event1", "side"), ("leave", "side"),
                        ("record_stream", "side"), ("wait_event", "caller", "event1")]
    # The thread never waits on the result copy: the stream does.
    assert not any(e[0] == "host waits" for e in cuda.log)


def test_a_pair_is_reused_only_once_idle():
    cuda = FakeCuda()
    staging = CudaStaging(cuda=cuda)
    a_in, a_out, a = staging.stage_in(torch.ones(3), "w", torch.empty(3))
    b_in, b_out, b = staging.stage_in(torch.ones(3), "w", torch.empty(3))
    # Two calls in flight: two pairs.
    assert a_in.data_ptr() != b_in.data_ptr() and a_out.data_ptr() != b_out.data_ptr()
    a.finish()
    # a's result copy has not run yet: its host_out may still be read, so a new pair.
    c_in, c_out, c = staging.stage_in(torch.ones(3), "w", torch.empty(3))
    assert c_out.data_ptr() not in (a_out.data_ptr(), b_out.data_ptr())
    a.pair.copied_back.done = True
    d_in, d_out, d = staging.stage_in(torch.ones(3), "w", torch.empty(3))
    assert d_out.data_ptr() == a_out.data_ptr()
    # Another stream of the same size never shares the pool.
    e_in, e_out, e = staging.stage_in(torch.ones(3), "other", torch.empty(3))
    assert e_out.data_ptr() not in (a_out.data_ptr(), b_out.data_ptr(), c_out.data_ptr())


def test_failed_calls_return_their_pair_and_the_pool_is_bounded():
    cuda = FakeCuda()
    staging = CudaStaging(keep_per_stream=2, cuda=cuda)
    calls = [staging.stage_in(torch.ones(2), "w", torch.empty(2))[2] for _ in range(4)]
    for c in calls:
        c.abandon()  # nothing to copy back
    assert not any(e[0] == "wait_event" for e in cuda.log)
    pool = staging._idle[("w", torch.device("cpu"), torch.float32, 2)]
    assert len(pool) == 2 and all(p.idle() for p in pool)
    again = staging.stage_in(torch.ones(2), "w", torch.empty(2))[2]
    assert again.pair in (calls[0].pair, calls[1].pair)
    # docs/gpu.md: "at most two idle pairs are kept per stream" by default, too.
    default = CudaStaging(cuda=FakeCuda())
    calls = [default.stage_in(torch.ones(2), "w", torch.empty(2))[2] for _ in range(4)]
    for c in calls:
        c.abandon()
    assert len(default._idle[("w", torch.device("cpu"), torch.float32, 2)]) == 2


def test_both_buffers_of_a_pair_are_pinned(monkeypatch):
    """README: CUDA tensors are "staged through pinned host memory": the CUDA API's
    settings (TorchCuda) ask for pinned buffers, and a pair allocates its input and its
    result buffer pinned (a pageable result buffer makes the host-to-device copy
    synchronous and unpinned). Recorded here by wrapping torch.empty: no GPU, so the
    buffers are made pageable, with the pin_memory each was asked for noted."""
    from horovod_wagma.torch import cuda_staging
    assert cuda_staging.TorchCuda.pin_memory is True
    cuda = FakeCuda()
    cuda.pin_memory = True
    staging = CudaStaging(cuda=cuda)
    inputs = [torch.ones(3), torch.ones(3)]
    targets = [torch.empty(3), torch.empty(3)]
    asked = []
    real_empty = torch.empty

    def empty(*args, pin_memory=False, **kwargs):
        asked.append(pin_memory)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(cuda_staging.torch, "empty", empty)
    # Two calls in flight: two pairs, four buffers, every one pinned.
    for x, target in zip(inputs, targets):
        staging.stage_in(x, "w", target)
    assert asked == [True] * 4, asked
