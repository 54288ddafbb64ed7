"""One rank of bench/elastic_time_to_accuracy.py: the mlp task of bench/tasks.py
trained as a user trains under Horovod elastic, with WAGMA (``WagmaState``,
``DistributedWagmaOptimizer``, defaults) or Horovod's own (``TorchState``,
``hvd.DistributedOptimizer``). A Horovod allreduce of a metric every 10 steps and a
commit every 5, as in the elastic tests.

argv: method (wagma|horovod), seed, steps, seconds of sleep per step (the stand-in for
accelerator compute), steps between evaluations. Each process appends JSON lines to
$WAGMA_TEST_RESULTS/<host>-<pid>.jsonl: {"kind": "step", "t", "step", "rank", "size"},
with "acc" (held-out accuracy of this rank's replica, %) on rank 0 every evaluation,
{"kind": "restore"} when Horovod's run resets and {"kind": "sync", "sync_s"} after each
state sync (tests/workers/elastic_log.py, which the elastic tests' workers use too).
"""
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "workers"))
import tasks  # noqa: E402
import horovod.torch as hvd  # noqa: E402
from elastic_log import log, logged_state  # noqa: E402

METHOD, SEED, STEPS, STEP_S, EVAL_EVERY = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                           float(sys.argv[4]), int(sys.argv[5]))
if METHOD == "wagma":
    import horovod_wagma.torch as wagma  # noqa: E402
    from horovod_wagma.torch.elastic import WagmaState as State  # noqa: E402
else:
    wagma = None
    State = hvd.elastic.TorchState
LoggedState = logged_state(State, hvd)

torch.set_num_threads(1)  # 8 ranks share 2 cores
(wagma.init if wagma else hvd.init)()
task = tasks.MLPTask(SEED)
model = task.make_model(SEED)
sgd = torch.optim.SGD(model.parameters(), lr=task.lr, momentum=task.momentum)
distributed = wagma.DistributedWagmaOptimizer if wagma else hvd.DistributedOptimizer
opt = distributed(sgd, named_parameters=model.named_parameters())
state = LoggedState(model, opt, step=0)


@hvd.elastic.run
def train(state):
    while state.step < STEPS:
        time.sleep(STEP_S)
        # IID batches drawn by (seed, rank, step): the same for both methods.
        g = np.random.default_rng((SEED, 3, hvd.rank(), state.step))
        batch = torch.from_numpy(g.integers(0, len(task.y_train), task.batch))
        opt.zero_grad()
        task.loss(model, batch).backward()
        opt.step()
        state.step += 1
        record = dict(kind="step", step=state.step, rank=hvd.rank(), size=hvd.size())
        if hvd.rank() == 0 and state.step % EVAL_EVERY == 0:
            record["acc"] = task.accuracy(model)
        log(**record)
        if state.step % 10 == 0:
            hvd.allreduce(torch.tensor([float(state.step)]), name="metric")
        if state.step % 5 == 0:
            state.commit()


train(state)
if wagma:
    opt.join()
