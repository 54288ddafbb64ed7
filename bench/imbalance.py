#!/usr/bin/env python
"""PyTorch training throughput under load imbalance: WAGMA vs Horovod vs local SGD.

What is measured
----------------
P ranks train a small MLP (128 -> 512 -> 10, 71,178 float32 parameters, about 285 KB)
on tiny synthetic batches (16 samples per rank, 8 distinct batches repeated). A sleep
stands in for accelerator compute, before the forward pass; the forward and backward
passes and the optimizer step are real, but the sleeps dominate. The imbalance
pattern (``--pattern random``: the paper's per-step random delays; ``persistent``:
fixed slow ranks), the timed windows, the ideals, the targets and the outputs are
those of the shared harness, documented in bench/harness.py. The figure is samples/s
summed over ranks, next to the pattern's ideal.

Methods (``--methods``), run one after another in the same launch, each on a fresh copy
of the model (seeded, then broadcast from rank 0) and on the same schedule:

* ``horovod``     ``hvd.DistributedOptimizer``: a gradient allreduce every step, so
                  every step waits for that step's slowest rank.
* ``localsgd``    local SGD as a PyTorch user would write it: a plain local optimizer
                  step, then ``PeriodicModelAverager(period=tau, warmup_steps=0)
                  .average_parameters(...)`` on a gloo process group (torch.distributed
                  initialised in the same launch, env://, 127.0.0.1, a free port chosen
                  by rank 0).
* ``wagma``       ``horovod_wagma.torch.DistributedWagmaOptimizer(group_size=S,
                  sync_period=tau)``: wait-avoiding group model averaging, a blocking
                  global average every tau steps (the paper).
* ``wagma_wa``    the same with ``global_rounds="wait_avoiding"``: global rounds do not
                  wait for slow ranks either, so fast ranks run ahead (measured in a
                  wall-time window, then ``opt.join()``; see bench/harness.py).
* ``wagma_loop``  (not in the default list) the optimizer's defaults (wait-avoiding
                  global rounds) in a user's loop: Horovod's barrier after the
                  warm-up, the same N steps on every rank, then Horovod's allreduce
                  of each rank's rate; the window ends when that allreduce returns.
* ``wagma_sync``  (not in the default list) ``wait_avoiding=False``: group rounds wait
                  for all group members.

Per step and rank three phases are timed: ``sleep``, ``fwd+bwd`` and ``opt.step``
(local update + averaging, including any waiting; for local SGD the averager's call
too). ``ideal(meas)`` uses sleep + fwd+bwd.

Earlier measurements on this host (random pattern, steps/s): P=8 ideal ~34, Horovod
18.4, local SGD 32.7; P=16 ideal ~42, Horovod 17.7 (x 16 samples x P for samples/s).
At P=16 on 2 cores the host's CPU, not waiting, limits every method.

Run
---
    python bench/imbalance.py [--np 8] [--pattern random|persistent]
        [--slow-ranks K|half] [--slow-factor F] [--steps 200] [--sync-period 10]
        [--delay 0.040] [--step-time 0.010] [--num-delayed 2] [--seed 0]
        [--window SECONDS] [--methods horovod,localsgd,wagma,wagma_wa]
        [--group-size S] [--trials 2] [--json PATH] [--plot PATH]

e.g. ``python bench/imbalance.py --np 8 --pattern persistent --slow-ranks 1
--slow-factor 2``. Run directly, the script re-launches itself under ``mpirun -np NP
--oversubscribe`` with the environment this machine needs (run-as-root,
``OMPI_MCA_mpi_yield_when_idle=1``; DESIGN.md section 5). Started by mpirun, it uses
the world size it is given. Rank 0 prints the table and writes
bench/results/imbalance_<pattern>_P{P}.json and .png (by default).
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
import harness  # noqa: E402
import time

IN_FEATURES, HIDDEN, CLASSES = 128, 512, 10   # 71,178 parameters, ~285 KB


class Method:
    """One method's model, optimizer and step function; one instance per trial."""

    def __init__(self, name, args, hvd, torch, rank):
        self.torch = torch
        torch.manual_seed(1234)  # the same initial model for every method
        self.model = torch.nn.Sequential(torch.nn.Linear(IN_FEATURES, HIDDEN),
                                         torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
        hvd.broadcast_parameters(self.model.state_dict(), root_rank=0)
        opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        named = self.model.named_parameters()
        self.averager = None
        if name == "horovod":
            opt = hvd.DistributedOptimizer(opt, named_parameters=named)
        elif name == "localsgd":
            from torch.distributed.algorithms.model_averaging.averagers import \
                PeriodicModelAverager
            self.averager = PeriodicModelAverager(period=args.sync_period, warmup_steps=0)
        else:
            kw = dict(global_rounds=harness.wagma_global_rounds(name))
            opt = hvd.DistributedWagmaOptimizer(
                opt, named_parameters=named, group_size=args.group_size,
                sync_period=args.sync_period, wait_avoiding=(name != "wagma_sync"), **kw)
        self.opt = opt
        g = torch.Generator().manual_seed(100 + rank)
        self.xs = torch.randn(8, harness.BATCH, IN_FEATURES, generator=g)
        self.ys = torch.randint(0, CLASSES, (8, harness.BATCH), generator=g)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.k = 0

    def step(self, seconds):
        """One training step; returns (sleep, fwd+bwd, opt.step) seconds."""
        t0 = time.perf_counter()
        time.sleep(seconds)  # stand-in for accelerator compute; the delay comes first
        t1 = time.perf_counter()
        x, y = self.xs[self.k % len(self.xs)], self.ys[self.k % len(self.ys)]
        self.k += 1
        self.opt.zero_grad()
        self.loss_fn(self.model(x), y).backward()
        t2 = time.perf_counter()
        self.opt.step()
        if self.averager is not None:
            self.averager.average_parameters(self.model.parameters())
        return t1 - t0, t2 - t1, time.perf_counter() - t2


class TorchImbalance(harness.Benchmark):
    name = "imbalance"
    framework = "PyTorch"
    methods = ("horovod", "localsgd", "wagma", "wagma_wa", "wagma_loop", "wagma_sync")
    default_methods = ("horovod", "localsgd", "wagma", "wagma_wa")
    default_trials = 2
    phases = ("sleep", "fwd+bwd", "opt.step")

    def setup(self, args, comm):
        import torch
        torch.set_num_threads(1)
        import horovod_wagma.torch as hvd
        hvd.init()
        self.hvd, self.torch, self.rank = hvd, torch, comm.Get_rank()
        if "localsgd" in args.methods:
            harness.init_gloo(comm)
        nparams = (IN_FEATURES + 1) * HIDDEN + (HIDDEN + 1) * CLASSES
        return f"MLP {nparams} params ({nparams * 4 / 1024:.0f} KB)"

    def stream_stats(self):
        return self.hvd.stats()

    def horovod_collectives(self):
        torch, hvd = self.torch, self.hvd
        return (hvd.barrier,
                lambda rate: hvd.allreduce(torch.tensor(rate), op=hvd.Sum, name="rate"))

    def warmup_steps(self, name, tau):
        return tau + 1 if name == "localsgd" else tau   # averages at calls 0 and tau

    def run_method(self, name, trial, args, warm_sched, window):
        m = Method(name, args, self.hvd, self.torch, self.rank)
        for t in range(self.warmup_steps(name, args.sync_period)):
            m.step(warm_sched[t, self.rank])
        window.open()
        t = 0
        while window.record(*m.step(window.nominal(t))):
            t += 1
        window.finish(None if window.lockstep else m.opt.join)
        return {}

    def teardown(self, args):
        if "localsgd" in args.methods:
            import torch.distributed as dist
            dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(TorchImbalance(), __file__, __doc__.split("\n\n")[0])
