"""The op after a plain hvd.init(): the engine starts lazily on first use. Process sets
are registered only when Horovod runs with dynamic process sets."""
import sys

import horovod.torch as plain_hvd
import torch

from common import emit

mode = sys.argv[1]  # "static" or "dynamic"
if mode == "dynamic":
    plain_hvd.init(process_sets="dynamic")
else:
    plain_hvd.init()

import horovod_wagma.torch as hvd  # noqa: E402  (imported after Horovod on purpose)
from horovod_wagma.common.op import engine_lib  # noqa: E402

rank, size = hvd.rank(), hvd.size()
out = {"started_before": engine_lib.started()}
y = hvd.group_allreduce(torch.tensor([float(rank)]), name="lazy")
out["started_after"] = engine_lib.started()
out["round0"] = float(y)
if mode == "dynamic":
    hvd.init(group_size=2)  # registers the groups as dynamic process sets
try:
    ps = hvd.group_process_set(0)
    s = hvd.allreduce(torch.tensor([1.0]), op=hvd.Sum, process_set=ps)
    out["ps_size"] = float(s)
except Exception as e:  # noqa: BLE001
    out["ps_error"] = f"{type(e).__name__}: {e}"
emit(rank, **out)
