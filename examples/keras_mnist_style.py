"""Horovod's Keras MNIST example, on generated data, with the import and one line
swapped for WAGMA.

    mpirun -np 4 --oversubscribe python examples/keras_mnist_style.py --optimizer wagma

``--optimizer horovod`` runs the plain Horovod script (``horovod.tensorflow.keras``
and ``hvd.DistributedOptimizer``); ``--optimizer wagma`` imports
``horovod_wagma.keras as hvd`` instead and uses ``hvd.DistributedWagmaOptimizer``.
``--straggle S`` makes one rank per step (from a seed every rank shares) sleep S
seconds before the step. The data matches examples/pytorch_mnist_style.py.
"""
import argparse
import json
import os
import random
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
p = argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--optimizer", choices=["horovod", "wagma"], default="wagma")
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--train-size", type=int, default=8192)
p.add_argument("--straggle", type=float, default=0.0)
p.add_argument("--group-size", type=int, default=None)
p.add_argument("--sync-period", type=int, default=10)
p.add_argument("--seed", type=int, default=42)
p.add_argument("--eager", action="store_true", help="run_eagerly=True (default: graph)")
p.add_argument("--json", default=None)
args = p.parse_args()

if args.optimizer == "wagma":
    import horovod_wagma.keras as hvd       # the swapped import (imports TF with Keras 2)
else:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # Horovod's Keras needs Keras 2
    import horovod.tensorflow.keras as hvd
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

hvd.init()
tf.random.set_seed(args.seed)
tf.config.threading.set_intra_op_parallelism_threads(1)


def make_dataset(n, seed, noise=1.6):
    templates = np.random.default_rng(1234).standard_normal((10, 64)).astype("float32")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    return templates[y] + noise * rng.standard_normal((n, 64)).astype("float32"), y


x, y = make_dataset(args.train_size, args.seed)
x_test, y_test = make_dataset(2048, args.seed + 1)
x, y = x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()]

model = tf.keras.Sequential([
    tf.keras.layers.Input((64,)),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
opt = tf.keras.optimizers.SGD(learning_rate=args.lr * hvd.size() ** 0.5, momentum=0.9)
if args.optimizer == "wagma":
    opt = hvd.DistributedWagmaOptimizer(opt, group_size=args.group_size,
                                        sync_period=args.sync_period)
else:
    opt = hvd.DistributedOptimizer(opt)
model.compile(optimizer=opt, run_eagerly=args.eager, metrics=["accuracy"],
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))


class Straggler(tf.keras.callbacks.Callback):
    def __init__(self, seconds):
        super().__init__()
        self.seconds, self.rng = seconds, random.Random(args.seed)

    def on_train_batch_begin(self, batch, logs=None):
        if self.seconds and self.rng.randrange(hvd.size()) == hvd.rank():
            time.sleep(self.seconds)


callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), Straggler(args.straggle)]
if args.optimizer == "wagma":
    callbacks += [hvd.callbacks.WagmaGlobalSyncCallback(),
                  hvd.callbacks.MetricAverageCallback()]
t0 = time.monotonic()
history = model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, shuffle=True,
                    callbacks=callbacks, verbose=2 if hvd.rank() == 0 else 0)
elapsed = time.monotonic() - t0
steps = args.epochs * (len(x) // args.batch_size + (len(x) % args.batch_size > 0))
_, acc = model.evaluate(x_test, y_test, verbose=0)
acc = float(hvd.allreduce(tf.constant(acc), op=hvd.Average, name="test_acc"))
summary = dict(optimizer=args.optimizer, ranks=hvd.size(), steps=steps,
               steps_per_s=steps / elapsed, seconds=elapsed, accuracy=acc)
if hvd.rank() == 0:
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f)
