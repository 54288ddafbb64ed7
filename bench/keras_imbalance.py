#!/usr/bin/env python
"""Keras training throughput under load imbalance: WAGMA vs Horovod.

The Keras counterpart of bench/imbalance.py (PyTorch). A Horovod Keras script that
trains with ``model.fit`` (graph mode) swaps ``hvd.DistributedOptimizer`` for
``horovod_wagma.keras.DistributedWagmaOptimizer``; how many samples per second does
that buy when ranks are uneven?

What is measured
----------------
P ranks train a small Keras MLP (128 -> 512 -> 10, 71,178 float32 parameters, about
280 KB) on tiny synthetic batches (16 samples per rank) with ``model.fit``, compiled to
a graph (``run_eagerly=False``). A sleep stands in for accelerator compute: a
callback's ``on_train_batch_begin`` sleeps the scheduled time before every batch. The
forward and backward passes and the optimizer step are real (inside Keras' train
function), but the sleeps dominate. The imbalance pattern (``--pattern random``: the
paper's per-step random delays; ``persistent``: fixed slow ranks), the timed windows,
the ideals, the targets and the outputs are those of the shared harness, documented
in bench/harness.py. The figure is samples/s summed over ranks, next to the pattern's
ideal.

Methods (``--methods``), run one after another in the same launch, each on a freshly
built model (same initial weights on every rank, broadcast from rank 0 as well) with
the same schedule:

* ``horovod``     ``horovod.tensorflow.keras.DistributedOptimizer``: a gradient
                  allreduce every step, so every step waits for its slowest rank.
* ``wagma``       ``horovod_wagma.keras.DistributedWagmaOptimizer(group_size=S,
                  sync_period=tau)``: wait-avoiding group model averaging, a blocking
                  global average every tau steps (the paper).
* ``wagma_wa``    the same with ``global_rounds="wait_avoiding"``: fast ranks run
                  ahead. Its timed ``fit`` gets more steps than the wall-time window
                  allows, and the callback sets ``model.stop_training`` once the
                  deadline has passed; then ``model.optimizer.join()``.
* ``wagma_sync``  (not in the default list) ``wait_avoiding=False``: group rounds wait
                  for every group member.

Timing: each method first runs a warm-up ``fit`` of tau steps (it traces the train
function, which takes a while, and covers WAGMA's global rounds 0 and tau-1), then a
timed ``fit``. The callback opens the window (barrier, time stamp) in
``on_train_batch_begin`` of the first batch, before its sleep, and records each batch
in ``on_train_batch_end``; the lockstep window closes there (barrier) after the last
batch, so ``fit``'s set-up and tear-down are outside it. The wall time of the whole
timed ``fit`` (max over ranks) is reported as ``fit st/s`` (mean steps per rank / that
time). The train function must not be retraced by the second ``fit``; its tracing
count is checked and reported. Per step and rank two phases are timed: ``sleep`` and
``train`` (end of the sleep to the end of the batch: forward, backward, optimizer step,
averaging, waiting, and Keras' per-batch overhead); ``ideal(meas)`` uses the sleeps.

The input is a small repeated ``tf.data`` pipeline with tf.data autotuning switched
off: with it on, deleting the iterator at the end of a ``fit`` blocked one random rank
for seconds (in ``~IteratorResource``, waiting for a tf.data background thread) on
this oversubscribed host, which inflated the ``fit`` wall time (not the window).

Run
---
    python bench/keras_imbalance.py [--np 8] [--pattern random|persistent]
        [--slow-ranks K|half] [--slow-factor F] [--steps 200] [--sync-period 10]
        [--delay 0.040] [--step-time 0.010] [--num-delayed 2] [--seed 0]
        [--window SECONDS] [--methods horovod,wagma,wagma_wa] [--group-size S]
        [--trials 1] [--json PATH] [--plot PATH]

Run directly, the script re-launches itself under ``mpirun -np NP --oversubscribe``
with the environment this machine needs (run-as-root, ``OMPI_MCA_mpi_yield_when_idle=1``,
``TF_CPP_MIN_LOG_LEVEL=3``; DESIGN.md section 5). Started by mpirun, it uses the world
size it is given. Rank 0 prints the table and writes
bench/results/keras_imbalance_<pattern>_P{P}.json and .png (by default). Importing
TensorFlow on 8 ranks of a 2-core host alone takes about a minute.
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
import harness  # noqa: E402
import time

IN_FEATURES, HIDDEN, CLASSES = 128, 512, 10   # 71,178 parameters
SAMPLES = 8 * harness.BATCH                   # 8 distinct batches per rank, repeated
LR = 0.01


def make_model(tf, prefix):
    """The MLP, with layer names that are the same on every rank (Horovod names its
    broadcasts and allreduces after the variables)."""
    tf.keras.utils.set_random_seed(1234)  # the same initial model for every method
    return tf.keras.Sequential([
        tf.keras.layers.Input((IN_FEATURES,)),
        tf.keras.layers.Dense(HIDDEN, activation="relu", name=f"{prefix}_hidden"),
        tf.keras.layers.Dense(CLASSES, name=f"{prefix}_out"),
    ], name=prefix)


def make_dataset(tf, np, rank):
    rng = np.random.default_rng(100 + rank)
    x = rng.standard_normal((SAMPLES, IN_FEATURES)).astype("float32")
    y = rng.integers(0, CLASSES, SAMPLES).astype("int64")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(harness.BATCH).repeat()
    # No tf.data autotuning: its background thread can make the iterator's destructor
    # (at the end of each fit) block for seconds on an oversubscribed host.
    options = tf.data.Options()
    options.autotune.enabled = False
    options.experimental_optimization.inject_prefetch = False
    return ds.with_options(options)


def make_callback(tf, rank):
    """A callback that sleeps the scheduled compute before every batch and, in the
    timed fit, drives the harness's window."""

    class ImbalanceCallback(tf.keras.callbacks.Callback):
        def setup(self, nominal, window=None):
            self.nominal, self.window, self.loss = nominal, window, None
            return self

        def on_train_batch_begin(self, batch, logs=None):
            if self.window is not None and batch == 0:
                self.window.open()
            t0 = time.perf_counter()
            time.sleep(self.nominal(batch))  # stand-in for compute; the delay first
            self._t1 = time.perf_counter()
            self._sleep = self._t1 - t0

        def on_train_batch_end(self, batch, logs=None):
            if logs and "loss" in logs:
                self.loss = float(logs["loss"])   # also waits for the step to finish
            if self.window is not None and not self.window.record(
                    self._sleep, time.perf_counter() - self._t1):
                self.model.stop_training = True

    return ImbalanceCallback()


def tracing_count(model):
    fn = getattr(model, "train_function", None)
    get = getattr(fn, "experimental_get_tracing_count", None)
    return int(get()) if get else -1


class KerasImbalance(harness.Benchmark):
    name = "keras_imbalance"
    framework = "Keras model.fit"
    methods = ("horovod", "wagma", "wagma_wa", "wagma_sync")
    default_methods = ("horovod", "wagma", "wagma_wa")
    default_trials = 1
    phases = ("sleep", "train")
    env = {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def setup(self, args, comm):
        from mpi4py import MPI
        t_import = time.perf_counter()
        import horovod_wagma.keras as hvd          # before TF: sets TF_USE_LEGACY_KERAS=1
        import horovod.tensorflow.keras as hvd_keras
        import numpy as np
        import tensorflow as tf
        tf.get_logger().setLevel("ERROR")  # no "callback is slow" warnings: it sleeps
        tf.config.threading.set_intra_op_parallelism_threads(1)
        hvd.init()
        self.hvd, self.hvd_keras, self.np, self.tf = hvd, hvd_keras, np, tf
        self.rank = comm.Get_rank()
        import_s = comm.allreduce(time.perf_counter() - t_import, op=MPI.MAX)
        # Not make_model: building a model on rank 0 only would shift Keras' names.
        nparams = (IN_FEATURES + 1) * HIDDEN + (HIDDEN + 1) * CLASSES
        return (f"MLP {nparams} params ({nparams * 4 / 1024:.0f} KB), graph mode; TF "
                f"{tf.__version__}, tf.keras = {tf.keras.__name__}, imports + init "
                f"{import_s:.0f} s")

    def stream_stats(self):
        return self.hvd.stats()

    def build(self, name, trial, args):
        """A compiled model for method ``name``."""
        tf = self.tf
        model = make_model(tf, f"{name}_t{trial}")
        opt = tf.keras.optimizers.SGD(learning_rate=LR)
        if name == "horovod":
            opt = self.hvd_keras.DistributedOptimizer(opt)
        else:
            kw = dict(global_rounds=harness.wagma_global_rounds(name))
            opt = self.hvd.DistributedWagmaOptimizer(
                opt, group_size=args.group_size, sync_period=args.sync_period,
                wait_avoiding=(name != "wagma_sync"), **kw)
        model.compile(optimizer=opt, run_eagerly=False,
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    def run_method(self, name, trial, args, warm_sched, window):
        t_build = time.perf_counter()
        model = self.build(name, trial, args)
        data = make_dataset(self.tf, self.np, self.rank)
        cb = make_callback(self.tf, self.rank)
        tau = args.sync_period
        # Warm-up fit: traces the train function; WAGMA's rounds 0 and tau-1 (global).
        cb.setup(lambda t: warm_sched[t, self.rank])
        model.fit(data, epochs=1, steps_per_epoch=tau, verbose=0, callbacks=[
            self.hvd_keras.callbacks.BroadcastGlobalVariablesCallback(0), cb])
        warmup_s = time.perf_counter() - t_build
        traces_warm = tracing_count(model)
        cb.setup(window.nominal, window)
        t_fit = time.perf_counter()
        model.fit(data, epochs=1, steps_per_epoch=window.planned_steps, verbose=0,
                  callbacks=[cb])
        fit_wall = time.perf_counter() - t_fit
        window.finish(None if window.lockstep else model.optimizer.join)
        return dict(fit_wall_s=fit_wall, warmup_s=warmup_s, loss=cb.loss,
                    traces=(traces_warm, tracing_count(model)))

    def progress(self, rec):
        return (f"; fit st/s {fit_rate(rec):.1f}, warm-up "
                f"{max(e['warmup_s'] for e in rec['extra']):.0f} s")

    def notes(self, rec):
        retraced = [r for r, e in enumerate(rec["extra"]) if e["traces"][1] != e["traces"][0]]
        return (f"fit st/s {fit_rate(rec):.1f}"
                + (f" RETRACED on ranks {retraced}" if retraced else ""))


def fit_rate(rec):
    """Mean steps per rank over the timed fit's wall time (max over ranks)."""
    steps = sum(rec["steps_per_rank"]) / len(rec["steps_per_rank"])
    return steps / max(e["fit_wall_s"] for e in rec["extra"])


if __name__ == "__main__":
    harness.main(KerasImbalance(), __file__, __doc__.split("\n\n")[0])
