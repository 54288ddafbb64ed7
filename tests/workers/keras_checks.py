"""Keras scenarios: the optimizer in graph mode (model.fit) and eager mode
(GradientTape), the callbacks, and the Keras 3 guard."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
scenario = sys.argv[1]

import horovod_wagma.keras as hvd  # noqa: E402  (before TensorFlow: Keras 2)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from mpi4py import MPI  # noqa: E402

from common import emit  # noqa: E402

hvd.init()
rank, size = hvd.rank(), hvd.size()
comm = MPI.COMM_WORLD
tf.random.set_seed(rank)  # different initial models per rank


def all_equal(variables):
    data = b"".join(v.numpy().tobytes() for v in variables)
    return all(d == data for d in comm.allgather(data))


def data(seed, n=256):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8)).astype("float32")
    return x, (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0).astype("int64")


def make_model():
    m = tf.keras.Sequential([tf.keras.layers.Input((8,)),
                             tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Dense(3)])
    return m


out = {}
model = make_model()
wa_knobs = dict(global_rounds="wait_avoiding", compression=hvd.Compression.fp16) \
    if scenario.startswith("wa_") else dict(global_rounds="blocking")  # exact globals
opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9),
                                    group_size=2, sync_period=4, **wa_knobs)
if scenario == "fit":
    model.compile(optimizer=opt, metrics=["accuracy"],
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = data(rank)  # different data per rank: local metrics differ
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[
        hvd.callbacks.WagmaGlobalSyncCallback(),
        hvd.callbacks.MetricAverageCallback(),
        hvd.callbacks.WagmaStatsCallback()])
    out["identical_after_sync"] = all_equal(model.variables)
    losses = comm.allgather(history.history["loss"][-1])
    out["loss_averaged"] = max(losses) - min(losses) < 1e-6
    out["stats_keys"] = sorted(k for k in history.history if k.startswith("wagma_"))
    out["rounds"] = history.history["wagma_rounds"]
    out["accuracy"] = history.history["accuracy"][-1]
elif scenario == "eager":
    x, y = data(rank)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    identical = []
    for step in range(8):
        xb, yb = x[step * 32:(step + 1) * 32], y[step * 32:(step + 1) * 32]
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        if step == 0 or (step + 1) % 4 == 0:  # global rounds
            identical.append(all_equal(model.trainable_variables))
    out["identical_at_global_rounds"] = identical
    opt.sync(model.variables)
    out["identical_after_sync"] = all_equal(model.variables)
elif scenario == "uneven":
    # Rank r has 4 + 3r batches, then joins: its model keeps serving the others.
    x, y = data(rank)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    steps = 4 + 3 * rank
    for step in range(steps):
        xb, yb = x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    out["last"] = opt.join()
    out["round"] = int(opt._wagma["round"].numpy())
    out["joins"] = sum(s["passive_joins"] for s in hvd.stats().values())
    opt.sync(model.variables)
    out["identical_after_sync"] = all_equal(model.variables)
elif scenario == "wa_fit_straggler":
    # model.fit (graph mode) with wait-avoiding global rounds and fp16 on the wire: the
    # last rank is 4x slower and has a quarter of the batches; it skips rounds, then
    # every rank joins and sync() makes the models identical.
    import time
    slow = rank == size - 1
    x, y = data(rank, n=64 if slow else 256)

    class Compute(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            time.sleep(0.04 if slow else 0.01)

    model.compile(optimizer=opt,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[Compute()])
    out["own_steps"] = int(opt._wagma["round"].numpy())
    out["last"] = opt.join()
    opt.sync(model.variables)
    out["identical_after_sync"] = all_equal(model.variables)
    st = hvd.stats()
    model_stream = next(k for k in st if k.endswith(".model0"))
    out["skipped"] = st[model_stream]["rounds_skipped"]
    out["age_max"] = st[model_stream]["contribution_age_max"]
emit(rank, **out)
