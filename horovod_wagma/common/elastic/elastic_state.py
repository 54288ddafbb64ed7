"""ElasticStateCore: what the PyTorch and Keras ``WagmaState`` do alike, with no
framework in it. A Horovod elastic ``State`` that never rolls back.

* ``restore()`` undoes nothing: after a membership change each survivor keeps its own
  current replica and counters, so no step counter goes backwards.
* ``reset()`` (after Horovod's own reset) ends the old member set's engine; the next
  WAGMA call, or ``sync()``, starts one over the new member set (membership.py). The
  optimizer's rounds are rebased: the new engine counts rounds from 0, while this
  rank's step count goes on.
* ``sync()``: with survivors (ranks that hold a replica of the previous member set),
  every rank takes the survivors' average of the model, in which joiners weigh 0:
  w <- sum_i s_i w_i / sum_i s_i, s_i = 1 for a survivor, 0 for a joiner; joiners also
  take the counters (the state's keyword arguments) of the lowest-ranked survivor. At
  the job's start (no survivors) it is Horovod's broadcast from rank 0.
* ``commit()`` saves only the counters (and whatever ``save`` adds, e.g. the RNG
  state), never the model, and checks for host updates as Horovod's does, except that
  a host update never skips ``sync()`` (``check_host_updates``).

A framework's state sets ``self.optimizer`` and supplies the model's part:
``_broadcast_model``, ``_average_model`` and, if it needs one, ``_after_restart``.
"""
from horovod.common.elastic import ObjectState
from horovod.common.exceptions import HostsUpdatedInterrupt

from horovod_wagma.common.elastic import membership


class ElasticStateCore(ObjectState):
    def __init__(self, hvd, basics, **kwargs):
        """``hvd``: the framework's Horovod module; ``basics``: its WagmaBasics."""
        self._hvd = hvd
        self._basics = basics
        super().__init__(bcast_object=hvd.broadcast_object, get_rank=hvd.rank, **kwargs)

    def restore(self):
        """Nothing to undo: the survivors go on from their current replica."""

    def reset(self):
        """After Horovod's reset: the engine restarts over the new member set at the
        next WAGMA call (or ``sync()``)."""
        self._basics.restart()
        rebase = getattr(self.optimizer, "rebase_rounds", None)
        if rebase is not None:  # a WAGMA optimizer (a plain one has no rounds)
            rebase()
        self._after_restart()

    def check_host_updates(self):
        """Horovod's check, but the interrupt it raises never skips ``sync()``.

        Horovod skips the sync after a reset when the updates its ranks had received
        were removals only. Joiners always sync, though, so when a host is added just
        after one was removed (or a discovery script's output is read half-written: no
        hosts, then all of them), the survivors raise on the removal alone while the
        driver's new member set already holds the joiner: the joiners sit in the sync's
        collectives and the survivors in their first step's rounds, forever (seen once
        in a fresh-clone run). Syncing after every reset costs the survivors one model
        allreduce; after a removal it averages their replicas, as after a rank killed.
        """
        try:
            super().check_host_updates()
        except HostsUpdatedInterrupt as interrupt:
            if not interrupt.skip_sync:
                raise
            raise HostsUpdatedInterrupt(skip_sync=False) from interrupt

    def sync(self):
        hvd = self._hvd
        self._basics.ensure_started()  # agrees on the member set (collective)
        survivors = membership.MEMBERSHIP.survivors(hvd)
        if not any(survivors):
            self._broadcast_model(root_rank=0)
            super().sync()
            membership.MEMBERSHIP.mark_synced()
            return
        self._average_model(1.0 if survivors[hvd.rank()] else 0.0, sum(survivors))
        first = survivors.index(True)
        counters = {k: getattr(self, k) for k in self._saved_state}
        theirs = hvd.broadcast_object(counters, root_rank=first,
                                      name="wagma.elastic.counters")
        if not survivors[hvd.rank()]:
            self._saved_state = theirs
            self._set_attrs()
        membership.MEMBERSHIP.mark_synced()

    # -- the framework's part -----------------------------------------------------------
    def _after_restart(self):
        """The engine of the old member set ended: e.g. drop what was traced for it."""

    def _broadcast_model(self, root_rank):
        raise NotImplementedError

    def _average_model(self, weight, survivors):
        """w <- allreduce_sum(weight * w) / survivors, over the model's floating
        tensors, on every rank (a collective)."""
        raise NotImplementedError
