"""The Keras twin of group_second_moment.py (its docstring states the checks): one
Dense layer's kernel and bias as variables, eager GradientTape steps, tf.keras Adam."""
import sys

import horovod_wagma.keras as hvd  # Keras 2: before TensorFlow

import horovod.tensorflow as hvd_tf  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import capture, emit  # noqa: E402

hvd.init()
rank, size = hvd.rank(), hvd.size()
BETA2 = 0.99


def model_and_data():
    init = np.random.default_rng(0)
    w = tf.Variable(init.standard_normal((6, 3)).astype(np.float32) * 0.3)
    b = tf.Variable(np.zeros(3, np.float32))
    g = np.random.default_rng(100 + rank)
    x = g.standard_normal((6, 8, 6)).astype(np.float32)
    y = g.integers(0, 3, (6, 8))
    return [w, b], x, y


def train(mode):
    variables, x, y = model_and_data()
    kwargs = {"default": {}, "local": {"second_moment": "local", "drift_correction": 0},
              "group": {"second_moment": "group"}}[mode]
    opt = hvd.DistributedWagmaOptimizer(
        tf.keras.optimizers.Adam(0.05, beta_1=0.9, beta_2=BETA2), group_size=size,
        sync_period=4, wait_avoiding=False, **kwargs)
    opt.build(variables)
    slot = {v.ref(): opt._velocities[opt._index_dict[opt._var_key(v)]] for v in variables}
    diffs = []
    for step in range(6):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x[step], variables[0]) + variables[1]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y[step], logits=logits))
        grads = tape.gradient(loss, variables)
        before = [slot[v.ref()].numpy().copy() for v in variables]
        mean = [hvd_tf.allgather(g[None], name=f"k{mode}.g{step}.{k}").numpy().mean(0)
                for k, g in enumerate(grads)]
        own = [g.numpy() for g in grads]
        opt.apply_gradients(zip(grads, variables))
        row = {"group": 0.0, "local": 0.0}
        for k, v in enumerate(variables):
            after = slot[v.ref()].numpy()
            for key, g in (("group", mean[k]), ("local", own[k])):
                want = BETA2 * before[k] + (1 - BETA2) * g * g
                row[key] = max(row[key], float(np.abs(after - want).max() / np.abs(want).max()))
        diffs.append(row)
    v_all = np.concatenate([slot[v.ref()].numpy().reshape(-1) for v in variables])
    return dict(diffs=diffs, knob=opt._wagma["core"].knobs.second_moment, v=v_all.tolist())


def refused():
    out = {}
    capture(out, "sgd", lambda: hvd.DistributedWagmaOptimizer(
        tf.keras.optimizers.SGD(0.1, momentum=0.9), second_moment="group"))
    capture(out, "unknown", lambda: hvd.DistributedWagmaOptimizer(
        tf.keras.optimizers.Adam(), second_moment="global"))
    sgd = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.1))
    out["sgd_default"] = sgd._wagma["core"].knobs.second_moment
    return out


emit(rank, **{mode: refused() if mode == "refused" else train(mode) for mode in sys.argv[1:]})
