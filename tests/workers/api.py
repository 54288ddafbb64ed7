"""API behaviour: interleaved streams, in-place and non-contiguous tensors, poll."""
import time

import numpy as np
import torch

from common import emit, horovod_process_set_table, initial_value
from world import on_gloo, world
from reference import gossip_trajectory

import horovod_wagma.torch as hvd

# On Gloo init() registers the groups' process sets only when they are dynamic
# (basics.py says why); group_process_set() is tested below. On MPI the user lists
# one of the groups itself (phase 1's [0, 2] at P=4, S=2): init registers the others,
# and that one only once (docs/api.md).
LISTED = [0, 2]
listed = None if on_gloo() else hvd.ProcessSet(LISTED)
hvd.init(group_size=2, sync_period=4, process_sets="dynamic" if on_gloo() else [listed])
comm = world()
rank, size = hvd.rank(), hvd.size()
phases = hvd.groups(size, 2)
out = {}

# 1. Several streams, enqueued in a different order on every rank, all async.
ROUNDS = 9
specs = {"a": (5,), "b": (3, 4), "c": (70000,)}  # c takes the large-tensor path
expected, values = {}, {}
for i, (name, shape) in enumerate(specs.items()):
    n = int(np.prod(shape))
    x0 = np.stack([initial_value(r, n, size) + 100 * i for r in range(size)])
    expected[name] = gossip_trajectory(x0, phases, 4, ROUNDS)
    values[name] = torch.from_numpy(x0[rank].reshape(shape).copy())
order = list(specs)
errors = []
for r in range(ROUNDS):
    perm = order[rank % 3:] + order[:rank % 3]
    if rank % 2:
        perm.reverse()
    handles = {name: hvd.group_allreduce_async(values[name], name=name) for name in perm}
    for name in reversed(perm):
        values[name] = hvd.synchronize(handles[name])
        err = np.abs(values[name].numpy().ravel() - expected[name][r][rank]).max()
        errors.append(float(err))
    comm.Barrier()
out["interleaved_max_err"] = max(errors)

# 2. In place: the result is written into the caller's tensor, which is returned.
t = torch.full((6,), float(rank), dtype=torch.float64)
h = hvd.group_allreduce_async_(t, name="inplace")
res = hvd.synchronize(h)
out["inplace_is_same_object"] = res is t
out["inplace_value"] = t.tolist()
out["inplace_expected"] = [float(np.mean(range(size)))] * 6

# 3. Non-contiguous inputs, out of place and in place.
base = torch.arange(24, dtype=torch.float32).reshape(4, 6) + 10 * rank
view = base.t()  # non-contiguous
assert not view.is_contiguous()
y = hvd.group_allreduce(view, name="noncontig")
out["noncontig_err"] = float((y - (view - 10 * rank + 10 * np.mean(range(size)))).abs().max())
strided = (torch.arange(20, dtype=torch.float32) + rank)[::2]
hvd.group_allreduce_(strided, name="noncontig_inplace")
out["noncontig_inplace_err"] = float(
    (strided - (torch.arange(20, dtype=torch.float32)[::2] + np.mean(range(size)))).abs().max())

# 4. poll before completion: round 0 is global, so it cannot finish before the last
#    rank enters, which sleeps first.
comm.Barrier()
if rank == size - 1:
    time.sleep(1.0)
h = hvd.group_allreduce_async(torch.ones(3), name="poll")
out["poll_before"] = hvd.poll(h) if rank != size - 1 else False
hvd.synchronize(h)
out["poll_after"] = hvd.poll(h)

# 5. Horovod's own ops still work beside WAGMA's, including on a WAGMA group.
ps = hvd.group_process_set(0)
s = hvd.allreduce(torch.tensor([float(rank)]), op=hvd.Sum, process_set=ps)
out["group_ps_sum"] = float(s)
out["group_ps_expected"] = float(sum(next(g for g in phases[0] if rank in g)))
# Horovod's table of process sets (ranks of each, its global set included), and on MPI
# whether the listed group's set is the one group_process_set() hands out.
out["ps_table"] = horovod_process_set_table()
if listed is not None and rank in LISTED:
    out["listed_is_group"] = hvd.group_process_set(1).process_set_id == listed.process_set_id
    s = hvd.allreduce(torch.tensor([float(rank)]), op=hvd.Sum, process_set=listed)
    out["listed_sum"] = float(s)
emit(rank, **out)
