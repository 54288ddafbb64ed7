"""Keras scenarios: the optimizer in graph mode (model.fit) and eager mode
(GradientTape), the callbacks, uneven data with join(). The command line names the
scenarios one launch runs (common.run_scenarios); each builds its own model and
optimizer (so its own streams), from the same seed as a launch of its own would."""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import horovod_wagma.keras as hvd  # noqa: E402  (before TensorFlow: Keras 2)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import error, initial_value, run_scenarios  # noqa: E402
from reference import average_round  # noqa: E402  (tests/, on the path through common)
from world import on_gloo, world  # noqa: E402

hvd.init()
rank, size = hvd.rank(), hvd.size()
comm = world()


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


def model_and_optimizer(scenario):
    tf.random.set_seed(rank)  # different initial models per rank
    model = make_model()
    wa_knobs = dict(global_rounds="wait_avoiding", compression=hvd.Compression.fp16) \
        if scenario.startswith("wa_") else dict(global_rounds="blocking")  # exact globals
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9),
                                        group_size=2, sync_period=4, **wa_knobs)
    return model, opt


def own_streams(opt):
    """This optimizer's streams' stats (earlier scenarios' streams left out)."""
    prefix = f"{opt.wagma_status().name}."
    return {k: v for k, v in hvd.stats().items() if k.startswith(prefix)}


class EpochEndIdentity(tf.keras.callbacks.Callback):
    """After WagmaGlobalSyncCallback in the list: whether every variable, BatchNorm's
    moving statistics included (the optimizer does not average those), is identical on
    every rank at each epoch end."""

    def __init__(self):
        super().__init__()
        self.identical = []

    def on_epoch_end(self, epoch, logs=None):
        self.identical.append(all_equal(self.model.variables))


class EngineWaitPerEpoch(tf.keras.callbacks.Callback):
    """After WagmaStatsCallback in the list: the engine's application wait over each
    epoch, in seconds, read from the engine's own counter (stats()'s call_wait_us)."""

    def __init__(self):
        super().__init__()
        self.wait_s = []

    def on_epoch_begin(self, epoch, logs=None):
        from horovod_wagma.common.op import engine_lib
        self._start = engine_lib.stats()["call_wait_us"]

    def on_epoch_end(self, epoch, logs=None):
        from horovod_wagma.common.op import engine_lib
        self.wait_s.append((engine_lib.stats()["call_wait_us"] - self._start) / 1e6)


class EngineStaleness(tf.keras.callbacks.Callback):
    """The engine's passive-join counters (stats()'s passive_joins, staleness_sum and
    staleness_max, every stream) at each epoch's begin and end. One instance before
    WagmaStatsCallback in the list and one after bracket what that callback reads:
    before.begin <= its begin <= after.begin, before.end <= its end <= after.end."""

    KEYS = ("passive_joins", "staleness_sum", "staleness_max")

    def __init__(self):
        super().__init__()
        self.begin, self.end = [], []

    def _read(self):
        from horovod_wagma.common.op import engine_lib
        now = engine_lib.stats()
        return {k: now[k] for k in self.KEYS}

    def on_epoch_begin(self, epoch, logs=None):
        self.begin.append(self._read())

    def on_epoch_end(self, epoch, logs=None):
        self.end.append(self._read())


class OwnMetrics(tf.keras.callbacks.Callback):
    """Before MetricAverageCallback in the list: this rank's own epoch-end loss and
    accuracy, before they are averaged in place, and [epoch, val_loss, val_accuracy]
    for the epochs that validated."""

    def __init__(self):
        super().__init__()
        self.own, self.val = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.own.append([float(logs["loss"]), float(logs["accuracy"])])
        if "val_loss" in logs:
            self.val.append([epoch, float(logs["val_loss"]), float(logs["val_accuracy"])])


def fit():
    out = {}
    model, opt = model_and_optimizer("fit")
    model.compile(optimizer=opt, metrics=["accuracy"],
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = data(rank)  # different data per rank: local metrics differ
    # Validation data of its own per rank, every second epoch (epoch 1 only): that
    # epoch's logs hold two more metrics, which MetricAverageCallback averages too.
    x_val, y_val = data(100 + rank, 64)
    epoch_ends, engine_wait, own = EpochEndIdentity(), EngineWaitPerEpoch(), OwnMetrics()
    history = model.fit(x, y, batch_size=32, epochs=3, verbose=0,
                        validation_data=(x_val, y_val), validation_freq=2, callbacks=[
        hvd.callbacks.WagmaGlobalSyncCallback(),
        epoch_ends,
        own,
        hvd.callbacks.MetricAverageCallback(),
        hvd.callbacks.WagmaStatsCallback(),
        engine_wait])
    out["identical_at_epoch_ends"] = epoch_ends.identical
    out["identical_after_sync"] = all_equal(model.variables)
    losses = comm.allgather(history.history["loss"][-1])
    out["loss_averaged"] = max(losses) - min(losses) < 1e-6
    out["own_metrics"] = own.own  # per epoch: [loss, accuracy] before the average
    out["logged_metrics"] = [[float(history.history["loss"][e]),
                              float(history.history["accuracy"][e])] for e in range(3)]
    out["own_val"] = own.val  # [[1, val_loss, val_accuracy]] before the average
    out["logged_val"] = [[float(v) for v in history.history.get(k, [])]
                         for k in ("val_loss", "val_accuracy")]
    out["stats_keys"] = sorted(k for k in history.history if k.startswith("wagma_"))
    out["rounds"] = history.history["wagma_rounds"]
    out["wait_s"] = history.history["wagma_wait_s"]
    out["engine_wait_s"] = engine_wait.wait_s
    out["accuracy"] = history.history["accuracy"][-1]
    return out


def fp16_values():
    """The fp16 rule in Keras (common/optimizer/fp16_rule.py), as optimizer_checks.py's fp16_values
    checks it in PyTorch: SGD with lr=0 leaves each step's model as it is, noise moves
    every rank's model before each step, and a reference stream with the optimizer's
    knobs averages the same fp16 values through the op. At a global round the model
    becomes the fp16 average; at a group round it keeps its own full-precision
    residual, x + (avg16 - fp16(x)), bit for bit (eager apply_gradients; group rounds
    wait for every member, so no passive join contributes a value the reference does
    not see)."""
    tau = 4
    knobs = dict(group_size=2, sync_period=tau, averaging="fresh", wait_avoiding=False)
    tf.random.set_seed(rank)
    model = make_model()
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.0),
                                        compression=hvd.Compression.fp16, **knobs)
    rng = np.random.default_rng(100 + rank)
    trainable = model.trainable_variables
    exact, residual_kept = [], []
    for step in range(8):
        for v in trainable:
            v.assign_add(0.01 * rng.standard_normal(v.shape).astype("float32"))
        x = tf.concat([tf.reshape(v, [-1]) for v in trainable], 0)
        sent = tf.cast(x, tf.float16)
        average = tf.cast(hvd.group_allreduce(sent, name="keras.fp16.reference", **knobs),
                          tf.float32)
        opt.apply_gradients([(tf.zeros_like(v), v) for v in trainable])
        y = tf.concat([tf.reshape(v, [-1]) for v in trainable], 0).numpy()
        if step == 0 or (step + 1) % tau == 0:
            exact.append(bool(np.array_equal(y, average.numpy())))
        else:
            want = (x + (average - tf.cast(sent, tf.float32))).numpy()
            exact.append(bool(np.array_equal(y, want)))
            residual_kept.append(bool((y != average.numpy()).any()))
    return dict(exact=exact, residual_kept=residual_kept)


def eager():
    out = {}
    model, opt = model_and_optimizer("eager")
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
    return out


def uneven():
    out = {}
    model, opt = model_and_optimizer("uneven")
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
    out["round"] = opt.wagma_status().steps
    out["joins"] = sum(s["passive_joins"] for s in own_streams(opt).values())
    opt.sync(model.variables)
    out["identical_after_sync"] = all_equal(model.variables)
    return out


def wa_fit_straggler():
    out = {}
    model, opt = model_and_optimizer("wa_fit_straggler")
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
    before, after = EngineStaleness(), EngineStaleness()
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[
        Compute(), before, hvd.callbacks.WagmaStatsCallback(), after])
    out["logged_stats"] = {k: history.history[k] for k in (
        "wagma_passive_joins", "wagma_mean_staleness", "wagma_max_staleness")}
    out["before"] = {"begin": before.begin, "end": before.end}
    out["after"] = {"begin": after.begin, "end": after.end}
    out["own_steps"] = opt.wagma_status().steps
    out["last"] = opt.join()
    opt.sync(model.variables)
    out["identical_after_sync"] = all_equal(model.variables)
    model_stream = own_streams(opt)[opt.wagma_status().stream()]
    out["skipped"] = model_stream["rounds_skipped"]
    out["age_max"] = model_stream["contribution_age_max"]
    return out


def drift():
    """Non-IID quadratics, as optimizer_checks.py's drift for PyTorch: rank i minimises
    |x - a_i|^2 / 2 with SGD momentum 0.9, S=2, tau=4, average_optimizer_state="on_sync".
    Returns, with drift correction off and at 0.5 (as the PyTorch check), the distance of
    this rank's x from the optimum mean(a) over the last 30 steps and the control
    variate's error against a_i - mean(a) (and the variates' sum over ranks).

    Twice: "off"/"on" eager with blocking global rounds (exact averages), and
    "wa_off"/"wa_on" inside a tf.function (model.fit's graph mode: the duties sit in a
    tf.cond) with wait-avoiding global rounds and random delays of up to 2 ms a step,
    so that engines serve state rounds with published state ("wa_passive")."""
    import random
    import time
    d = 6
    a = (np.arange(size * d).reshape(size, d) % 5 * (1 + np.arange(size))[:, None])
    a = a.astype("float64")
    optimum = a.mean(0)
    out = {}
    for prefix, knobs, pause in (("", dict(global_rounds="blocking"), 0.0),
                                 ("wa_", {}, 0.002)):
        for alpha in (0.0, 0.5):
            rng = random.Random(rank)
            x = tf.Variable(tf.zeros(d, tf.float64), name="x")
            opt = hvd.DistributedWagmaOptimizer(
                tf.keras.optimizers.SGD(0.05, momentum=0.9), group_size=2, sync_period=4,
                average_optimizer_state="on_sync", drift_correction=alpha, **knobs)

            def step():
                with tf.GradientTape() as tape:
                    loss = 0.5 * tf.reduce_sum((x - a[rank]) ** 2)
                opt.apply_gradients([(tape.gradient(loss, x), x)])

            run = tf.function(step) if prefix else step
            far = []
            for i in range(300):
                time.sleep(rng.uniform(0, pause))
                run()
                if i >= 270:
                    far.append(float(np.abs(x.numpy() - optimum).max()))
            key = prefix + ("on" if alpha else "off")
            out[key] = {"far": max(far)}
            if alpha:
                c = opt._wagma["state"].drift.variate(x).numpy()
                out[key]["c_error"] = float(np.abs(c - (a[rank] - optimum)).max())
                out[key]["c_sum"] = float(np.abs(sum(comm.allgather(c))).max())
                out[prefix + "passive"] = own_streams(opt)[
                    opt.wagma_status().stream("sync")]["passive_joins"]
            opt.join()

    # Adam (api.md: its first moment is Adam's m, not the second moment v): one eager
    # step from x = 0, so rank i's gradient is -a_i, its m (1 - beta_1)(-a_i) and its v
    # (1 - beta_2) a_i^2; the blocking global round 0 averages both (on_sync) and the
    # variate learns from m's move: c_i = alpha (mean_j m_j - m_i).
    x = tf.Variable(tf.zeros(d, tf.float64), name="x_adam")
    opt = hvd.DistributedWagmaOptimizer(
        tf.keras.optimizers.Adam(0.01), group_size=2, sync_period=4,
        global_rounds="blocking", average_optimizer_state="on_sync", drift_correction=0.5)
    with tf.GradientTape() as tape:
        loss = 0.5 * tf.reduce_sum((x - a[rank]) ** 2)
    opt.apply_gradients([(tape.gradient(loss, x), x)])
    out["adam"] = dict(a=a[rank].tolist(),
                       c=opt._wagma["state"].drift.variate(x).numpy().tolist(),
                       m=opt._momentums[0].numpy().tolist(),
                       v=opt._velocities[0].numpy().tolist())

    # drift_correction=None: off in Keras (PyTorch: 0.25); a given alpha is kept
    # where the optimizer keeps a first moment and needs one.
    def alpha(optimizer, **kw):
        state = hvd.DistributedWagmaOptimizer(optimizer, **kw)._wagma["state"]
        return state.drift._alpha if state and state.drift else 0.0
    out["defaults"] = [
        alpha(tf.keras.optimizers.SGD(0.1, momentum=0.9)),  # the defaults
        alpha(tf.keras.optimizers.Adam(), average_optimizer_state="on_sync"),
        alpha(tf.keras.optimizers.SGD(0.1, momentum=0.9), drift_correction=0.25),
        alpha(tf.keras.optimizers.Adam(), drift_correction=0.5),
        alpha(tf.keras.optimizers.SGD(0.1), average_optimizer_state="on_sync"),
        alpha(tf.keras.optimizers.SGD(0.1, momentum=0.9), average_optimizer_state="never")]
    try:
        hvd.DistributedWagmaOptimizer(tf.keras.optimizers.Adagrad(),
                                      average_optimizer_state="on_sync", drift_correction=0.5)
        out["adagrad_error"] = None
    except ValueError as e:
        out["adagrad_error"] = str(e)
    return out


def state_on_sync():
    """average_optimizer_state in Keras (docs/api.md): with "on_sync" the optimizer's
    floating-point state, SGD's velocities (eager) and Adam's moments (inside a
    tf.function, where the duty is a tf.cond), is averaged at the global rounds (steps
    0 and 3 of tau 4, blocking), and by sync(variables); with "never" it stays each
    rank's own (SGD). Different data per rank: the states differ after every other step.
    Per optimizer and mode, whether the state was the same bits on every rank after
    each of 6 steps and after sync(model.variables), and the model after sync."""
    from horovod_wagma.keras.state_averaging import StateAveraging
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    out = {}
    for label, make, in_function in (
            ("sgd", lambda: tf.keras.optimizers.SGD(0.05, momentum=0.9), False),
            ("adam", lambda: tf.keras.optimizers.Adam(0.01), True)):
        # "never" once: sync()'s choice does not depend on the optimizer.
        for mode in ("on_sync", "never") if label == "sgd" else ("on_sync",):
            tf.random.set_seed(rank)
            model = make_model()
            opt = hvd.DistributedWagmaOptimizer(make(), group_size=2, sync_period=4,
                                                global_rounds="blocking",
                                                average_optimizer_state=mode)
            x, y = data(rank)

            def step(xb, yb, model=model, opt=opt):
                with tf.GradientTape() as tape:
                    loss = loss_fn(yb, model(xb, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))

            run = tf.function(step) if in_function else step
            same = []
            for k in range(6):
                run(x[k * 32:(k + 1) * 32], y[k * 32:(k + 1) * 32])
                same.append(all_equal(StateAveraging.state_variables(opt)))
            opt.sync(model.variables)
            out[f"{label}.{mode}"] = dict(
                same=same, same_after_sync=all_equal(StateAveraging.state_variables(opt)),
                model_after_sync=all_equal(model.variables),
                state_size=sum(int(tf.size(v)) for v in StateAveraging.state_variables(opt)))
    return out


def state_on_sync_wa():
    """"on_sync" with wait-avoiding global rounds (the default): the state is averaged
    only at the steps whose served round passed a global round. 3 ranks, SGD with
    momentum, eager, tau 4, 8 steps in lockstep (an allgather between steps, so no app
    is ever two rounds behind and none skips): rounds 0, 3 and 7 are global. Returns,
    after each step, how many rounds this optimizer's "sync0" stream (the state's
    average) has run here."""
    tf.random.set_seed(rank)
    model = make_model()
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9),
                                        group_size=2, sync_period=4,
                                        average_optimizer_state="on_sync")
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = data(rank)
    sync_name = opt.wagma_status().stream("sync", 0)
    sync_rounds = []
    for k in range(8):
        comm.allgather(k)  # lockstep
        with tf.GradientTape() as tape:
            loss = loss_fn(y[k * 32:(k + 1) * 32], model(x[k * 32:(k + 1) * 32], training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        sync_rounds.append(own_streams(opt).get(sync_name, {}).get("rounds", 0))
    comm.allgather("done")
    return dict(mode=opt.wagma_status().global_rounds, sync_rounds=sync_rounds)


def keras_join():
    """hvd.join() from horovod_wagma.keras (docs/faults.md: it replaces Horovod's): ranks
    0, 1, 2 have 2, 10, 16 batches, then call the module's join(), not the optimizer's.
    Ranks 1 and 2 take their third step once rank 0 has been in join() for 1 s (a file
    it writes then), so that every round rank 0's engine serves for it comes after its
    join. With wait-avoiding global rounds (max_staleness = tau = 4) a joined engine
    serves them with its final model, which has no age and counts in every average:
    under Horovod's own join the engine would serve its published value, aged 1 to 4
    rounds, then left out. Returns the last rank to join, when this rank called join(),
    and the counts of rank 0's passive rounds, aged ones and left-out ones, before and
    after its join.

    Then sync(), and a second sync() (docs/api.md: sync averages over all ranks now,
    through blocking global rounds, whatever the optimizer's own global rounds): every
    rank first moves each variable by its own amount, 0.25 * (rank + 1), and rank 0
    comes 0.5 s late. Returns the second sync's largest error against the exact mean
    of the moved models and whether they are the same bits everywhere. (Round 0 of a
    stream is blocking anyway; a second round through the optimizer's wait-avoiding
    global knobs would average rank 0's previous value and give rank 0, by "local",
    a model of its own.)"""
    import threading
    tf.random.set_seed(rank)
    model = make_model()
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9),
                                        group_size=2, sync_period=4,
                                        global_rounds="wait_avoiding")
    name = opt.wagma_status().stream()
    flag = os.path.join(os.environ["WAGMA_TEST_RESULTS"], "keras_join.rank0_joined")

    def counts():
        st = own_streams(opt).get(name, {})
        return dict(passive=st.get("passive_joins", 0),
                    aged=sum(st.get("contribution_age_histogram", {}).values()),
                    left_out=st.get("rounds_left_out", 0))

    x, y = data(rank)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    steps = (2, 10, 16)[rank]
    for k in range(steps):
        while k == 2 and not os.path.exists(flag):
            time.sleep(0.01)
        xb, yb = x[k * 16:(k + 1) * 16], y[k * 16:(k + 1) * 16]
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    before = counts()
    if rank == 0:
        threading.Timer(1.0, lambda: open(flag, "w").close()).start()
    if rank == size - 1:
        time.sleep(0.3)  # usually the last to join (wait-avoiding: not always)
    joined_at = time.time()  # wall clock: compared across the ranks of one host
    last = int(hvd.join())  # (Horovod's own returns a tensor)
    after = counts()
    opt.sync(model.variables)
    identical_after_sync = all_equal(model.variables)
    for v in model.variables:
        v.assign_add(tf.ones_like(v) * (0.25 * (rank + 1)))
    moved = [v.numpy().astype(np.float64) for v in model.variables]
    want = [np.mean(np.stack(vals), axis=0) for vals in zip(*comm.allgather(moved))]
    if rank == 0:
        time.sleep(0.5)
    opt.sync(model.variables)
    second_sync = dict(
        error=max(float(np.abs(v.numpy() - w).max()) for v, w in zip(model.variables, want)),
        identical=all_equal(model.variables))
    return dict(last=last, steps=int(opt.wagma_status().steps), joined_at=joined_at,
                before=before, after={k: after[k] - before[k] for k in after},
                identical_after_sync=identical_after_sync, second_sync=second_sync)


def op_in_function():
    """The TensorFlow op called directly inside a tf.function (docs/api.md: each
    execution of the op is one round): the function calls it twice on the same input,
    so one execution runs two rounds of the stream, in program order, each with that
    fresh input. 3 ranks, S=2, tau 4, group rounds that wait for every member (exact
    whatever the timing); 4 executions are rounds 0..7, each result against
    reference.average_round, the next execution's input the second call's result.
    Returns the rounds each call reported, the round's dtype and rank (api.md: an
    int64 scalar) and the largest error."""
    knobs = dict(name="keras.op.function", group_size=2, sync_period=4, wait_avoiding=False,
                 return_round=True)
    phases = hvd.groups(size, 2)

    @tf.function
    def twice(x):
        first, first_round = hvd.group_allreduce(x, **knobs)
        second, second_round = hvd.group_allreduce(x, **knobs)
        return first, second, first_round, second_round

    inputs = np.stack([initial_value(r, 5, size) for r in range(size)])  # float64
    x = tf.constant(inputs[rank])
    rounds, err = [], 0.0
    for k in range(4):
        first, second, first_round, second_round = twice(x)
        want_first = average_round(inputs, 2 * k, phases, 4)
        want_second = average_round(inputs, 2 * k + 1, phases, 4)
        err = max(err, float(np.abs(first.numpy() - want_first[rank]).max()),
                  float(np.abs(second.numpy() - want_second[rank]).max()))
        rounds.append([int(first_round), int(second_round)])
        inputs, x = want_second, second
    return dict(rounds=rounds, err=err, round_dtype=first_round.dtype.name,
                round_ndims=first_round.shape.rank)


def process_set():
    """docs/api.md: the op's process_set (a registered Horovod ProcessSet; groups are
    formed among its ranks), and the Keras optimizer's, which restricts WAGMA to the
    set as in PyTorch. The set is this rank's group of phase 0, which init() registered
    on MPI (Gloo registers none: None there): [0, 1] or [2] of groups(3, 2), one stream
    name for both (disjoint sets). Round 0 of each is global over the set alone: the
    op's result, and after one SGD(0) step (the model stays, then is averaged) the
    model, are the means over the set's ranks, not over the world."""
    if on_gloo():
        return None
    ps = hvd.group_process_set(0)
    y = hvd.group_allreduce(tf.constant([float(rank), 10.0 * rank], tf.float64),
                            name="keras.op.process_set", process_set=ps)
    v = tf.Variable(initial_value(rank, 6, size))  # float64
    own = v.numpy().tolist()
    opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.0), process_set=ps,
                                        sync_period=4, global_rounds="blocking")
    opt.apply_gradients([(tf.zeros_like(v), v)])  # step 0: a global round of the set
    return dict(members=sorted(ps.ranks), op=y.numpy().tolist(), own=own,
                model=v.numpy().tolist())


def sgd_velocities(opt, variables):
    """SGD's velocity variables of ``variables`` (the optimizer built)."""
    return [opt.momentums[opt._index_dict[opt._var_key(v)]] for v in variables]


def sgd_velocity_values(opt, variables):
    """Their values; zeros before the optimizer is built (its first step)."""
    if not getattr(opt, "_built", False):
        return [np.zeros(v.shape, v.dtype.as_numpy_dtype) for v in variables]
    return [m.numpy() for m in sgd_velocities(opt, variables)]


def quasi_global():
    """average_optimizer_state="quasi_global" in Keras (docs/api.md): after each
    step's averaging SGD's velocity is rebuilt, v = beta v_old + (1 - beta)(x_after -
    x_before) (Keras's velocity carries -lr), and, unlike PyTorch (semantics.md), the
    velocities are not averaged at global rounds. 3 ranks, S=2, tau 3 (global rounds 0
    and 2 here), group rounds that wait for every member, 4 eager steps, different
    initial models and data per rank; "never" once too (its velocity is SGD's own: the
    check can fail). Returns per mode the largest residual against the rule over steps
    and elements, the largest move of the model, and whether the velocities were the
    same bits on every rank after each global round."""
    beta = 0.9
    rng = np.random.default_rng(20 + rank)
    xs = rng.standard_normal((64, 3)).astype("float32")
    ys = np.stack([xs[:, 0] * xs[:, 1], xs[:, 2]], axis=1).astype("float32")
    out = {}
    for mode in ("quasi_global", "never"):
        tf.random.set_seed(rank)
        model = tf.keras.Sequential([tf.keras.layers.Input((3,)),
                                     tf.keras.layers.Dense(8, activation="tanh"),
                                     tf.keras.layers.Dense(2)])
        opt = hvd.DistributedWagmaOptimizer(
            tf.keras.optimizers.SGD(0.1, momentum=beta), group_size=2, sync_period=3,
            wait_avoiding=False, average_optimizer_state=mode)
        trainable = model.trainable_variables
        residual, moved, same = 0.0, 0.0, []
        for step in range(4):
            x_before = [v.numpy() for v in trainable]
            v_old = sgd_velocity_values(opt, trainable)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(xs[step * 16:(step + 1) * 16])
                                       - ys[step * 16:(step + 1) * 16]) ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, trainable), trainable))
            x_after = [v.numpy() for v in trainable]
            v_new = sgd_velocity_values(opt, trainable)
            for x0, m0, x1, m1 in zip(x_before, v_old, x_after, v_new):
                rule = beta * m0 + (1 - beta) * (x1 - x0)
                residual = max(residual, float(np.abs(m1 - rule).max()))
                moved = max(moved, float(np.abs(x1 - x0).max()))
            if step in (0, 2):  # the global rounds of tau 3
                same.append(all_equal(sgd_velocities(opt, trainable)))
        out[mode] = dict(residual=residual, moved=moved, same_at_global=same)
    return out


BALANCED_N = 483  # 161 samples per rank when equal; batches of 8


def cycle(epoch):
    """Injected seconds per step: rank 0 2x slower for epochs 0-1, rank 1 from epoch 2."""
    return 0.080 if rank == (0 if epoch < 2 else 1) else 0.040


class PacedRecorder(tf.keras.callbacks.Callback):
    """This rank's device (one step per injected cycle, the step included) and, per
    epoch, the steps Keras took and the sequence's shares and length."""

    def __init__(self, seq):
        super().__init__()
        self.seq, self.epochs = seq, []

    def on_train_begin(self, logs=None):
        self.seq.ids = [[]]  # not Keras's peek at batch 0 (its shapes), before training

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.steps = epoch, 0
        self.next = time.perf_counter() + cycle(epoch)

    def on_train_batch_begin(self, batch, logs=None):
        time.sleep(max(0.0, self.next - time.perf_counter()))
        self.next = time.perf_counter() + cycle(self.epoch)

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1

    def on_epoch_end(self, epoch, logs=None):
        # Before the sequence's own on_epoch_end: this epoch's shares.
        self.epochs.append(dict(steps=self.steps, length=len(self.seq),
                                shares=list(self.seq.shares), loss=logs["loss"],
                                throughputs=self.seq.throughputs,
                                equal_steps_needed=self.seq.equal_steps_needed))


class RecordedSequence(hvd.BalancedSequence):
    """Records the sample ids it hands to Keras (column 7 of x is id / 1000)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ids = [[]]

    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        self.ids[-1] += np.rint(x[:, 7] * 1000).astype(int).tolist()
        return x, y

    def on_epoch_end(self):
        super().on_epoch_end()
        self.ids.append([])


def balanced_fit(optimizer, epochs, **options):
    x, y = data(0, BALANCED_N)  # one dataset, every rank the same (a sampler's setting)
    x[:, 7] = np.arange(BALANCED_N) / 1000
    seq = RecordedSequence(x, y, batch_size=8, seed=3, **options)
    tf.random.set_seed(rank)
    model = make_model()
    model.compile(optimizer=optimizer,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    recorder = PacedRecorder(seq)
    model.fit(seq, epochs=epochs, verbose=0, callbacks=[
        hvd.callbacks.MetricAverageCallback(), recorder])
    return dict(epochs=recorder.epochs, ids=seq.ids[:epochs], total=seq.total_size)


def balanced():
    """BalancedSequence in model.fit with DistributedWagmaOptimizer's defaults and
    MetricAverageCallback: 4 epochs, the slow rank moving after epoch 1."""
    # Named (name=): BalancedSequence must know it by its name, not the default prefix.
    return balanced_fit(hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05),
                                                      name="balanced_sgd"), 4)


def balanced_horovod():
    """The same with Horovod's own DistributedOptimizer: equal shares, a finished fit.
    No dead band: the ranks' measured cycles (all the slowest's, as Horovod's step
    waits for it) differ by noise, so only recognising the optimizer keeps them equal."""
    out = balanced_fit(hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.05)), 2,
                       dead_band=0.0)
    x, y = data(0, 10)
    out["bad_input"] = [error(lambda: hvd.BalancedSequence(x, y, 0)),
                        error(lambda: hvd.BalancedSequence(x, y[:9], 4)),
                        error(lambda: hvd.BalancedSequence(x, y, 4, rank=size)),
                        error(lambda: hvd.BalancedSequence(x, y, 4, dead_band=1.0))]
    return out


run_scenarios({name: globals()[name] for name in sys.argv[1:]}, sys.argv[1:])
