#!/usr/bin/env python
"""Time to accuracy with Keras: WAGMA's Keras optimizer against Horovod's.

One Keras case of the matrix in bench/time_to_accuracy.py, with its protocol (clock,
budget checks, snapshots, averaged-model accuracy) and its analysis and report,
imported from there: the ``mlp`` task of bench/tasks.py (data, batches, lr, momentum,
target; the same 64-128-128-10 ReLU MLP in Keras 2 = tf_keras, seeded), one data mode
and pattern. Methods: ``horovod`` (``horovod.tensorflow.keras.DistributedOptimizer``
over tf.keras SGD) and ``wagma[:key=value,...]`` specs of bench/tta_methods.py (keys
rule/state/rounds/S/tau/stale) for ``horovod_wagma.keras.DistributedWagmaOptimizer``.
A ``tf.function`` step (``optimizer.minimize``, as Keras' train step), traced before
the clock starts, runs in a Python loop that sleeps the pattern's compute per step.

Run
---
    python bench/keras_time_to_accuracy.py [--np 8] [--data iid|noniid]
        [--pattern random|persistent] [--seeds 3] [--budget S]
        [--methods horovod wagma 'wagma:rounds=wa' ...]

Run directly, the script re-launches itself under ``mpirun --oversubscribe``.
Importing TensorFlow on 8 ranks of a 2-core host takes about a minute.
"""
# bench/ is sys.path[0] when a benchmark runs as a script.
import argparse
import json
import os
import statistics
import time

import harness
import tasks as task_lib
import tta_methods
from mpi_launch import relaunch_under_mpirun
from time_to_accuracy import (BUDGET, Evaluation, Snapshots, analyse_case, case_name,
                              clocked_run, evaluate_snapshots, finished, jsonable,
                              plot, print_case, print_summary)

ENV = {"TF_CPP_MIN_LOG_LEVEL": "3"}
HOROVOD_TAU = 10   # Horovod's budget checks: every 10 steps, as in the torch runner
KERAS_STATES = ("never", "quasi_global")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = p.add_argument
    add("--np", type=int, default=8, help="ranks when self-launched (default 8)")
    add("--data", choices=("iid", "noniid"), default="noniid")
    add("--pattern", choices=("random", "persistent"), default="random")
    add("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    add("--budget", type=float, help="seconds per run (default time_to_accuracy.BUDGET)")
    add("--interval", type=float, default=0.25, help="seconds between snapshots")
    add("--eval-every", type=int, default=25,
        help="steps between evaluations averaged through a Horovod allreduce, as in "
             "the torch runner (default 25; 0: never)")
    add("--methods", nargs="+", default=["horovod", "wagma"],
        help="horovod and wagma[:key=value,...] specs; horovod is always run")
    harness.add_pattern_args(p, one_pattern=False)
    add("--json", default=os.path.join(harness.RESULTS_DIR, "keras_time_to_accuracy.json"))
    add("--plot", default=os.path.join(harness.RESULTS_DIR, "keras_time_to_accuracy.png"))
    add("--timeout", type=int, default=3600, help="seconds before mpirun kills the job")
    args = p.parse_args(argv)
    harness.check_pattern_args(p, args)
    for spec in args.methods:
        try:
            name, opts = tta_methods.parse_spec(spec)
        except ValueError as e:
            p.error(str(e))
        if name not in ("horovod", "wagma"):
            p.error(f"{spec!r}: the Keras case runs horovod and wagma specs only")
        if "outer" in opts or opts.get("state", "never") not in KERAS_STATES:
            p.error(f"{spec!r}: not in Keras (outer= is torch-only; state is one of "
                    f"{KERAS_STATES})")
    args.methods = ["horovod"] + [m for m in dict.fromkeys(args.methods) if m != "horovod"]
    if args.seeds < 1 or args.interval <= 0 or (args.budget is not None and args.budget <= 0):
        p.error("need --seeds >= 1, --interval > 0, --budget > 0")
    return args


def build(spec, task, seed, prefix, k):
    """(model, optimizer, lockstep, synced(i)) for one method spec, seeded."""
    tf, hvd, hvd_keras = k["tf"], k["hvd"], k["hvd_keras"]
    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.Sequential([
        tf.keras.layers.Input((task.DIM,)),
        tf.keras.layers.Dense(128, activation="relu", name=f"{prefix}_h1"),
        tf.keras.layers.Dense(128, activation="relu", name=f"{prefix}_h2"),
        tf.keras.layers.Dense(task.num_classes, name=f"{prefix}_out")], name=prefix)
    k["hvd_tf"].broadcast_variables(model.variables, root_rank=0)
    sgd = tf.keras.optimizers.SGD(learning_rate=task.lr, momentum=task.momentum)
    name, opts = tta_methods.parse_spec(spec)
    if name == "horovod":
        return model, hvd_keras.DistributedOptimizer(sgd), True, \
            lambda i: i % HOROVOD_TAU == 0
    from horovod_wagma.common.rounds import is_global_round
    knobs = {tta_methods.WAGMA_KEYS[key]: (tta_methods.ROUNDS[v] if key == "rounds" else v)
             for key, v in opts.items()}
    opt = hvd.DistributedWagmaOptimizer(sgd, **knobs)
    tau, lockstep = opt._wagma["sync_period"], not opt._wagma["wait_avoiding_global"]
    return model, opt, lockstep, lambda i: lockstep and is_global_round(i, tau)


def train(spec, j, task, seed, args, k):
    """One method on one seed: the torch runner's train() loop, in Keras."""
    import numpy as np
    tf, comm, rank = k["tf"], k["comm"], k["rank"]
    model, opt, lockstep, synced = build(spec, task, seed, f"m{j}_s{seed}", k)
    weights = model.trainable_variables
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(input_signature=[tf.TensorSpec((task.batch, task.DIM), tf.float32),
                                  tf.TensorSpec((task.batch,), tf.int64)])
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.minimize(loss, weights, tape=tape)

    step.get_concrete_function()   # traced (slots created) outside the clock

    sizes = [int(np.prod(v.shape)) for v in weights]
    budget, sched, batches = k["budget"], k["sched"], k["batches"]
    snaps = Snapshots(lambda out: np.concatenate([v.numpy().ravel() for v in weights],
                                                 out=out), sum(sizes), args.interval, budget)

    def one_step(i):
        b = batches[i % len(batches)]
        time.sleep(sched[i % len(sched), rank])   # mlp: compute_scale 1
        step(k["x"][b], k["y"][b])
    evaluation = None
    if args.eval_every:
        x0, y0 = k["x"][batches[0]], k["y"][batches[0]]
        evaluation = Evaluation(
            args.eval_every, lambda: float(loss_fn(y0, model(x0, training=False))),
            lambda values: k["hvd_tf"].allreduce(
                tf.constant(values, tf.float64), op=k["hvd_tf"].Sum,
                name="tta.eval").numpy().tolist())
    steps, wall = clocked_run(comm, budget, snaps, one_step, lockstep, synced, evaluation)
    if not lockstep:
        opt.join()
    snaps.finish()

    def accuracy(flat):
        for v, part in zip(weights, np.split(flat, np.cumsum(sizes)[:-1])):
            v.assign(part.reshape(v.shape))
        pred = np.argmax(model(k["x_test"], training=False).numpy(), 1)
        return 100.0 * float(np.mean(pred == k["y_test"]))
    curve = evaluate_snapshots(snaps, accuracy, comm)
    rates = comm.gather(steps / wall, root=0)
    if rank == 0:
        return {"method": spec, "task": "keras-mlp", "data": args.data,
                "pattern": args.pattern, "seed": seed, "curve": curve,
                "steps_per_s_per_rank": rates, "steps_per_s": statistics.median(rates)}
    return None


def run(args):
    from mpi4py import MPI  # MPI_THREAD_MULTIPLE, before Horovod and the engine
    import horovod_wagma.keras as hvd          # before TF: sets TF_USE_LEGACY_KERAS=1
    import horovod.tensorflow as hvd_tf
    import horovod.tensorflow.keras as hvd_keras
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.config.threading.set_intra_op_parallelism_threads(1)
    hvd.init()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    k = dict(tf=tf, hvd=hvd, hvd_tf=hvd_tf, hvd_keras=hvd_keras, comm=comm, rank=rank)
    case = ("keras-mlp", args.data, args.pattern)
    budget = k["budget"] = args.budget or BUDGET[args.pattern]
    if rank == 0:
        print(f"P={size}; {case_name(case)}; TF {tf.__version__}, tf.keras = "
              f"{tf.keras.__name__}; methods {' '.join(args.methods)}; seeds 0.."
              f"{args.seeds - 1}; {harness.describe_pattern(args, size)}", flush=True)
    started, runs = time.time(), []
    for seed in range(args.seeds):
        task = task_lib.MLPTask(seed)
        k.update(x=task.x_train.numpy(), y=task.y_train, x_test=task.x_test.numpy(),
                 y_test=task.y_test.numpy())
        n = int(budget / (0.5 * args.step_time)) + 1   # rows, as the torch runner
        k["sched"] = harness.compute_schedule(args, size, n, seed)
        k["batches"] = [b.numpy() for b in task.batches(rank, size, args.data, n, seed)]
        order = list(enumerate(args.methods))
        for j, spec in (order if seed % 2 == 0 else order[::-1]):
            rec = train(spec, j, task, seed, args, k)
            if rank == 0:
                runs.append(finished(rec, case, size, budget, task.target))
    if rank == 0:
        target = task_lib.MLPTask.target
        rows, best = analyse_case(runs, args.methods, target)
        results = {case_name(case): {"rows": rows, "best_local": best, "target": target}}
        print_case(case, rows, best, target, budget)
        print_summary(results, args.methods)
        print(f"\ntotal {time.time() - started:.0f} s")
        if args.plot:
            plot(case, runs, args.methods, target, args.plot)
            print(f"wrote {args.plot}")
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as f:
                json.dump(jsonable({"ranks": size, "framework": "keras", "args": vars(args),
                                    "results": results, "runs": runs}), f, indent=1)
            print(f"wrote {args.json}")
    comm.Barrier()


def main():
    args = parse_args()
    relaunch_under_mpirun(__file__, args.np, args.timeout, ENV)
    for key, v in ENV.items():
        os.environ.setdefault(key, v)
    harness.abort_on_error(run, args)


if __name__ == "__main__":
    main()
