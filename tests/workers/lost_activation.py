"""A joined rank whose activations never arrive (WAGMA_TEST_LOSE_ACTIVATIONS=2: each
rank drops the first two activations it sends to a rank that called join() in a round that
activates nobody else), with WAGMA_HOLD_REPORT_S=0.5.

4 ranks, groups of 2, sync_period=2, blocking global rounds: rank 0 runs rounds 0 and
1 (global) and joins; the others run rounds 2 (group) and 3 (global). Round 3
activates nobody, so its only activations are those to the joined rank 0, all lost.
The waiting ranks' hold queries stand in for them: rank 0's engine joins round 3 with
its final model. Each rank emits its inputs and outputs, its wait in each round and
its engine's joins_on_hold_query."""
import time

import torch

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

hvd.init(group_size=2, sync_period=2)
rank = hvd.rank()
knobs = dict(sync_period=2, global_rounds="blocking")
x = torch.tensor([float(rank), 1.0 + 10.0 * rank], dtype=torch.float64)
inputs, outputs, waits = [], [], []
for k in range(2 if rank == 0 else 4):
    if k == 2:
        # Rank 0 calls join() right after round 1: its notice must be in before the
        # others' rounds 2 and 3 activate it (else they activate a rank not yet joined,
        # nothing is dropped, and the scenario tests nothing; seen in CI under load).
        time.sleep(0.5)
    x = x + (k + 1) * (rank + 1)  # a local "update"
    inputs.append(x.tolist())
    t0 = time.monotonic()
    x = hvd.group_allreduce(x, name="lost", **knobs)
    waits.append(time.monotonic() - t0)
    outputs.append(x.tolist())
last = hvd.join()
emit(rank, inputs=inputs, outputs=outputs, waits=waits, last=last,
     joins_on_hold_query=engine_lib.stats()["joins_on_hold_query"])
