"""Keras checkpoints that resume WAGMA's state (docs/api.md, "Checkpoints (Keras)"):
Horovod's recipe with TensorFlow's object-based checkpoints, on non-IID data, a small
MLP trained by model.train_on_batch (model.fit's train function), SGD with momentum
and drift correction 0.25. Every batch is a function of (rank, step) alone.

Usage: checkpoint_resume_keras.py MODE CKPT STEPS SAVE_AT
  MODE  full      train STEPS steps: the first SAVE_AT in one model.fit epoch whose
                  callbacks are WagmaGlobalSyncCallback(checkpoint=True) and, on rank 0,
                  ModelCheckpoint(CKPT, save_weights_only=True) (TensorFlow's format),
                  the rest by train_on_batch;
        saveplain the same SAVE_AT steps, then sync(model.variables) without
                  checkpoint=True, and rank 0 writes CKPT.plain with tf.train.Checkpoint:
                  the same model, state and step count, no variates;
        resume    first an optimizer with sync_period=5 must refuse CKPT; then every
                  rank restores CKPT (model.load_weights) and trains from SAVE_AT to
                  STEPS;
        plain     the same from CKPT.plain (tf.train.Checkpoint; variates at zero);
        size      restore CKPT (expected to refuse: another world size), then
                  WagmaGlobalSyncCallback(checkpoint=True) on a model compiled without
                  WAGMA (expected to refuse).
"""
import sys

import horovod_wagma.keras as hvd  # before TensorFlow: Keras 2
import numpy as np
import tensorflow as tf

from common import emit

hvd.init()
rank, size = hvd.rank(), hvd.size()
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()
mode, ckpt, steps, save_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
KNOBS = dict(sync_period=1, wait_avoiding=False, drift_correction=0.25)
CLASSES, FEATURES, BATCH = 4, 16, 32
centres = np.random.default_rng(7).normal(size=(CLASSES, FEATURES)).astype(np.float32) * 0.6


def batch(step):
    """Non-IID: 80% of rank r's samples are of class r mod 4."""
    g = np.random.default_rng(100003 * rank + step)
    own = g.random(BATCH) < 0.8
    labels = np.where(own, rank % CLASSES, g.integers(0, CLASSES, BATCH))
    x = centres[labels] + g.normal(size=(BATCH, FEATURES)).astype(np.float32)
    return x.astype(np.float32), labels.astype(np.int64)


def build(**knobs):
    tf.keras.utils.set_random_seed(0)  # the same initial model everywhere
    model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu",
                                                       input_shape=(FEATURES,)),
                                 tf.keras.layers.Dense(CLASSES)])
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9),
                                        **dict(KNOBS, **knobs))
    model.compile(optimizer=opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    return model, opt


def train(model, first, last, losses):
    for step in range(first, last):
        x, y = batch(step)
        losses.append(float(model.train_on_batch(x, y)))


def barrier(name):
    hvd.allreduce(tf.zeros([1]), name=name)  # the file is there for every rank


def restore(model, opt, path):
    """CKPT through model.load_weights (it was written by model.save_weights), the
    plain one through tf.train.Checkpoint (written by it)."""
    if path.endswith(".plain"):
        tf.train.Checkpoint(model=model, optimizer=opt).read(path).expect_partial()
    else:
        model.load_weights(path).expect_partial()


def refusal(path, **knobs):
    model, opt = build(**knobs)
    try:
        restore(model, opt, path)
    except hvd.CheckpointMismatch as e:  # exported as in horovod_wagma.torch
        return f"{type(e).__name__}: {e}"
    return None


def fit_to_save_point(model, callbacks):
    """SAVE_AT steps in one model.fit epoch, on the batches train() would use."""
    data = [batch(step) for step in range(save_at)]
    history = model.fit(np.concatenate([x for x, _ in data]),
                        np.concatenate([y for _, y in data]), batch_size=BATCH,
                        shuffle=False, epochs=1, verbose=0, callbacks=callbacks)
    return history.history["loss"]


losses, errors = [], {}
if mode == "full":
    model, opt = build()
    callbacks = [hvd.callbacks.WagmaGlobalSyncCallback(checkpoint=True)]
    if rank == 0:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(ckpt, save_weights_only=True))
    fit_to_save_point(model, callbacks)
    barrier("checkpoint.saved")
    train(model, save_at, steps, losses)
elif mode == "saveplain":
    model, opt = build()
    fit_to_save_point(model, [])
    opt.sync(model.variables)
    if rank == 0:
        tf.train.Checkpoint(model=model, optimizer=opt).write(ckpt + ".plain")
    barrier("checkpoint.saved")
elif mode in ("resume", "plain"):
    if mode == "resume":
        errors["knobs"] = refusal(ckpt, sync_period=5)
    model, opt = build()
    restore(model, opt, ckpt if mode == "resume" else ckpt + ".plain")
    train(model, save_at, steps, losses)
else:  # size
    errors["size"] = refusal(ckpt)
    model, opt = build()
    # The sync callback's checkpoint mode needs a WAGMA optimizer to gather from.
    plain_model = tf.keras.Sequential([tf.keras.layers.Dense(CLASSES, input_shape=(FEATURES,))])
    plain_model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    x, _ = batch(0)
    try:
        plain_model.fit(x, np.zeros((BATCH, CLASSES), np.float32), epochs=1, verbose=0,
                        callbacks=[hvd.callbacks.WagmaGlobalSyncCallback(checkpoint=True)])
        errors["callback"] = None
    except ValueError as e:
        errors["callback"] = str(e)
emit(rank, weights=[w.numpy().reshape(-1).tolist() for w in model.weights],
     losses=losses, steps=int(opt.wagma_status().steps), errors=errors)
