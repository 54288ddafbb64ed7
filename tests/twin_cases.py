"""The twin-parity scenario that workers/twin_properties.py runs and
test_twin_properties.py models: the same knob cases, inputs and hyperparameters for the
torch and the Keras frontend."""
import numpy as np

STEPS, TAU = 7, 3
W = np.array([1.0, 0.5, 2.0, 1.5, 0.75])  # the gradient's per-parameter weight

# name -> (optimizer, state mode, drift alpha, fp16 on the wire, Keras in a tf.function)
# Learning rates and betas are powers of two or short binary fractions, exact in float32
# (Keras keeps the learning rate in a float32 variable).
CASES = {
    "sgdm.never": ("sgdm", "never", 0.0, False, False),
    "sgdm.on_sync": ("sgdm", "on_sync", 0.0, False, False),
    "sgdm.on_sync.drift": ("sgdm", "on_sync", 0.5, False, False),
    "sgdm.on_sync.drift.graph": ("sgdm", "on_sync", 0.5, False, True),
    "sgdm.quasi_global": ("sgdm", "quasi_global", 0.0, False, False),
    "adam.never": ("adam", "never", 0.0, False, False),
    "adam.on_sync": ("adam", "on_sync", 0.0, False, False),
    "adam.on_sync.drift": ("adam", "on_sync", 0.5, False, False),
    "sgd.fp16": ("sgd", "never", 0.0, True, False),
    "sgd.fp16.graph": ("sgd", "on_sync", 0.0, True, True),
    "sgd.fp32": ("sgd", "never", 0.0, False, False),
    "sgdm.always": ("sgdm", "always", 0.0, False, False),  # PyTorch only
}
HYPER = dict(sgdm=dict(lr=0.125, momentum=0.75), sgd=dict(lr=0.5),
             adam=dict(lr=0.0625, beta_1=0.75, beta_2=0.875))


# Per rank, not linear in the rank (else a group of ranks 0 and 2 would average to
# rank 1's values).
TARGETS = [[0.1, -0.7, 1.3, 0.45, -0.2], [1.9, 0.35, -1.1, 0.8, 2.6],
           [-0.6, 1.45, 0.9, -1.75, 0.05]]
STARTS = [[0.5, -1.0, 2.0, 0.25, 1.5], [1.25, -0.4, 0.3, 2.1, -0.9],
          [-0.35, 0.8, 1.1, -1.2, 0.6]]


def targets(r):
    return np.array(TARGETS[r])


def start(r):
    return np.array(STARTS[r])


KERAS_ONLY = {name for name, case in CASES.items() if case[4]}  # inside a tf.function
TORCH_ONLY = {"sgdm.always"}


def fake_gather(sampler, throughputs, synchronous=0.0):
    """A sampler's or sequence's epoch-end allgather, stood in for: every rank's row
    carries these throughputs, and ``synchronous`` as every rank's "trained without
    WAGMA" bit (one value for all, or one per rank)."""
    def allgather(row):
        rows = np.repeat(np.asarray(row, dtype=np.float64), len(throughputs), axis=0)
        rows[:, 1] = throughputs
        rows[:, 2] = synchronous
        return rows
    sampler._exchange._allgather = allgather
