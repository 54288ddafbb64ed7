"""One replica of bench/elastic_time_to_accuracy.py's torchft runs: the mlp task of
bench/tasks.py trained as bench/elastic_worker.py trains it (the same batches, compute
sleep and evaluations), with torchft's ``LocalSGD`` instead of Horovod elastic. Each
process is one replica group (group world size 1) with its own TCPStore and a
``Manager`` over torchft's ``ProcessGroupGloo``, joined to the lighthouse the job
started; a replica that stops heartbeating drops out of the next quorum.

argv: seed, steps, seconds of sleep per step, steps between evaluations, replica index,
lighthouse address, this host's address, sync_every, timeout (s) of torchft's
collectives (the 5 s the Horovod runs get for Gloo). Logs as elastic_worker.py does
(tests/workers/elastic_log.py): {"kind": "step", "t", "step", "rank" (the replica
index), "size" (the quorum's replicas)}, with "acc" on replica 0 every evaluation.
Horovod's runs also allreduce a metric every 10 steps; torchft has no collective
outside its quorum steps, so these runs do not.
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
from elastic_log import log  # noqa: E402
from peers import torchft_manager  # noqa: E402  (also quiets torchft's Rust log)

SEED, STEPS, STEP_S, EVAL_EVERY, REPLICA = (int(sys.argv[1]), int(sys.argv[2]),
                                            float(sys.argv[3]), int(sys.argv[4]),
                                            int(sys.argv[5]))
LIGHTHOUSE, ADDRESS, SYNC_EVERY, TIMEOUT_S = (sys.argv[6], sys.argv[7], int(sys.argv[8]),
                                              float(sys.argv[9]))


def main():
    from torchft.local_sgd import LocalSGD
    torch.set_num_threads(1)  # 8 replicas share 2 cores
    task = tasks.MLPTask(SEED)
    model = task.make_model(SEED)   # the same weights on every replica
    sgd = torch.optim.SGD(model.parameters(), lr=task.lr, momentum=task.momentum)
    manager, _store = torchft_manager(model, sgd, ADDRESS, LIGHTHOUSE,
                                      f"replica_{REPLICA}", TIMEOUT_S)
    with LocalSGD(manager, model, sgd, sync_every=SYNC_EVERY):
        for step in range(1, STEPS + 1):
            time.sleep(STEP_S)
            g = np.random.default_rng((SEED, 3, REPLICA, step - 1))
            batch = torch.from_numpy(g.integers(0, len(task.y_train), task.batch))
            sgd.zero_grad()
            task.loss(model, batch).backward()
            sgd.step()
            record = dict(kind="step", step=step, rank=REPLICA,
                          size=manager.num_participants() if step >= SYNC_EVERY else None)
            if REPLICA == 0 and step % EVAL_EVERY == 0:
                record["acc"] = task.accuracy(model)
            log(**record)
    manager.shutdown(wait=False)


if __name__ == "__main__":
    main()
