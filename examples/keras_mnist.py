"""Horovod's Keras MNIST example (examples/tensorflow2/tensorflow2_keras_mnist.py in
Horovod), on generated MNIST-shaped data, with the optimizer line swapped for WAGMA.

    mpirun -np 4 --oversubscribe python examples/keras_mnist.py
    mpirun -np 4 --oversubscribe python examples/keras_mnist.py --optimizer horovod

Everything else is Horovod's script: the same network, Adam with the lr scaled by the
number of ranks, and its callbacks: the broadcast of the initial variables, the
metric average at each epoch end, the learning-rate warmup and a checkpoint written
by rank 0.

The import is ``horovod_wagma.keras`` (all of ``horovod.tensorflow.keras``, plus
WAGMA) for both optimizers: on TensorFlow 2.21 Horovod's own metric average and
warmup callbacks fail (they call Keras 3's backend while the model is Keras 2);
``horovod_wagma.keras.callbacks`` has working ones under the same names.

Additions for this repository: ``--optimizer horovod|wagma``; ``--straggle S`` makes
one rank per step (from a seed every rank shares) sleep S seconds; ``--json`` writes
a summary on rank 0; ``--checkpoint-dir``. The data matches examples/pytorch_mnist.py.
"""
import argparse
import json
import os
import random
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import horovod_wagma.keras as hvd  # noqa: E402 (imports TensorFlow with Keras 2)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=256,
                    help="steps per epoch over all ranks (Horovod's: 500)")
parser.add_argument("--optimizer", choices=["horovod", "wagma"], default="wagma")
parser.add_argument("--straggle", type=float, default=0.0)
parser.add_argument("--group-size", type=int, default=None)
parser.add_argument("--sync-period", type=int, default=10)
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--checkpoint-dir", default=None)
parser.add_argument("--json", default=None)
args = parser.parse_args()


def generated_mnist(n, seed):
    """28x28 uint8 images and labels 0-9: per class a fixed pattern of random blobs,
    shifted by up to two pixels and noised per sample (as examples/pytorch_mnist.py)."""
    rng = np.random.default_rng(1234)  # the same classes everywhere
    templates = (rng.random((10, 28, 28)) > 0.9).astype("float32")
    kernel = np.ones(5, "float32") / 5
    for axis in (1, 2):
        templates = np.apply_along_axis(np.convolve, axis, templates, kernel, "same")
    templates /= templates.max(axis=(1, 2), keepdims=True)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = np.stack([np.roll(templates[c], tuple(rng.integers(-2, 3, 2)), (0, 1)) for c in y])
    x = np.clip(x + 0.4 * rng.standard_normal(x.shape), 0, 1)
    return (x * 255).astype("uint8"), y


# Horovod: initialize Horovod.
hvd.init()
tf.random.set_seed(args.seed)
tf.config.threading.set_intra_op_parallelism_threads(1)

mnist_images, mnist_labels = generated_mnist(4096, seed=args.seed + hvd.rank())
dataset = tf.data.Dataset.from_tensor_slices(
    (tf.cast(mnist_images[..., tf.newaxis] / 255.0, tf.float32),
     tf.cast(mnist_labels, tf.int64)))
dataset = dataset.repeat().shuffle(10000, seed=args.seed).batch(args.batch_size)

mnist_model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(32, [3, 3], activation="relu", input_shape=(28, 28, 1)),
    tf.keras.layers.Conv2D(64, [3, 3], activation="relu"),
    tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
    tf.keras.layers.Dropout(0.25),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(10, activation="softmax")
])

# Horovod: adjust learning rate based on number of GPUs.
scaled_lr = 0.001 * hvd.size()
opt = tf.optimizers.Adam(scaled_lr)

# Horovod: add Horovod DistributedOptimizer.
if args.optimizer == "horovod":
    opt = hvd.DistributedOptimizer(opt, backward_passes_per_step=1,
                                   average_aggregated_gradients=True)
else:  # the swapped line
    opt = hvd.DistributedWagmaOptimizer(opt, backward_passes_per_step=1,
                                        average_aggregated_gradients=True,
                                        group_size=args.group_size,
                                        sync_period=args.sync_period)

mnist_model.compile(loss=tf.losses.SparseCategoricalCrossentropy(),
                    optimizer=opt, metrics=["accuracy"])


class Straggler(tf.keras.callbacks.Callback):
    """This repository's addition: one rank per step sleeps (uneven hardware)."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds, self.rng = seconds, random.Random(args.seed)

    def on_train_batch_begin(self, batch, logs=None):
        if self.seconds and self.rng.randrange(hvd.size()) == hvd.rank():
            time.sleep(self.seconds)


callbacks = [
    # Horovod: broadcast initial variable states from rank 0 to all other processes.
    hvd.callbacks.BroadcastGlobalVariablesCallback(0),
    # Horovod: average metrics among workers at the end of every epoch.
    hvd.callbacks.MetricAverageCallback(),
    # Horovod: using `lr = 1.0 * hvd.size()` from the very beginning leads to worse
    # final accuracy. Scale the learning rate `lr = 1.0` ---> `lr = 1.0 * hvd.size()`
    # during the first three epochs.
    hvd.callbacks.LearningRateWarmupCallback(initial_lr=scaled_lr, warmup_epochs=3,
                                             verbose=1),
    Straggler(args.straggle),
]

# Horovod: save checkpoints only on worker 0 to prevent other workers from corrupting
# them.
checkpoint_dir = args.checkpoint_dir or tempfile.mkdtemp(prefix="keras_mnist_")
if hvd.rank() == 0:
    callbacks.append(tf.keras.callbacks.ModelCheckpoint(
        os.path.join(checkpoint_dir, "checkpoint-{epoch}.h5")))

# Horovod: write logs on worker 0.
verbose = 2 if hvd.rank() == 0 else 0

t0 = time.monotonic()
history = mnist_model.fit(dataset, steps_per_epoch=args.steps // hvd.size(),
                          callbacks=callbacks, epochs=args.epochs, verbose=verbose)
elapsed = time.monotonic() - t0
steps = args.epochs * (args.steps // hvd.size())
summary = dict(optimizer=args.optimizer, ranks=hvd.size(), steps=steps,
               steps_per_s=steps / elapsed, seconds=elapsed,
               accuracy=float(history.history["accuracy"][-1]),
               checkpoints=sorted(os.listdir(checkpoint_dir)) if hvd.rank() == 0 else None)
if hvd.rank() == 0:
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f)
