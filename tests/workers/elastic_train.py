"""A user's elastic training script with WAGMA: Horovod's ``hvd.elastic.run`` and a
``WagmaState`` in place of ``TorchState``, a metric allreduce every 10 steps and a
commit every 5.

Each process appends JSON lines to $WAGMA_TEST_RESULTS/<host>-<pid>.jsonl:
  {"kind": "step", "t", "step", "rank", "size"}          every step
  {"kind": "start", "t", "started", "imported"}        after init (the process's clock)
  {"kind": "ready", "t"}                                before hvd.elastic.run's train()
  {"kind": "restore", "t"}                              Horovod's run caught an error
  {"kind": "shutdown" | "init", "t", "took"}            the reset's two halves
  {"kind": "sync", "t", "rank", "size", "survivor", "before", "after"}
                                                         each sync(): the model before
                                                         and after (flattened)
  {"kind": "done", "rank", "size", "step", "stats"}      at the end
argv: total steps, seconds of sleep per step. WAGMA_TEST_OPTIMIZER=horovod runs the
same script with Horovod's own DistributedOptimizer and TorchState (the baseline of
multihost/elastic_startup.py).
"""
import os
import sys
import time

STARTED = time.time()  # before the heavy imports: where a joiner's seconds go

import torch  # noqa: E402

import horovod.torch as hvd  # noqa: E402
import horovod.torch.elastic as hvd_elastic  # noqa: E402
HOROVOD_ONLY = os.environ.get("WAGMA_TEST_OPTIMIZER") == "horovod"
if HOROVOD_ONLY:
    wagma = membership = None
    WagmaState = hvd_elastic.TorchState
else:
    import horovod_wagma.torch as wagma  # noqa: E402
    from horovod_wagma.common.elastic import membership  # noqa: E402
    from horovod_wagma.torch.elastic import WagmaState  # noqa: E402
from elastic_log import fault_here, log, logged_state, timed  # noqa: E402

TOTAL = int(sys.argv[1])
STEP_S = float(sys.argv[2])


def flat(model):
    return torch.cat([p.data.reshape(-1) for p in model.parameters()]).tolist()


LoggedState = logged_state(
    WagmaState, hvd, flat,
    lambda: None if HOROVOD_ONLY else membership.MEMBERSHIP.was_survivor)

hvd_elastic.shutdown = timed("shutdown", hvd_elastic.shutdown)
hvd_elastic.init = timed("init", hvd_elastic.init)
imported = time.time()
hvd.init() if HOROVOD_ONLY else wagma.init()
log(kind="start", started=STARTED, imported=imported)
torch.manual_seed(hvd.rank())
model = torch.nn.Linear(4, 1)
distributed = hvd.DistributedOptimizer if HOROVOD_ONLY else wagma.DistributedWagmaOptimizer
# Momentum: optimizer state, which WAGMA averages at global rounds ("on_sync"), so the
# tests see that those duties go on after a reset (the "sync" stream's rounds).
opt = distributed(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                  named_parameters=model.named_parameters())
state = LoggedState(model, opt, step=0)
gen = torch.Generator().manual_seed(1000 + os.getpid())
w_true = torch.tensor([[1.0, -2.0, 0.5, 3.0]])


@hvd.elastic.run
def train(state):
    while state.step < TOTAL:
        time.sleep(STEP_S)
        x = torch.randn(16, 4, generator=gen)
        y = x @ w_true.t()
        fault_here(state.step + 1, hvd.rank())
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        state.step += 1
        log(kind="step", step=state.step, rank=hvd.rank(), size=hvd.size())
        if state.step % 10 == 0:
            hvd.allreduce(torch.tensor([float(state.step)]), name="metric")
        if state.step % 5 == 0:
            state.commit()


log(kind="ready")  # the script's own setup done (imports, model, optimizer)
train(state)
if not HOROVOD_ONLY:
    opt.join()
log(kind="done", rank=hvd.rank(), size=hvd.size(), step=state.step,
    stats=None if HOROVOD_ONLY else wagma.stats(),
    changes=None if HOROVOD_ONLY else wagma.membership_changes())
