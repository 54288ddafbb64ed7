"""A PyTorch handle keeps the tensors the engine reads and writes alive until its round
ends, even when Ctrl-C interrupts synchronize() (faults.md: waits return to Python
every 100 ms, and the round is still pending). Single process: the engine's wait is
replaced by a fake, so the test can interrupt it at a chosen moment."""
import pytest
import torch

from horovod_wagma.torch import ops


class InterruptedOnceWait:
    """_torch_ops with a wait() that raises KeyboardInterrupt on its first call, as the
    binding does when a signal arrives between two 100 ms slices, then serves round 7."""

    def __init__(self, real):
        self._real, self.calls = real, 0

    def wait(self, handle_id):
        self.calls += 1
        if self.calls == 1:
            raise KeyboardInterrupt
        return 7

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_interrupted_synchronize_keeps_the_round_tensors_until_it_ends(monkeypatch):
    fake = InterruptedOnceWait(ops._torch_ops)
    monkeypatch.setattr(ops, "_torch_ops", fake)
    host_in, host_out = torch.ones(3), torch.full((3,), 2.0)
    handle = ops.GroupAllreduceHandle(-12345, host_in, host_out, None)
    try:
        with pytest.raises(KeyboardInterrupt):
            ops.synchronize(handle)
        # The round is still pending in the engine: its input and output must stay
        # referenced, or the engine would read and write freed memory.
        kept = ops._pending_tensors.get(-12345)
        assert kept is not None and kept[0] is host_in and kept[1] is host_out
        assert not handle._error and handle._result is None
        # Synchronize again: the wait goes on and returns the output, then lets go.
        assert ops.synchronize(handle) is host_out
        assert handle.round == 7 and fake.calls == 2
        assert -12345 not in ops._pending_tensors
    finally:
        ops._pending_tensors.pop(-12345, None)


def test_a_failed_round_releases_its_tensors_and_raises_the_engines_error(monkeypatch):
    class FailingWait(InterruptedOnceWait):
        def wait(self, handle_id):
            raise RuntimeError("group allreduce 'w' failed: rank 3 exited")

    monkeypatch.setattr(ops, "_torch_ops", FailingWait(ops._torch_ops))
    handle = ops.GroupAllreduceHandle(-12346, torch.ones(2), torch.ones(2), None)
    try:
        for _ in range(2):  # the error is kept: a second synchronize raises it again
            with pytest.raises(Exception, match="rank 3 exited") as raised:
                ops.synchronize(handle)
            assert type(raised.value).__name__ == "WagmaError"
        assert -12346 not in ops._pending_tensors
    finally:
        ops._pending_tensors.pop(-12346, None)
