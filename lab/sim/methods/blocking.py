"""Methods whose every collective waits for every rank: Horovod and local SGD.

* ``horovod``   ``hvd.DistributedOptimizer``: every step ends with a global ring
                allreduce that starts when the last rank arrives; nobody continues
                before it completes. It costs Horovod's negotiation plus MPI_Allreduce
                by the algorithm Open MPI picks (network.py's
                ``horovod_allreduce_time``), then op_bench's ``hvd`` round time as CPU
                work on every rank. Where the network has Horovod's collective
                measured alone across its hosts (T_hosts), that replaces the model:
                the network part is T_hosts less op_bench's one-host time T_1 for
                the same ranks and bytes (the CPU part, which the round's CPU work
                charges again).
* ``localsgd``  local steps; every tau-th step a blocking global average (gloo ring
                allreduce) that starts when the last rank arrives (op_bench's
                ``mpi_hvd`` round time as CPU work).
"""


class Barrier:
    """Helper: a collective over all ranks that starts when the last one arrives."""

    def __init__(self, run, kind, net_s):
        self.run, self.kind, self.net_s = run, kind, net_s
        self.arrived = {}

    def arrive(self, key, r):
        n = self.arrived.get(key, 0) + 1
        if n < self.run.P:
            self.arrived[key] = n
            return
        self.arrived.pop(key, None)
        ranks = range(self.run.P)
        self.run.collective(ranks, self.kind, self.net_s,
                            lambda t: [self.run.resume(x, t) for x in ranks])


class HorovodModel:
    """Gradient allreduce every step: starts when the last rank arrives, then
    negotiation + Open MPI's allreduce (network) and the allreduce's CPU work."""

    def __init__(self, run):
        measured = run.net.measured_horovod_time(run.nbytes)
        if measured is None:
            net_s = run.net.horovod_allreduce_time(run.nbytes)
        elif run.net.comm_cpu:   # the round's CPU work is charged below, not twice
            net_s = max(0.0, measured - run.calib.ops.time("hvd", run.P, run.nbytes, run.P))
        else:
            net_s = measured
        self.barrier = Barrier(run, "horovod", net_s)

    def call(self, r, i, t):
        self.barrier.arrive(i, r)

    def stats(self):
        return {}


class LocalSGDModel:
    """Local steps; timed step t averages globally (gloo ring allreduce, blocking)
    when t % tau == tau - 1 (PeriodicModelAverager after tau + 1 warm-up calls)."""

    def __init__(self, run):
        self.run = run
        self.barrier = Barrier(run, "allreduce", run.net.ring_allreduce_time(run.nbytes))

    def call(self, r, i, t):
        if i % self.run.tau == self.run.tau - 1:
            self.barrier.arrive(i, r)
        else:
            self.run.resume(r, t)

    def stats(self):
        return {}
