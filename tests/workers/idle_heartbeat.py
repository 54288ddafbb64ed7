"""An engine left idle while Horovod elastic's liveness heartbeat runs (the job's
set-up, evaluation, data loading): how often its loop ran over 3 s, once past the
pacer's two idle seconds. argv: seconds idle before measuring."""
import sys
import time

import horovod.torch as hvd
import horovod_wagma.torch as wagma
from horovod_wagma.common.op import engine_lib

from common import emit

wagma.init()
time.sleep(float(sys.argv[1]))
before, t0 = engine_lib.stats(), time.monotonic()
time.sleep(3.0)
after, seconds = engine_lib.stats(), time.monotonic() - t0
emit(hvd.rank(),
     passes_per_s=(after["loop_iterations"] - before["loop_iterations"]) / seconds,
     sleeps_per_s=(after["sleeps"] - before["sleeps"]) / seconds)
