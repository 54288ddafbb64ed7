"""FusionBuffer: many tensors of one dtype packed into one flat buffer, so that one
group allreduce averages them all (one round, one message per peer).

pack() copies the tensors in; unpack() copies the (averaged) buffer back. The layout
is fixed at construction and identical on every rank that builds it from the same
tensor list, which the stream's round 0 verifies through the buffer's shape.
"""
import torch


class FusionBuffer:
    def __init__(self, tensors, dtype=None):
        if not tensors:
            raise ValueError("FusionBuffer needs at least one tensor")
        self.tensors = list(tensors)
        self.dtype = dtype or self.tensors[0].dtype
        total = sum(t.numel() for t in self.tensors)
        self.flat = torch.empty(total, dtype=self.dtype)
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
    """FusionBuffers for `tensors`: one per dtype, or per (bucket, dtype) when
    `buckets` (lists of tensors, e.g. from Horovod's `groups=`) is given instead."""
    buckets = buckets if buckets is not None else [tensors]
    out = []
    for bucket in buckets:
        by_dtype = {}
        for t in bucket:
            by_dtype.setdefault(t.dtype, []).append(t)
        for dtype in sorted(by_dtype, key=str):
            out.append(FusionBuffer(by_dtype[dtype]))
    return out
