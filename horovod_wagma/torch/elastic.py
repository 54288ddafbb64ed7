"""Horovod elastic for WAGMA: a state object that never rolls back.

Use it in place of ``hvd.elastic.TorchState`` with Horovod's own ``hvd.elastic.run``::

    state = WagmaState(model, opt, epoch=0, batch=0)   # was hvd.elastic.TorchState

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...
            state.commit()

What happens on a membership change (a rank or host lost, or hosts added):

* The engine notices a lost peer at once (its Gloo connection closes) and fails the
  step with ``WagmaMembershipChanged``, a ``HorovodInternalError``, so Horovod's
  ``run`` resets: ``restore()`` here undoes nothing (each survivor keeps its own
  current replica and counters: no step counter goes backwards), Horovod re-forms
  the job, ``reset()`` restarts the engine over the new member set (membership.py),
  and ``sync()`` brings joiners in.
* ``sync()``: with survivors, every rank takes the survivors' average of the model
  (parameters and floating buffers), in which joiners weigh 0:
  w <- sum_i s_i w_i / sum_i s_i, s_i = 1 for a survivor, 0 for a joiner; joiners
  also take the counters of the lowest-ranked survivor. At the job's start (no
  survivors) it is Horovod's broadcast from rank 0.
* ``commit()`` saves only the counters (the keyword arguments) and the RNG state,
  never the model, and checks for host updates as Horovod's does.
"""
import horovod.torch as _hvd
import torch
from horovod.common.elastic import ObjectState

from horovod_wagma.common import membership
from horovod_wagma.torch import ops


class WagmaState(ObjectState):
    def __init__(self, model, optimizer, **kwargs):
        self.model = model
        self.optimizer = optimizer
        self._rng = torch.get_rng_state()
        super().__init__(bcast_object=_hvd.broadcast_object, get_rank=_hvd.rank, **kwargs)

    def save(self):
        super().save()
        self._rng = torch.get_rng_state()

    def restore(self):
        """Nothing to undo: the survivors go on from their current replica."""

    def reset(self):
        """After Horovod's reset: the engine restarts over the new member set at the
        next WAGMA call (or ``sync()``); the optimizer's rounds start anew with it."""
        ops._basics.restart()
        rebase = getattr(self.optimizer, "rebase_rounds", None)
        if rebase is not None:
            rebase()

    def sync(self):
        ops._basics.ensure_started()  # agrees on the member set (collective)
        survivors = membership.MEMBERSHIP.survivors(_hvd)
        tensors = [p.data for p in self.model.parameters()] + [
            b for b in self.model.buffers() if torch.is_floating_point(b)]
        if not any(survivors):
            _hvd.broadcast_parameters(self.model.state_dict(), root_rank=0)
            super().sync()
            membership.MEMBERSHIP.mark_synced()
            return
        weight = 1.0 if survivors[_hvd.rank()] else 0.0
        flat = torch.cat([t.reshape(-1).double() for t in tensors]) * weight
        total = _hvd.allreduce(flat, op=_hvd.Sum, name="wagma.elastic.average")
        mean = total / float(sum(survivors))
        offset = 0
        for t in tensors:
            n = t.numel()
            t.copy_(mean[offset:offset + n].view_as(t).to(t.dtype))
            offset += n
        first = survivors.index(True)
        counters = {k: getattr(self, k) for k in self._saved_state}
        theirs = _hvd.broadcast_object(counters, root_rank=first,
                                       name="wagma.elastic.counters")
        if not survivors[_hvd.rank()]:
            self._saved_state = theirs
            self._set_attrs()
        membership.MEMBERSHIP.mark_synced()
