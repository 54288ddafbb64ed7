"""FusionBuffer (single process): layout, device placement, and the clear errors of
tensors a buffer cannot hold. The CUDA placement itself runs in tests/test_cuda.py;
here "meta" tensors stand in for a second device."""
import pytest
import torch

from horovod_wagma.torch.fusion import FusionBuffer, fuse_by_dtype


def test_pack_unpack_round_trip():
    a, b = torch.arange(6.0).view(2, 3), torch.arange(4.0)
    fb = FusionBuffer([a, b])
    flat = fb.pack()
    assert flat.tolist() == list(range(6)) + list(range(4))
    flat.mul_(2)
    fb.unpack()
    assert a.flatten().tolist() == [2 * x for x in range(6)]
    assert b.tolist() == [2 * x for x in range(4)]


def test_buffer_lives_on_the_tensors_device():
    t = torch.empty(3, device="meta")
    assert FusionBuffer([t]).flat.device.type == "meta"


def test_mixed_devices_are_refused():
    with pytest.raises(ValueError, match="different devices"):
        FusionBuffer([torch.zeros(2), torch.empty(2, device="meta")])


def test_fuse_by_dtype_splits_by_device_and_dtype_in_a_stable_order():
    cpu32, cpu64 = torch.zeros(2), torch.zeros(2, dtype=torch.float64)
    meta32 = torch.empty(3, device="meta")
    buffers = fuse_by_dtype([meta32, cpu64, cpu32])
    kinds = [(fb.device.type, fb.dtype) for fb in buffers]
    # Sorted by (device, dtype): every rank with the same model builds the same
    # streams in the same order.
    assert kinds == [("cpu", torch.float32), ("cpu", torch.float64), ("meta", torch.float32)]
