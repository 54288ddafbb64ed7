"""One interface to the torch and TensorFlow frontends, so that every worker (and so
every test) runs the same logic on both. The framework comes from the environment
variable WAGMA_TEST_FRAMEWORK ("torch" by default)."""
import os

import numpy as np

NAME = os.environ.get("WAGMA_TEST_FRAMEWORK", "torch")

if NAME == "torch":
    import torch
    import horovod_wagma.torch as hvd

    _DTYPES = {"float64": torch.float64, "float32": torch.float32,
               "float16": torch.float16, "bfloat16": torch.bfloat16, "int32": torch.int32}

    def tensor(array, dtype="float64"):
        return torch.from_numpy(np.array(array, dtype=np.float64)).to(_DTYPES[dtype])

    def zeros(shape, dtype="float32"):
        return torch.zeros(shape, dtype=_DTYPES[dtype])

    def numpy(t):
        return t.to(torch.float64).numpy()

    def group_allreduce_with_round(x, **kwargs):
        """(result, the round that served the call) from the handle."""
        h = hvd.group_allreduce_async(x, **kwargs)
        y = hvd.synchronize(h)
        return y, h.round
elif NAME == "tensorflow":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import horovod_wagma.tensorflow as hvd

    _DTYPES = {"float64": tf.float64, "float32": tf.float32, "float16": tf.float16,
               "bfloat16": tf.bfloat16, "int32": tf.int32}

    def tensor(array, dtype="float64"):
        return tf.cast(tf.constant(np.array(array, dtype=np.float64)), _DTYPES[dtype])

    def zeros(shape, dtype="float32"):
        return tf.zeros(shape, dtype=_DTYPES[dtype])

    def numpy(t):
        return tf.cast(t, tf.float64).numpy()

    def group_allreduce_with_round(x, **kwargs):
        """(result, the round that served the call) from the op's second output."""
        y, served = hvd.group_allreduce(x, return_round=True, **kwargs)
        return y, int(served)
else:
    raise ValueError(f"unknown WAGMA_TEST_FRAMEWORK {NAME!r}")

group_allreduce = hvd.group_allreduce
group_allreduce_async = hvd.group_allreduce_async
synchronize = hvd.synchronize
