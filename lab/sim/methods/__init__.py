"""The methods' timing rules, one class per method (``METHOD_CLASSES``).

Each model is built with the Run (run.py) and gets ``call(rank, step, t)`` when a
rank's step reaches its communication at time t; it calls ``run.resume(rank, t')``
when that rank's call returns, and reports extra counters in ``stats()``.

* blocking.py: ``horovod`` and ``localsgd``, collectives over all ranks that start
  when the last rank arrives.
* wagma.py: ``wagma`` (blocking global rounds) and ``wagma_wa`` (wait-avoiding
  global rounds), and the group schedule.
* dpsgd.py: ``dpsgd``, synchronous D-PSGD on a ring (not measured).
"""
from .blocking import HorovodModel, LocalSGDModel
from .dpsgd import DPSGDModel
from .wagma import WagmaModel, WagmaWaitAvoidingModel


METHOD_CLASSES = {"horovod": HorovodModel, "localsgd": LocalSGDModel,
                  "wagma": WagmaModel, "wagma_wa": WagmaWaitAvoidingModel,
                  "dpsgd": DPSGDModel}
