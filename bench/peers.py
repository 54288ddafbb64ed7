"""The real peers as benchmark methods, from their own packages (``make bench-peers``):
torchft's ``LocalSGD`` and ``DiLoCo`` (torchft 0.2.0) and hivemind's ``Optimizer``
(hivemind 1.1.12). Each object has the interface of bench/method_base.py's methods
(``zero_grad``, ``step``, ``lockstep``, ``synced(i)``, ``finish``); the benchmark's
own loop drives them, with its clock, compute sleep and Horovod evaluations.

How they run here, every service on loopback and started by the benchmark itself:

* torchft: every rank is one replica group (group world size 1) with its own TCPStore
  and a ``Manager`` over torchft's ``ProcessGroupGloo``; rank 0 runs the
  ``LighthouseServer`` that forms the quorum at every synchronisation. The lighthouse
  waits for every replica that heartbeats (up to its join timeout), so a quorum with
  no failure is all ranks: LocalSGD is an exact average every ``sync_every`` steps,
  DiLoCo an outer Nesterov step on the averaged pseudo-gradient.
* hivemind: every rank is one peer with its own DHT node (rank 0's is the others'
  bootstrap) and a ``hivemind.Optimizer``. An "epoch" is ``target_batch_size`` samples
  over all peers; at its end the peers that find each other within
  ``matchmaking_time`` average gradients (the default) or parameters
  (``use_local_updates``).

The peers' weights start equal (bench/methods.py broadcasts them); torchft is told so
(``init_sync=False``, as its docstring asks for identically initialised weights).
"""
import os
import uuid
from datetime import timedelta

from method_base import Horovod

# torchft's Rust side logs every quorum at INFO; warnings and errors still show.
os.environ.setdefault("RUST_LOG", "warn")
# hivemind shares its averaged tensors with its averager process through torch's
# "file_system" strategy by default, whose torch_shm_manager timed out here under 8
# ranks on 2 cores ("Shared memory manager connection has timed out", in the
# Optimizer's construction); hivemind reads this variable to choose another strategy.
os.environ.setdefault("HIVEMIND_MEMORY_SHARING_STRATEGY", "file_descriptor")

# DiLoCo's outer optimizer as torchft's own DiLoCo tests and the DiLoCo paper set it.
DILOCO_OUTER = dict(lr=0.7, momentum=0.9, nesterov=True)
HIVEMIND_MATCHMAKING_S = 15.0   # hivemind.Optimizer's default matchmaking_time


_RETIRED = []


def _comm():
    from mpi4py import MPI
    return MPI.COMM_WORLD


def _run_name(comm):
    """One name per run, equal on every rank (a fresh quorum / DHT key prefix)."""
    return comm.bcast(uuid.uuid4().hex[:12] if comm.Get_rank() == 0 else None, root=0)


class _Method(Horovod):
    """The bench/method_base.py interface around a local torch optimizer ``opt``; the
    peer's own code hooks or wraps ``opt.step``. Both torchft classes synchronise
    after every tau-th step."""

    def synced(self, i):
        return (i + 1) % self.tau == 0

    def rounds(self):
        """How many synchronisations this rank took part in (before ``finish``)."""
        raise NotImplementedError


def torchft_manager(model, opt, host, lighthouse_addr, replica_id, timeout_s,
                    use_async_quorum=True):
    """(manager, store): this process as one torchft replica group (group world size
    1) on ``host``: a master TCPStore of its own and a ``Manager`` over torchft's
    ``ProcessGroupGloo`` whose collectives and RPCs time out after ``timeout_s``,
    recovering ``model`` and ``opt`` from a peer's state dict when it must heal."""
    import torch.distributed as dist
    from torchft import Manager, ProcessGroupGloo
    store = dist.TCPStore(host, 0, is_master=True, wait_for_workers=False)
    timeout = timedelta(seconds=timeout_s)
    manager = Manager(
        pg=ProcessGroupGloo(timeout=timeout), min_replica_size=1,
        load_state_dict=lambda sd: (model.load_state_dict(sd["model"]),
                                    opt.load_state_dict(sd["optim"])),
        state_dict=lambda: {"model": model.state_dict(), "optim": opt.state_dict()},
        use_async_quorum=use_async_quorum, init_sync=False, rank=0, world_size=1,
        store_addr=host, store_port=store.port, lighthouse_addr=lighthouse_addr,
        hostname=host, replica_id=replica_id, timeout=timeout)
    return manager, store


class _TorchftReplica:
    """This rank as one torchft replica group: a master TCPStore of its own, a
    ``Manager`` over ``ProcessGroupGloo``, connected to rank 0's lighthouse (started
    here, its address broadcast). ``close()`` shuts them down, the lighthouse last."""

    def __init__(self, model, opt, use_async_quorum):
        from torchft.coordination import LighthouseServer
        comm = self.comm = _comm()
        self.lighthouse = None
        if comm.Get_rank() == 0:
            # min_replicas 1: the quorum goes on without a replica that stopped
            # heartbeating (a killed rank). The join timeout is the lighthouse's own
            # command-line default (60 s): the Python binding's, 100 ms, forms quorums
            # without a rank that is merely late, which then asks for a quorum of its
            # own while the others wait at the benchmark's Horovod evaluation.
            self.lighthouse = LighthouseServer(bind="[::]:0", min_replicas=1,
                                               join_timeout_ms=60000)
        address = comm.bcast(self.lighthouse.address() if self.lighthouse else None, 0)
        self.manager, self.store = torchft_manager(
            model, opt, "localhost", address,
            f"{_run_name(comm)}_{comm.Get_rank()}", 60.0, use_async_quorum)

    def close(self):
        self.manager.shutdown(wait=False)
        self.comm.Barrier()
        if self.lighthouse is not None:
            self.lighthouse.shutdown()
        # Kept, not freed: the Gloo process group's destructor (torch 2.13) crashed
        # once with a segfault in its thread join when a finished run's replica was
        # garbage-collected during the next run.
        _RETIRED.append(self)


class _Torchft(_Method):
    def rounds(self):
        return self.replica.manager.current_step()   # committed synchronisations

    def finish(self):
        self.ctx.__exit__(None, None, None)
        self.replica.close()


class TorchftLocalSGD(_Torchft):
    """torchft's ``LocalSGD(manager, model, optimizer, sync_every=tau)``: local steps,
    and after every tau-th an average of the parameters over the quorum:
    x_i <- (1/|Q|) sum_{j in Q} x_j."""

    def __init__(self, model, inner, tau):
        from torchft.local_sgd import LocalSGD
        super().__init__(inner, tau)
        self.replica = _TorchftReplica(model, inner, use_async_quorum=True)
        self.ctx = LocalSGD(self.replica.manager, model, inner, sync_every=tau)
        self.ctx.__enter__()


class TorchftDiLoCo(_Torchft):
    """torchft's ``DiLoCo(manager, [model], inner, outer, sync_every=tau)``: after
    every tau local steps the pseudo-gradient Δ = x_anchor − x_i is averaged over the
    quorum and the outer optimizer (SGD, Nesterov momentum 0.9, lr ``outer_lr``)
    steps the anchor with it; every rank restarts from the new anchor."""

    def __init__(self, model, inner, tau, outer_lr):
        import torch
        from torchft.local_sgd import DiLoCo
        super().__init__(inner, tau)
        # DiLoCo needs the synchronous quorum (it says so when given the async one).
        self.replica = _TorchftReplica(model, inner, use_async_quorum=False)
        outer = torch.optim.SGD(model.parameters(), **dict(DILOCO_OUTER, lr=outer_lr))
        self.ctx = DiLoCo(self.replica.manager, [model], inner, outer, sync_every=tau,
                          pin_memory=torch.cuda.is_available())
        self.ctx.__enter__()


class Hivemind(_Method):
    """hivemind's ``Optimizer`` around the local SGD: an epoch is ``target_batch_size``
    = tau x ranks x batch samples over all peers (on average tau steps a rank); at an
    epoch's end the peers that matched within ``matchmaking_time`` average their
    accumulated gradients and step (default), or step locally every time and average
    parameters at the epoch's end (``use_local_updates``)."""

    def __init__(self, model, inner, tau, batch, matchmaking_s, local_updates):
        import hivemind
        super().__init__(None, tau)
        comm = self.comm = _comm()
        first = None
        if comm.Get_rank() == 0:
            self.dht = hivemind.DHT(host_maddrs=["/ip4/127.0.0.1/tcp/0"], start=True)
            first = [str(a) for a in self.dht.get_visible_maddrs()]
        first = comm.bcast(first, root=0)
        if comm.Get_rank() != 0:
            self.dht = hivemind.DHT(initial_peers=first,
                                    host_maddrs=["/ip4/127.0.0.1/tcp/0"], start=True)
        self.opt = hivemind.Optimizer(
            dht=self.dht, run_id=f"wagma_bench_{_run_name(comm)}",
            target_batch_size=tau * comm.Get_size() * batch, batch_size_per_step=batch,
            optimizer=inner, matchmaking_time=matchmaking_s,
            use_local_updates=bool(local_updates), verbose=False)
        comm.Barrier()

    # Peers step on alone: an epoch ends by samples over all peers, not at a step
    # count, and a peer blocks at an epoch's end until the others match with it, so a
    # benchmark collective on a step count (a Horovod evaluation) would hold the
    # peers it waits for and stall the averaging until its timeout.
    lockstep = False
    meets_collectives = False

    def synced(self, i):
        return False

    def rounds(self):
        return self.opt.local_epoch   # epochs this peer passed (each one an average)

    def finish(self):
        self.opt.shutdown()
        self.comm.Barrier()
        self.dht.shutdown()


def build(name, opts, model, inner, batch):
    """The peer method ``name`` (a methods.PEER_KEYS family) with a spec's options
    ``opts`` (the benchmark's defaults merged in: tau, outer)."""
    tau = int(opts["tau"])
    if name == "torchft_localsgd":
        return TorchftLocalSGD(model, inner, tau)
    if name == "torchft_diloco":
        return TorchftDiLoCo(model, inner, tau, opts.get("outer", DILOCO_OUTER["lr"]))
    return Hivemind(model, inner, tau, batch, opts.get("mm", HIVEMIND_MATCHMAKING_S),
                    opts.get("local", 0))

