"""The op on Horovod process sets: two disjoint sets run a stream of the same name,
each averaging only among its own ranks."""
import numpy as np
import torch

from common import emit, initial_value
from world import world
from reference import gossip_trajectory

import horovod_wagma.torch as hvd

evens, odds = hvd.ProcessSet([0, 2, 4]), hvd.ProcessSet([1, 3, 5])
low = hvd.ProcessSet([0, 1, 2])
hvd.init(process_sets=[evens, odds, low])
rank = hvd.rank()
mine = evens if rank % 2 == 0 else odds
members = mine.ranks
phases = hvd.groups(len(members), 2)
x0 = np.stack([initial_value(r, 7, 6) for r in members])
expected = gossip_trajectory(x0, phases, 4, 9)
x = torch.from_numpy(x0[members.index(rank)].copy())
err = 0.0
for r in range(9):
    x = hvd.group_allreduce(x, name="w", group_size=2, sync_period=4, process_set=mine)
    err = max(err, float(np.abs(x.numpy() - expected[r][members.index(rank)]).max()))
    world().Barrier()
# Wait-avoiding global rounds over the process set: the same exact trajectory, each
# call served by its own round (lockstep), the set's global rounds over its 3 ranks.
x = torch.from_numpy(x0[members.index(rank)].copy())
err_wa, served = 0.0, []
for r in range(9):
    h = hvd.group_allreduce_async(x, name="wg", group_size=2, sync_period=4,
                                  process_set=mine, global_rounds="wait_avoiding")
    x = hvd.synchronize(h)
    served.append(h.round)
    err_wa = max(err_wa, float(np.abs(x.numpy() - expected[r][members.index(rank)]).max()))
    world().Barrier()
out = {"max_err": err, "max_err_wa": err_wa, "served_wa": served}
try:
    hvd.group_allreduce(torch.ones(2), name="outsider", process_set=evens)
    out["outsider"] = None
except ValueError as e:
    out["outsider"] = str(e)
# Ranks that disagree on a stream's process set (overlapping sets, one name): an error
# naming the process set on every rank, not a wait.
try:
    hvd.group_allreduce(torch.ones(2), name="set_mismatch",
                        process_set=low if rank in low.ranks else mine)
    out["set_mismatch"] = None
except Exception as e:  # noqa: BLE001 - the test checks the text
    out["set_mismatch"] = f"{type(e).__name__}: {e}"
# The registrar (rank 0) stays until every rank heard its verdict: leaving at once, it
# would answer a late registration with "rank 0 left without join()" instead (seen
# on Gloo).
world().Barrier()
emit(rank, **out)
