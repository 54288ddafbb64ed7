"""The job's ranks, for a worker's own checks (barriers, gathering results to compare).

Under mpirun this is mpi4py's COMM_WORLD. Under horovodrun --gloo there is no MPI:
the same methods run on torch.distributed's gloo backend where the worker imported
PyTorch (a file store in the launch's results directory), else on Horovod's own
collectives (``allgather_object``) of the frontend the worker imported. Horovod's own
barrier on Gloo took about 65 ms per call while the engine ran (3 ranks; 4 ms idle),
which made the gossip worker's 1,300 barriers cost 85 of its 100 s.
"""
import functools
import os
import sys


def on_gloo():
    return bool(os.environ.get("HOROVOD_GLOO_RENDEZVOUS_ADDR"))


class HorovodWorld:
    """The subset of mpi4py's Comm the workers use, on Horovod's collectives."""

    @staticmethod
    def _hvd():
        if "horovod.torch" in sys.modules:
            import horovod.torch as hvd
        else:
            import horovod.tensorflow as hvd
        return hvd

    def Get_rank(self):
        return self._hvd().rank()

    def Get_size(self):
        return self._hvd().size()

    def Barrier(self):
        hvd = self._hvd()
        if hasattr(hvd, "barrier"):
            hvd.barrier()
        else:  # horovod.tensorflow has none: a gather waits for every rank alike
            hvd.allgather_object(None)

    def allgather(self, obj):
        return self._hvd().allgather_object(obj)

    def allreduce(self, obj):
        """The sum over ranks (mpi4py's default op)."""
        return functools.reduce(lambda a, b: a + b, self.allgather(obj))


class TorchGlooWorld:
    """The same methods on a torch.distributed gloo group of the job's ranks."""

    def __init__(self):
        import torch.distributed as dist
        self.dist = dist
        if not dist.is_initialized():
            store = os.path.join(os.environ["WAGMA_TEST_RESULTS"], "torch_gloo_store")
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
            dist.init_process_group("gloo", init_method=f"file://{store}",
                                    rank=int(os.environ["HOROVOD_RANK"]),
                                    world_size=int(os.environ["HOROVOD_SIZE"]))

    def Get_rank(self):
        return self.dist.get_rank()

    def Get_size(self):
        return self.dist.get_world_size()

    def Barrier(self):
        self.dist.barrier()

    def allgather(self, obj):
        out = [None] * self.dist.get_world_size()
        self.dist.all_gather_object(out, obj)
        return out

    def allreduce(self, obj):
        """The sum over ranks (mpi4py's default op)."""
        return functools.reduce(lambda a, b: a + b, self.allgather(obj))


def world():
    if on_gloo():
        return TorchGlooWorld() if "torch" in sys.modules else HorovodWorld()
    from mpi4py import MPI
    return MPI.COMM_WORLD


def launch_rank():
    """This process's rank as the launcher set it, before any init."""
    return int(os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ["HOROVOD_RANK"])
