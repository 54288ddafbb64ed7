"""ThroughputExchange: once per epoch, every rank's measured throughput, shared.

At each epoch boundary (``exchange(e)``, called by every rank at the same epoch count)
one Horovod allgather shares each rank's throughput over the epoch just ended:
samples per second of its own work, (samples / steps) / the median seconds of a step
(a StepClock: waits for other ranks taken out). With nothing measured (the first
epoch) a rank reports 0, "unknown", and common/balance/balanced_shares.py cuts equal shares.

The allgather is the framework's (PyTorch's or TensorFlow's Horovod), passed in as a
function from this rank's row to every rank's rows, so that both frontends share the
rest: the row carries the epoch, which every rank must agree on (else a ValueError on
every rank instead of shares cut from different epochs), and whether a
gradient-allreduce optimizer stepped (its ranks need equal steps).
"""
import numpy as np


class ThroughputExchange:
    def __init__(self, owner, clock, allgather):
        """``owner``: the epoch boundary's name for errors
        (e.g. "BalancedDistributedSampler.set_epoch"); ``clock``: a StepClock;
        ``allgather(row)``: a (1, 3) float64 array to the (P, 3) array of all ranks'."""
        self._owner, self._clock, self._allgather = owner, clock, allgather
        self._samples = 0  # dealt since the last exchange
        self.throughputs = None  # the last gathered ones, samples/s per rank

    def count(self, samples):
        """``samples`` more dealt to this rank in the current epoch."""
        self._samples += samples

    def throughput(self):
        """This rank's samples/s of own work this epoch; 0.0 when not measured."""
        seconds = self._clock.seconds_per_step()
        if seconds is None or seconds <= 0 or self._samples == 0:
            return 0.0
        return self._samples / (self._clock.steps() + 1) / seconds

    def exchange(self, epoch):
        """(every rank's throughput, whether any rank's optimizer allreduces gradients);
        starts the next epoch's measurement."""
        mine = np.array([[float(epoch), self.throughput(), float(self._clock.synchronous)]])
        gathered = np.asarray(self._allgather(mine), dtype=np.float64).reshape(-1, 3)
        epochs = gathered[:, 0].tolist()
        if len(set(epochs)) != 1:
            raise ValueError(f"{self._owner}: every rank must call it at the same "
                             f"epoch count; got epochs {[int(e) for e in epochs]} "
                             f"by rank")
        self._clock.reset()
        self._samples = 0
        self.throughputs = gathered[:, 1].tolist()
        return self.throughputs, bool(gathered[:, 2].max() > 0)
