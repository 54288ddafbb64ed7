"""Bad input: each case must raise a clear error on every rank, never hang."""
import frameworks as fw
from common import capture as record, emit

hvd = fw.hvd
hvd.init(group_size=2, sync_period=4)
rank, size = hvd.rank(), hvd.size()
out = {}


def capture(key, fn):
    record(out, key, fn)


shape = (4,) if rank == 0 else (5,)
capture("shape", lambda: hvd.group_allreduce(fw.zeros(shape), name="bad_shape"))
dtype = "float32" if rank == 0 else "float64"
capture("dtype", lambda: hvd.group_allreduce(fw.zeros(3, dtype), name="bad_dtype"))
gs = 2 if rank == 0 else 3
capture("knob", lambda: hvd.group_allreduce(fw.zeros(3), name="bad_knob", group_size=gs))
# Calling again on a rejected stream fails fast with the same error.
capture("again", lambda: hvd.group_allreduce(fw.zeros(shape), name="bad_shape"))
capture("group_size", lambda: hvd.group_allreduce(fw.zeros(3), name="v1", group_size=1))
capture("sync_period", lambda: hvd.group_allreduce(fw.zeros(3), name="v2", sync_period=0))
capture("averaging", lambda: hvd.group_allreduce(fw.zeros(3), name="v3", averaging="median"))
mode = "blocking" if rank == 0 else "wait_avoiding"
capture("global_mismatch", lambda: hvd.group_allreduce(fw.zeros(3), name="bad_global",
                                                       global_rounds=mode))
ms = 3 if rank == 0 else 4
capture("staleness_mismatch", lambda: hvd.group_allreduce(
    fw.zeros(3), name="bad_staleness", global_rounds="wait_avoiding", max_staleness=ms))
# Every knob that shapes the rounds must agree; each mismatch names its knob.
sp = 4 if rank == 0 else 5
capture("sync_mismatch", lambda: hvd.group_allreduce(fw.zeros(3), name="bad_sync",
                                                     sync_period=sp))
rule = "fresh" if rank == 0 else "local"
capture("averaging_mismatch", lambda: hvd.group_allreduce(fw.zeros(3), name="bad_averaging",
                                                          averaging=rule))
wa = rank != 0
capture("wa_mismatch", lambda: hvd.group_allreduce(
    fw.zeros(3), name="bad_wa", wait_avoiding=wa, global_rounds="blocking"))
capture("global_rounds", lambda: hvd.group_allreduce(fw.zeros(3), name="v5",
                                                     global_rounds="never"))
capture("max_staleness", lambda: hvd.group_allreduce(
    fw.zeros(3), name="v6", global_rounds="wait_avoiding", max_staleness=-1))
capture("int_dtype", lambda: hvd.group_allreduce(fw.zeros(3, "int32"), name="v4"))
# Specs that differ although their buffers have the same size: two half types (2 bytes
# an element each), and one element count in two shapes. Round 0 compares the dtype and
# the shape themselves.
half = "float16" if rank == 0 else "bfloat16"
capture("half_dtype", lambda: hvd.group_allreduce(fw.zeros(3, half), name="bad_half"))
layout = (2, 3) if rank == 0 else (6,)
capture("layout", lambda: hvd.group_allreduce(fw.zeros(layout), name="bad_layout"))
# After all that, a good stream still works.
capture("good", lambda: hvd.group_allreduce(fw.zeros(3), name="good"))
emit(rank, **out)
