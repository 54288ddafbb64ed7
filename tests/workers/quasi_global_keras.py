"""Quasi-global momentum with Keras SGD: in model.fit (graph mode) and in an eager
GradientTape loop, every step's velocity must equal
beta * v_old + (1 - beta) * (x_after_averaging - x_before_step), read eagerly around
the step; with "never" it must not (the check can fail). Also the refused
optimizers and modes."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import horovod_wagma.keras as hvd  # noqa: E402  (before TensorFlow: Keras 2)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import emit, error  # noqa: E402

hvd.init()
rank = hvd.rank()
BETA = 0.9
out = {}


def setup(mode, nesterov=False):
    tf.random.set_seed(rank)  # different initial models per rank
    model = tf.keras.Sequential([tf.keras.layers.Input((3,)),
                                 tf.keras.layers.Dense(8, activation="tanh"),
                                 tf.keras.layers.Dense(2)])
    opt = hvd.DistributedWagmaOptimizer(
        tf.keras.optimizers.SGD(0.1, momentum=BETA, nesterov=nesterov), group_size=2,
        sync_period=3, average_optimizer_state=mode)
    return model, opt


def velocities(opt, model):
    if not getattr(opt, "_built", False):
        return [np.zeros(v.shape, v.dtype.as_numpy_dtype) for v in model.trainable_variables]
    return [opt.momentums[opt._index_dict[opt._var_key(v)]].numpy()
            for v in model.trainable_variables]


class Residual:
    """Max over steps and elements of |v - (beta v_old + (1 - beta)(x_after - x_before))|,
    and of |x_after - x_before| (the steps are not trivially zero)."""
    def __init__(self, model, opt):
        self.model, self.opt, self.max, self.moved, self.steps = model, opt, 0.0, 0.0, 0

    def before(self):
        self.x0 = [v.numpy() for v in self.model.trainable_variables]
        self.v0 = velocities(self.opt, self.model)

    def after(self):
        x1 = [v.numpy() for v in self.model.trainable_variables]
        for v, v0, x0, x in zip(velocities(self.opt, self.model), self.v0, self.x0, x1):
            expected = BETA * v0 + (1 - BETA) * (x - x0)
            self.max = max(self.max, float(np.abs(v - expected).max()))
            self.moved = max(self.moved, float(np.abs(x - x0).max()))
        self.steps += 1


def data(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype("float32")
    return x, np.stack([x[:, 0] * x[:, 1], x[:, 2]], axis=1).astype("float32")


def fit(mode):
    model, opt = setup(mode)
    model.compile(optimizer=opt, loss="mse")
    res = Residual(model, opt)

    class Record(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            res.before()

        def on_train_batch_end(self, batch, logs=None):
            res.after()
    x, y = data(rank, 96)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[Record()])
    opt.join()  # see eager()
    return dict(residual=res.max, moved=res.moved, steps=res.steps)


def eager(mode, nesterov):
    model, opt = setup(mode, nesterov)
    res = Residual(model, opt)
    x, y = data(10 + rank, 80)
    for step in range(5):
        xb, yb = x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]
        res.before()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(xb) - yb) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        res.after()
    # Lagging ranks skip rounds, so equal step counts can end in different rounds;
    # without join() a rank that exits first fails a peer still in a later one (seen
    # under Gloo: "rank 1 left without join()").
    opt.join()
    return dict(residual=res.max, moved=res.moved, steps=res.steps)


for mode in ("quasi_global", "never"):
    out[f"fit_{mode}"] = fit(mode)
    out[f"eager_{mode}"] = eager(mode, nesterov=True)

sgd = tf.keras.optimizers.SGD
out["adam"] = error(lambda: hvd.DistributedWagmaOptimizer(
    tf.keras.optimizers.Adam(), average_optimizer_state="quasi_global"))
out["no_momentum"] = error(lambda: hvd.DistributedWagmaOptimizer(
    sgd(0.1), average_optimizer_state="quasi_global"))
out["legacy"] = error(lambda: hvd.DistributedWagmaOptimizer(
    tf.keras.optimizers.legacy.SGD(0.1, momentum=0.9), average_optimizer_state="quasi_global"))
for mode in ("on_sync", "always", "bogus"):
    out[mode] = error(lambda: hvd.DistributedWagmaOptimizer(
        sgd(0.1, momentum=0.9), average_optimizer_state=mode))
emit(rank, **out)
