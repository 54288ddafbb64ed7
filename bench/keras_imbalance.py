#!/usr/bin/env python
"""Keras training throughput under injected load imbalance: WAGMA vs Horovod.

The Keras counterpart of bench/imbalance.py (PyTorch). A Horovod Keras script that
trains with ``model.fit`` (graph mode) swaps ``hvd.DistributedOptimizer`` for
``horovod_wagma.keras.DistributedWagmaOptimizer``; how many steps per second does that
buy when ranks are uneven?

What is measured
----------------
P ranks train a small Keras MLP (128 -> 512 -> 10, 71,178 float32 parameters, about
280 KB) on tiny synthetic batches (16 samples) with ``model.fit``, compiled to a graph
(``run_eagerly=False``). A sleep stands in for accelerator compute: a callback's
``on_train_batch_begin`` sleeps ``--step-time`` (10 ms) before every batch, and
``--num-delayed`` ranks (2), drawn at every step from a seeded RNG that every rank
shares, sleep ``--delay`` (40 ms) more. The forward and backward passes and the
optimizer step are real (inside Keras' train function), but the sleeps dominate.

Methods, run one after another in the same launch, each on a freshly built model
(same initial weights on every rank, broadcast from rank 0 as well) with the same
delay schedule:

* ``horovod``     ``horovod.tensorflow.keras.DistributedOptimizer``: a gradient
                  allreduce every step, so every step waits for its slowest rank.
* ``wagma``       ``horovod_wagma.keras.DistributedWagmaOptimizer(group_size=S,
                  sync_period=tau)``: wait-avoiding group model averaging, a blocking
                  global average every tau steps.
* ``wagma_sync``  the same with ``wait_avoiding=False``: group rounds wait for every
                  group member.
* ``ideal``       computed, not run: zero communication cost and no waiting anywhere
                  except at global rounds. Every tau steps all ranks wait for the one
                  with the most nominal compute since the previous global round; the
                  ideal time is the sum over blocks of tau steps of the largest
                  per-rank block compute (as in bench/imbalance.py, same schedule).

Timing: each method first runs a warm-up ``fit`` of tau steps (it traces the train
function, which takes a while, and covers WAGMA's global rounds 0 and tau-1), then a
timed ``fit`` of ``--steps`` steps (rounded up to a multiple of tau, so that its last
step is a global round). In the timed fit a callback runs an MPI barrier and takes a
time stamp in ``on_train_batch_begin`` of the first batch (before its sleep), and a
time stamp and a barrier in ``on_train_batch_end`` of the last batch; rank 0's time
between the barriers gives steps/s. The wall time of the whole timed ``fit`` call
(set-up and tear-down included, max over ranks) is reported too as ``fit st/s``. The
warm-up uses a different seeded delay draw. The train function must not be retraced
by the second ``fit``; its tracing count is checked and reported. Barriers separate
the methods. With ``--trials`` > 1 the methods are interleaved trial by trial and the
best trial of each is reported.

The input is a small repeated ``tf.data`` pipeline with tf.data autotuning switched
off: with it on, deleting the iterator at the end of a ``fit`` blocked one random rank
for seconds (in ``~IteratorResource``, waiting for a tf.data background thread) on
this oversubscribed host, which inflated the ``fit`` wall time (not the window).

Per step and rank the callback records the time slept (``sleep``) and the time from
the end of the sleep to the end of the batch (``train``: forward, backward, optimizer
step, averaging and any waiting, plus Keras' per-batch overhead). ``ideal(meas)`` is
the ideal recomputed from the measured sleeps of the WAGMA run (sleeps overshoot on an
oversubscribed host); it ignores the train time, so it is still an upper bound.

Run
---
    python bench/keras_imbalance.py [--np 8] [--steps 200] [--sync-period 10]
                                    [--delay 0.040] [--step-time 0.010]
                                    [--num-delayed 2] [--seed 0] [--group-size S]
                                    [--methods horovod,wagma,wagma_sync] [--trials 1]
                                    [--json PATH] [--plot PATH]

Run directly, the script re-launches itself under ``mpirun -np NP --oversubscribe``
with the environment this machine needs (run-as-root, ``OMPI_MCA_mpi_yield_when_idle=1``,
``TF_CPP_MIN_LOG_LEVEL=3``; DESIGN.md section 5). Started by mpirun, it uses the world
size it is given. Rank 0 prints the table and writes
bench/results/keras_imbalance_P{P}.json and .png (by default). Importing TensorFlow on
8 ranks of a 2-core host alone takes about a minute.
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
from imbalance_schedule import (bounds, compute_schedule, ideal_time,  # noqa: E402
                                parse_imbalance_args, print_table, wagma_ratios)
from mpi_launch import relaunch_under_mpirun  # noqa: E402
import argparse
import json
import os
import sys
import time

METHODS = ("horovod", "wagma", "wagma_sync")
LABELS = {"horovod": "Horovod", "wagma": "WAGMA", "wagma_sync": "WAGMA sync",
          "ideal": "ideal", "ideal_measured": "ideal(meas)"}
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
IN_FEATURES, HIDDEN, CLASSES = 128, 512, 10   # 71,178 parameters
BATCH, SAMPLES = 16, 128                      # 8 distinct batches per rank, repeated
LR = 0.01


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    return parse_imbalance_args(__doc__.split("\n\n")[0], METHODS, 1, "keras_imbalance", argv)


# -- delay schedule and ideal (the same definitions as bench/imbalance.py) --------------
# -- training -------------------------------------------------------------------------
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
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat()
    # No tf.data autotuning: its background thread can make the iterator's destructor
    # (at the end of each fit) block for seconds on an oversubscribed host.
    options = tf.data.Options()
    options.autotune.enabled = False
    options.experimental_optimization.inject_prefetch = False
    return ds.with_options(options)


def make_timer_callback(tf, np, comm, rank):
    """A Keras callback that sleeps the scheduled compute before every batch and, when
    timing, brackets the batches with barriers and time stamps."""

    class ImbalanceCallback(tf.keras.callbacks.Callback):
        def setup(self, sched, timed):
            self.sched, self.timed = sched, timed
            n = len(sched)
            self.sleep, self.train = np.zeros(n), np.zeros(n)
            self.t_begin = self.t_end = self.loss = None
            return self

        def on_train_batch_begin(self, batch, logs=None):
            if self.timed and batch == 0:
                comm.Barrier()
                self.t_begin = time.perf_counter()
            t0 = time.perf_counter()
            time.sleep(self.sched[batch, rank])  # stand-in for compute; delay first
            self._t1 = time.perf_counter()
            self.sleep[batch] = self._t1 - t0

        def on_train_batch_end(self, batch, logs=None):
            t2 = time.perf_counter()
            self.train[batch] = t2 - self._t1
            if logs and "loss" in logs:
                self.loss = float(logs["loss"])
            if self.timed and batch == len(self.sched) - 1:
                comm.Barrier()
                self.t_end = time.perf_counter()

    return ImbalanceCallback()


def build_method(name, trial, args, hvd, hvd_keras, tf):
    """A compiled model for method ``name``; built in the same order on every rank
    (WAGMA streams are named by creation order)."""
    model = make_model(tf, f"{name}_t{trial}")
    opt = tf.keras.optimizers.SGD(learning_rate=LR)
    if name == "horovod":
        opt = hvd_keras.DistributedOptimizer(opt)
    else:
        opt = hvd.DistributedWagmaOptimizer(opt, group_size=args.group_size,
                                            sync_period=args.sync_period,
                                            wait_avoiding=(name == "wagma"))
    model.compile(optimizer=opt, run_eagerly=False,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def engine_stats():
    from horovod_wagma.common import engine_lib
    return engine_lib.stats() if engine_lib.started() else {}


def tracing_count(model):
    fn = getattr(model, "train_function", None)
    get = getattr(fn, "experimental_get_tracing_count", None)
    return int(get()) if get else -1


def run_method(name, trial, args, hvd, hvd_keras, tf, np, comm, warm_sched, timed_sched):
    rank = comm.Get_rank()
    tau = args.sync_period
    t_build = time.perf_counter()
    model = build_method(name, trial, args, hvd, hvd_keras, tf)
    data = make_dataset(tf, np, rank)
    cb = make_timer_callback(tf, np, comm, rank)

    # Warm-up fit: traces the train function; WAGMA's rounds 0 and tau-1 (global).
    cb.setup(warm_sched[:tau], timed=False)
    model.fit(data, epochs=1, steps_per_epoch=tau, verbose=0,
              callbacks=[hvd_keras.callbacks.BroadcastGlobalVariablesCallback(0), cb])
    warmup_s = time.perf_counter() - t_build
    traces_warm = tracing_count(model)
    wagma = name.startswith("wagma")
    comm.Barrier()
    before = engine_stats() if wagma else {}

    # Timed fit: barrier + stamp before the first batch, stamp + barrier after the last.
    n = len(timed_sched)
    cb.setup(timed_sched, timed=True)
    t_fit = time.perf_counter()
    model.fit(data, epochs=1, steps_per_epoch=n, verbose=0, callbacks=[cb])
    fit_wall = time.perf_counter() - t_fit
    after = engine_stats() if wagma else {}
    comm.Barrier()
    stats = {k: after[k] - before.get(k, 0) for k in after}
    traces = tracing_count(model)

    wall = cb.t_end - cb.t_begin
    # The timed fit's time outside the window (this rank's view; the first part
    # includes waiting at the barrier for the other ranks).
    fit_parts = {"before_first_batch": cb.t_begin - t_fit,
                 "after_last_batch": t_fit + fit_wall - cb.t_end}
    loss = cb.loss
    gathered = comm.gather(dict(sleep=cb.sleep, train=cb.train, stats=stats,
                                fit_wall=fit_wall, fit_parts=fit_parts,
                                warmup_s=warmup_s, loss=loss,
                                traces=(traces_warm, traces)), root=0)
    if rank != 0:
        return None
    sleep = np.stack([g["sleep"] for g in gathered], axis=1)    # (steps, P)
    train = np.stack([g["train"] for g in gathered], axis=1)
    sync_rows = np.arange(tau - 1, n, tau)                      # timed global rounds
    rec = {"wall_s": wall, "steps": n, "steps_per_s": n / wall,
           "fit_wall_s": max(g["fit_wall"] for g in gathered),
           "fit_steps_per_s": n / max(g["fit_wall"] for g in gathered),
           "fit_outside_window_s_max_over_ranks": {
               k: max(g["fit_parts"][k] for g in gathered)
               for k in gathered[0]["fit_parts"]},
           "warmup_s": max(g["warmup_s"] for g in gathered),
           "tracing_count_after_warmup_and_timed": list(gathered[0]["traces"]),
           "retraced_ranks": [r for r, g in enumerate(gathered)
                              if g["traces"][1] != g["traces"][0]],
           "ideal_measured_s": ideal_time(sleep, tau),
           "mean_sleep_ms": 1e3 * float(sleep.mean()),
           "mean_nominal_ms": 1e3 * float(timed_sched.mean()),
           "mean_train_ms": 1e3 * float(train.mean()),
           "mean_train_between_syncs_ms":
               1e3 * float(np.delete(train, sync_rows, axis=0).mean()),
           "mean_train_at_syncs_ms": 1e3 * float(train[sync_rows].mean()),
           "per_rank_train_ms": [1e3 * float(v) for v in train.mean(axis=0)],
           "last_batch_loss_per_rank": [g["loss"] for g in gathered]}
    if wagma:
        rec["engine_stats_sum"] = {k: int(sum(g["stats"].get(k, 0) for g in gathered))
                                   for k in gathered[0]["stats"]}
    return rec


def run(args):
    from mpi4py import MPI  # MPI_THREAD_MULTIPLE, before Horovod and the engine
    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    t_import = time.perf_counter()
    import horovod_wagma.keras as hvd          # before TF: sets TF_USE_LEGACY_KERAS=1
    import horovod.tensorflow.keras as hvd_keras
    import numpy as np
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")  # no "callback is slow" warnings: it sleeps
    tf.config.threading.set_intra_op_parallelism_threads(1)
    hvd.init()
    import_s = comm.reduce(time.perf_counter() - t_import, op=MPI.MAX, root=0)
    from horovod_wagma.common.schedule import default_group_size, groups
    S = args.group_size or default_group_size(P)
    tau = args.sync_period
    timed_sched = compute_schedule(args.seed, args.steps, P, args)
    warm_sched = compute_schedule(args.seed + 1, tau, P, args)
    if rank == 0:
        # Not make_model: building a model on rank 0 only would shift Keras' names.
        nparams = (IN_FEATURES + 1) * HIDDEN + (HIDDEN + 1) * CLASSES
        print(f"TF {tf.__version__}, tf.keras = {tf.keras.__name__}; imports + init "
              f"{import_s:.0f} s (max over ranks)", flush=True)
        print(f"P={P}, S={S} (phases {groups(P, S)}), tau={tau}, {args.steps} timed steps, "
              f"step {1e3 * args.step_time:g} ms + {1e3 * args.delay:g} ms on "
              f"{args.num_delayed} ranks/step, Keras MLP {nparams} params "
              f"({nparams * 4 / 1024:.0f} KB), model.fit graph mode, {args.trials} "
              f"trial(s)", flush=True)

    trials = {m: [] for m in args.methods}
    t_start = time.perf_counter()
    for trial in range(args.trials):
        for name in args.methods:
            comm.Barrier()
            rec = run_method(name, trial, args, hvd, hvd_keras, tf, np, comm, warm_sched,
                             timed_sched)
            comm.Barrier()
            if rank == 0:
                trials[name].append(rec)
                print(f"  trial {trial}: {LABELS[name]:>10}: {rec['steps_per_s']:6.1f} "
                      f"steps/s (fit wall {rec['fit_steps_per_s']:.1f}; sleep "
                      f"{rec['mean_sleep_ms']:.1f} ms/step vs {rec['mean_nominal_ms']:.1f} "
                      f"nominal, train {rec['mean_train_ms']:.1f} ms; warm-up "
                      f"{rec['warmup_s']:.0f} s)",
                      flush=True)
    if rank == 0:
        report(args, P, S, trials, bounds(timed_sched, tau), time.perf_counter() - t_start,
               import_s)
    comm.Barrier()


# -- reporting ------------------------------------------------------------------------
def report(args, P, S, trials, b, elapsed, import_s):
    n = args.steps
    best = {m: max(recs, key=lambda r: r["steps_per_s"]) for m, recs in trials.items()}
    rate = {m: r["steps_per_s"] for m, r in best.items()}
    rate["ideal"] = n / b["ideal"]
    meas = [r["ideal_measured_s"] for m, r in best.items() if m == "wagma"]
    if meas:
        rate["ideal_measured"] = n / meas[0]

    print(f"\nKeras throughput under load imbalance: P={P}, S={S}, tau={args.sync_period}, "
          f"{n} timed steps, best of {args.trials} (methods {elapsed:.0f} s, imports "
          f"{import_s:.0f} s)")
    print(f"  nominal bounds: ideal (wait only at global rounds) {rate['ideal']:.1f} "
          f"steps/s; lockstep (sync every step) {n / b['lockstep']:.1f}; "
          f"no waiting at all {n / b['no_wait']:.1f}")
    print("  sleep: measured sleep per step; train: end of sleep to end of batch "
          "(fwd+bwd+optimizer+averaging+waiting),\n  overall / between global rounds / "
          "at global rounds (ms, mean over ranks and steps); fit st/s: from the timed "
          "fit's\n  wall time, set-up and tear-down included")
    hv = rate.get("horovod")
    rows = [("method", "steps/s", "x Horovod", "x ideal", "fit st/s", "sleep ms",
             "train ms", "between", "at sync", "notes")]
    for m in list(best) + ["ideal"] + (["ideal_measured"] if meas else []):
        r = best.get(m)
        notes = ""
        if r and "engine_stats_sum" in r:
            s = r["engine_stats_sum"]
            notes = (f"passive_joins={s.get('passive_joins', 0)} "
                     f"rounds={s.get('rounds_completed', 0)}")
        if r and r["retraced_ranks"]:
            notes += f" RETRACED on ranks {r['retraced_ranks']}"
        if m == "ideal_measured":
            notes = "ideal from WAGMA's measured sleeps"
        rows.append((LABELS[m], f"{rate[m]:.1f}", f"{rate[m] / hv:.2f}" if hv else "-",
                     f"{rate[m] / rate['ideal']:.2f}",
                     f"{r['fit_steps_per_s']:.1f}" if r else "-",
                     f"{r['mean_sleep_ms']:.1f}" if r else "-",
                     f"{r['mean_train_ms']:.1f}" if r else "-",
                     f"{r['mean_train_between_syncs_ms']:.1f}" if r else "-",
                     f"{r['mean_train_at_syncs_ms']:.1f}" if r else "-", notes.strip()))
    print_table(rows)

    ratios = wagma_ratios(rate, ("horovod", "wagma_sync"))

    os.makedirs(RESULTS_DIR, exist_ok=True)
    json_path = args.json or os.path.join(RESULTS_DIR, f"keras_imbalance_P{P}.json")
    plot_path = args.plot or os.path.join(RESULTS_DIR, f"keras_imbalance_P{P}.png")
    for path in (json_path, plot_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump({"framework": "keras (tf_keras, model.fit graph mode)", "ranks": P,
                   "group_size": S, "sync_period": args.sync_period, "steps": n,
                   "step_time_s": args.step_time, "delay_s": args.delay,
                   "num_delayed": args.num_delayed, "seed": args.seed,
                   "trials": args.trials, "import_s": import_s, "steps_per_s": rate,
                   "ratios": ratios, "bounds_s": b, "runs": trials}, f, indent=2)
    plot(rate, P, S, args, plot_path)
    print(f"  wrote {json_path}\n  wrote {plot_path}")


def plot(rate, P, S, args, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [m for m in METHODS if m in rate] + ["ideal"]
    colors = {"horovod": "tab:gray", "wagma": "tab:blue", "wagma_sync": "tab:cyan",
              "ideal": "white"}
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    bars = ax.bar([LABELS[k] for k in keys], [rate[k] for k in keys],
                  color=[colors[k] for k in keys], edgecolor="black")
    bars[-1].set_hatch("//")
    hv = rate.get("horovod")
    for bar, k in zip(bars, keys):
        text = f"{rate[k]:.1f}" + (f"\n{rate[k] / hv:.2f}x Hvd" if hv else "")
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("steps / s")
    ax.set_title(f"Keras model.fit, P={P}, S={S}, tau={args.sync_period}: "
                 f"{args.num_delayed} ranks/step delayed {1e3 * args.delay:g} ms "
                 f"on a {1e3 * args.step_time:g} ms step", fontsize=9)
    ax.set_ylim(0, 1.25 * max(rate[k] for k in keys))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout, {"TF_CPP_MIN_LOG_LEVEL": "3"})
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    run(args)


if __name__ == "__main__":
    main()
