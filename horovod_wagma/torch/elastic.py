"""Horovod elastic for WAGMA with PyTorch: a state object that never rolls back.

Use it in place of ``hvd.elastic.TorchState`` with Horovod's own ``hvd.elastic.run``::

    state = WagmaState(model, opt, epoch=0, batch=0)   # was hvd.elastic.TorchState

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...
            state.commit()

On a membership change (a rank or host lost, or hosts added) the engine fails the
step with ``WagmaMembershipChanged``, a ``HorovodInternalError``, so Horovod's ``run``
resets; what ``restore``, ``reset``, ``sync`` and ``commit`` then do is
common/elastic/elastic_state.py's. The model averaged by ``sync()`` is its parameters and
floating buffers; ``commit()`` also saves the torch RNG state.
"""
import horovod.torch as _hvd
import torch

from horovod_wagma.common.elastic.elastic_state import ElasticStateCore
from horovod_wagma.torch import ops


class WagmaState(ElasticStateCore):
    def __init__(self, model, optimizer, **kwargs):
        self.model = model
        self.optimizer = optimizer
        self._rng = torch.get_rng_state()
        super().__init__(_hvd, ops._basics, **kwargs)

    def save(self):
        super().save()
        self._rng = torch.get_rng_state()

    def _broadcast_model(self, root_rank):
        _hvd.broadcast_parameters(self.model.state_dict(), root_rank=root_rank)

    def _average_model(self, weight, survivors):
        tensors = [p.data for p in self.model.parameters()] + [
            b for b in self.model.buffers() if torch.is_floating_point(b)]
        flat = torch.cat([t.reshape(-1).double() for t in tensors]) * weight
        mean = _hvd.allreduce(flat, op=_hvd.Sum, name="wagma.elastic.average") / float(survivors)
        offset = 0
        for t in tensors:
            n = t.numel()
            t.copy_(mean[offset:offset + n].view_as(t).to(t.dtype))
            offset += n
