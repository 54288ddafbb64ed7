"""FusionBuffer: many tensors of one dtype packed into one flat buffer, so that one
group allreduce averages them all (one round, one message per peer).

pack() copies the tensors in; unpack() copies the (averaged) buffer back. The layout
is fixed at construction and identical on every rank that builds it from the same
tensor list, which the stream's round 0 verifies through the buffer's shape.
"""
import torch

from horovod_wagma.common.optimizer.fusion_plan import FusionPlan


class FusionBuffer:
    def __init__(self, tensors, dtype=None):
        if not tensors:
            raise ValueError("FusionBuffer needs at least one tensor")
        self.tensors = list(tensors)
        self.dtype = dtype or self.tensors[0].dtype
        # On the tensors' device: a GPU model packs on the GPU, and a round stages one
        # flat buffer to the host, not one copy per tensor.
        self.device = self.tensors[0].device
        if any(t.device != self.device for t in self.tensors):
            raise ValueError("FusionBuffer: tensors on different devices: "
                             f"{sorted({str(t.device) for t in self.tensors})}")
        total = sum(t.numel() for t in self.tensors)
        self.flat = torch.empty(total, dtype=self.dtype, device=self.device)
        self._views, offset = [], 0
        for t in self.tensors:
            self._views.append(self.flat[offset:offset + t.numel()].view(t.shape))
            offset += t.numel()

    def pack(self):
        torch._foreach_copy_(self._views, [t.detach() for t in self.tensors])
        return self.flat

    def unpack(self):
        with torch.no_grad():
            torch._foreach_copy_([t.data for t in self.tensors], self._views)


def fuse_by_dtype(tensors, buckets=None):
    """FusionBuffers for `tensors`: one per (device, dtype), or per (bucket, device,
    dtype) when `buckets` (lists of tensors, from a FusionPlan) is given instead. A
    model split over devices gets a buffer per device."""
    buckets = buckets if buckets is not None else [tensors]
    return [FusionBuffer(kind) for kind in FusionPlan.by_kind(
        buckets, lambda t: (str(t.device), str(t.dtype)))]
