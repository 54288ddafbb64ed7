"""The API's surface, on one process: re-exports, imports, defaults, argument errors,
the schedule's count, the samplers' drop_last and list inputs, and the Keras
optimizer's and callbacks' arguments (docs/api.md, docs/semantics.md).

What needs Horovod initialised runs in a child process at size 1 (a singleton MPI
job, no launcher): one for PyTorch, one for TensorFlow, each printing one JSON dict
that several tests read (TensorFlow's imports cost about 10 s, so every TensorFlow
check shares one child). Each child section catches its own error, so a broken
section fails only its tests."""
import dataclasses
import inspect
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

CHILD_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                 OMPI_MCA_mpi_yield_when_idle="1", TF_CPP_MIN_LOG_LEVEL="3",
                 PYTHONUNBUFFERED="1")
# Engine settings a test run may have exported (the child's engine uses its defaults).
for _v in ("HOROVOD_ELASTIC", "HOROVOD_DYNAMIC_PROCESS_SETS", "WAGMA_TIMELINE"):
    CHILD_ENV.pop(_v, None)

# Shared by both children: run each section, keep its result or its traceback.
SECTIONS = textwrap.dedent("""
    import json, sys, traceback
    OUT = {}

    def section(key):
        def run(fn):
            try:
                OUT[key] = fn()
            except Exception:
                OUT[key] = {"error": traceback.format_exc()[-4000:]}
            return fn
        return run
""")


def run_child(code, timeout):
    out = subprocess.run([sys.executable, "-c", SECTIONS + textwrap.dedent(code)
                          + "\nprint('RESULT=' + json.dumps(OUT))\n"],
                         capture_output=True, text=True, timeout=timeout, env=CHILD_ENV)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT=")]
    assert out.returncode == 0 and lines, (out.returncode, out.stdout[-3000:],
                                           out.stderr[-5000:])
    return json.loads(lines[-1][len("RESULT="):])


def ok(result):
    """A child section's result, failing the test with its traceback if it raised."""
    assert isinstance(result, dict) and "error" not in result, (result or {}).get("error")
    return result


# --- imports and defaults ------------------------------------------------------------


def test_top_level_imports_no_framework():
    """api.md: "The top-level horovod_wagma imports no framework": a fresh interpreter
    that imports it has neither PyTorch, TensorFlow, Keras nor Horovod's framework
    modules loaded."""
    code = ("import sys, horovod_wagma; print(sorted(m for m in sys.modules if m.split('.')[0] "
            "in ('torch', 'tensorflow', 'keras', 'tf_keras', 'jax') or m in "
            "('horovod.torch', 'horovod.tensorflow')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=CHILD_ENV)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]", out.stdout


def test_init_defaults():
    """api.md's init() signature: sync_period=10, averaging="fresh", max_staleness=None,
    which means sync_period (also with another sync_period), and what the engine gets
    for a wait-avoiding global stream is that bound. The child (torch_child) checks that
    an init() without knobs leaves exactly these as every stream's defaults."""
    import horovod_wagma.torch as hvd
    from horovod_wagma.common.op.config import WagmaConfig
    params = inspect.signature(hvd.init).parameters
    assert params["sync_period"].default == 10
    assert params["averaging"].default == "fresh"
    assert params["max_staleness"].default is None
    assert params["wait_avoiding"].default is True
    assert params["global_rounds"].default == "blocking"
    config = WagmaConfig()
    assert (config.sync_period, config.averaging, config.max_staleness) == (10, "fresh", None)
    assert config.resolved_max_staleness == 10
    assert WagmaConfig(sync_period=7).resolved_max_staleness == 7
    assert WagmaConfig(sync_period=7, max_staleness=3).resolved_max_staleness == 3
    # The engine's 6 ints: S, tau, rule, wait_avoiding, global mode, max_staleness.
    wa = WagmaConfig(global_rounds="wait_avoiding")
    assert wa.engine_fields(4) == [2, 10, 0, 1, 1, 10]
    # init() builds its WagmaConfig from its own defaults: the two agree.
    from horovod_wagma.common.op.basics import WagmaBasics
    params = inspect.signature(WagmaBasics.init).parameters
    for field in dataclasses.fields(WagmaConfig):
        assert params[field.name].default == field.default, field.name


def test_unnamed_calls_are_numbered_by_unnamed_calls_only():
    """api.md / semantics.md: unnamed calls are named from a counter every rank advances
    alike. Ranks may make different named calls (a stream over a process set some are
    not in, a metric stream on rank 0 only), so only unnamed calls may advance it: each
    of three ranks here makes its own named calls between the same unnamed ones, and
    their unnamed calls get the same names, in order. Single process: the engine's
    start is stood in for."""
    from horovod_wagma.common.op.basics import WagmaBasics

    def names_of(calls):
        basics = WagmaBasics(hvd=None)
        basics.ensure_started = lambda: None
        basics._size = 4
        return [basics.prepare_call(True, "float32", name, None)[0] for name in calls]

    unnamed = ["group_allreduce.noname.0", "group_allreduce.noname.1",
               "group_allreduce.noname.2"]
    for calls in ([None, None, None],
                  [None, "metric", None, "a", "b", None],
                  ["x", "y", "z", None, None, "w", None]):
        got = [n for n, c in zip(names_of(calls), calls) if c is None]
        assert got == unnamed, (calls, got)


@pytest.mark.parametrize("size,group_size", [(4, 2), (5, 2), (6, 2), (6, 4), (7, 2),
                                             (8, 4)])
def test_dynamic_group_sets_register_every_group_once(size, group_size):
    """api.md: with process_sets="dynamic" (HOROVOD_DYNAMIC_PROCESS_SETS=1) every phase's
    groups are added as Horovod process sets, each group once: where P is not a power of
    S the phases' rotations repeat groups, and Horovod refuses a duplicate set. The
    stand-in records add_process_set and refuses duplicates as Horovod does; the sets
    added are the schedule's distinct groups (not the whole world), in phase order."""
    from horovod_wagma.common.op.basics import WagmaBasics
    from horovod_wagma.common.op.config import WagmaConfig
    from horovod_wagma.common.op.schedule import groups

    class HorovodStandIn:
        def __init__(self):
            self.added = []

        def size(self):
            return size

        def add_process_set(self, ranks):
            if tuple(ranks) in self.added:
                raise ValueError("Attempted to add a duplicate process set")
            self.added.append(tuple(ranks))
            return ("set", tuple(ranks))

    hvd = HorovodStandIn()
    basics = WagmaBasics(hvd)
    basics.config = WagmaConfig(group_size=group_size)
    basics._add_dynamic_group_sets()
    distinct = []
    for phase in groups(size, group_size):
        for g in phase:
            if len(g) < size and tuple(g) not in distinct:
                distinct.append(tuple(g))
    assert hvd.added == distinct
    assert basics._group_sets == {k: ("set", k) for k in distinct}


def test_init_passes_every_knob_to_the_defaults_and_checks_them():
    """api.md: init()'s knobs are the defaults of every stream, each checked. The
    Horovod stand-in stops init() right after it has built its defaults, before any
    engine or Horovod start, so the test reads them back single-process."""
    from horovod_wagma.common.op.basics import WagmaBasics

    class Stop(Exception):
        pass

    class HorovodStandIn:
        def is_initialized(self):
            raise Stop

    # Every value differs from init()'s default in one of the two sets.
    for knobs in (dict(group_size=4, sync_period=7, averaging="paper", wait_avoiding=True,
                       global_rounds="wait_avoiding", max_staleness=3),
                  dict(group_size=2, sync_period=4096, averaging="delta",
                       wait_avoiding=False, global_rounds="blocking", max_staleness=0)):
        basics = WagmaBasics(HorovodStandIn())
        with pytest.raises(Stop):
            basics.init(**knobs)
        assert {k: getattr(basics.config, k) for k in knobs} == knobs
    for bad in (dict(max_staleness=4097), dict(max_staleness=-1), dict(sync_period=0),
                dict(group_size=1), dict(averaging="mean"), dict(global_rounds="never")):
        with pytest.raises(ValueError, match=next(iter(bad))):
            WagmaBasics(HorovodStandIn()).init(**bad)


def test_schedule_has_the_fewest_phases_for_283_of_441_pairs():
    """semantics.md: L = ceil(log_S P) phases (the fewest that can mix every rank into
    every rank) for 283 of the 441 (P, S) pairs with P in 2..64 and S in 2..8."""
    from horovod_wagma.common.op.schedule import groups

    def fewest(P, S):
        L, reach = 0, 1
        while reach < P:
            reach, L = reach * S, L + 1
        return L
    pairs = [(P, S) for P in range(2, 65) for S in range(2, 9)]
    minimal = [(P, S) for P, S in pairs if len(groups(P, S)) == fewest(P, S)]
    assert len(pairs) == 441
    assert len(minimal) == 283, len(minimal)
    # Every exact power and every P <= S are among them.
    assert all((P, S) in minimal for P, S in pairs if P <= S or S ** fewest(P, S) == P)


# --- PyTorch: arguments and samplers ---------------------------------------------------


def test_compression_other_than_none_or_fp16_is_a_value_error():
    """api.md: DistributedWagmaOptimizer's compression: none or fp16; anything else is a
    ValueError (raised from the arguments alone, before the engine is needed). The
    Keras twin runs in the TensorFlow child (test_keras_compression...)."""
    import horovod.torch.compression as compression
    import torch

    import horovod_wagma.torch as hvd

    class TopK(compression.Compressor):
        pass
    model = torch.nn.Linear(2, 1)
    for other in (TopK, "fp16", None):
        with pytest.raises(ValueError, match="compression"):
            hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                          named_parameters=model.named_parameters(),
                                          compression=other)


@pytest.mark.parametrize("shuffle", [False, True])
def test_batch_sampler_drop_last_cuts_to_whole_global_batches(shuffle):
    """api.md: BalancedBatchSampler pads the permutation to a whole number of global
    batches, or with drop_last cuts it to one. 50 samples, 3 ranks, batches of 4
    (global batch 12): drop_last gives 4 steps dealing 48 distinct samples, none
    repeated; without it 5 steps, the 10 missing ones repeated from the start."""
    from horovod_wagma.torch import BalancedBatchSampler

    def dealt(drop_last):
        per_rank = []
        for rank in range(3):
            s = BalancedBatchSampler(range(50), batch_size=4, num_replicas=3, rank=rank,
                                     shuffle=shuffle, seed=3, drop_last=drop_last)
            batches = list(iter(s))
            assert len(batches) == len(s) and all(len(b) == 4 for b in batches), batches
            per_rank.append(batches)
        return per_rank
    cut = dealt(True)
    assert [len(b) for b in cut] == [4, 4, 4]
    samples = [i for batches in cut for b in batches for i in b]
    assert len(samples) == 48 and len(set(samples)) == 48, sorted(samples)
    assert set(samples) <= set(range(50))
    padded = dealt(False)
    assert [len(b) for b in padded] == [5, 5, 5]
    samples = [i for batches in padded for b in batches for i in b]
    assert len(samples) == 60 and set(samples) == set(range(50))


TORCH_CHILD = """
    import dataclasses, time
    import torch
    import horovod_wagma.torch as hvd
    from horovod_wagma.torch import ops

    @section("comm")
    def _():
        errors = []
        for comm in (object(), "COMM_WORLD", 0):
            try:
                hvd.init(comm=comm)
                errors.append(None)
            except ValueError as e:
                errors.append(str(e))
        from mpi4py import MPI
        hvd.init(comm=MPI.COMM_WORLD)
        return {"errors": errors, "initialized": hvd.is_initialized(), "size": hvd.size(),
                "config": dataclasses.asdict(ops._basics.config),
                "op": hvd.group_allreduce(torch.tensor([1.0, 3.0]), name="comm.op").tolist()}

    @section("horovod_handles")
    def _():
        h = hvd.allreduce_async(torch.tensor([1.0, 2.0, 3.0]), op=hvd.Sum,
                                prescale_factor=2.0, name="surface.horovod")
        t0 = time.time()
        while not hvd.poll(h) and time.time() - t0 < 60:
            time.sleep(0.01)
        polled = hvd.poll(h)
        result = hvd.synchronize(h).tolist()
        w = hvd.group_allreduce_async(torch.tensor([4.0, 5.0]), name="surface.wagma")
        t0 = time.time()
        while not hvd.poll(w) and time.time() - t0 < 60:
            time.sleep(0.01)
        return {"polled": polled, "result": result, "wagma_polled": hvd.poll(w),
                "wagma": hvd.synchronize(w).tolist(), "wagma_round": w.round}

    @section("passes")
    def _():
        model = torch.nn.Linear(2, 1, bias=False)
        with torch.no_grad():
            model.weight.copy_(torch.tensor([[0.5, -1.0]]))
        opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                            named_parameters=model.named_parameters())
        served_before = opt.wagma_status().served_round
        opt.set_backward_passes_per_step(2)
        stored = opt.backward_passes_per_step
        refused = []
        for bad in (0, -1):
            try:
                opt.set_backward_passes_per_step(bad)
                refused.append(None)
            except ValueError as e:
                refused.append(str(e))
        x = torch.tensor([[1.0, 2.0]])
        weights, rounds = [], []
        for step in range(2):
            opt.zero_grad()
            for _ in range(2):                # two backward passes, one step
                model(x).sum().backward()
            opt.step()
            weights.append(model.weight.detach().flatten().tolist())
            rounds.append(hvd.stats(opt.wagma_status().stream())["rounds"])
        return {"stored": stored, "after_bad": opt.backward_passes_per_step,
                "refused": refused, "weights": weights, "rounds": rounds,
                "name": opt.wagma_status().name, "stream": opt.wagma_status().stream(),
                "served": [served_before, opt.wagma_status().served_round]}
"""


@pytest.fixture(scope="module")
def torch_child():
    return run_child(TORCH_CHILD, timeout=240)


def test_comm_must_be_none_or_comm_world(torch_child):
    """api.md: init's comm is None or mpi4py's COMM_WORLD; anything else is a
    ValueError; COMM_WORLD itself initialises Horovod and the op then works. The same
    init() (no knobs) leaves WagmaConfig's defaults as every stream's (sync_period 10,
    "fresh", max_staleness None)."""
    res = ok(torch_child["comm"])
    assert all(e and "MPI_COMM_WORLD" in e for e in res["errors"]), res["errors"]
    assert res["initialized"] and res["size"] == 1
    assert res["op"] == [1.0, 3.0]
    assert res["config"] == {"group_size": None, "sync_period": 10, "averaging": "fresh",
                             "wait_avoiding": True, "global_rounds": "blocking",
                             "max_staleness": None}


def test_synchronize_and_poll_take_horovod_handles(torch_child):
    """api.md: horovod_wagma.torch's synchronize and poll also accept Horovod handles and
    pass them to Horovod: a Horovod allreduce_async (Sum, prescale 2) polls True and
    synchronizes to Horovod's result; a WAGMA handle still goes to WAGMA."""
    res = ok(torch_child["horovod_handles"])
    assert res["polled"] is True
    assert res["result"] == [2.0, 4.0, 6.0]
    assert res["wagma_polled"] is True and res["wagma"] == [4.0, 5.0]
    assert res["wagma_round"] == 0


def test_set_backward_passes_per_step(torch_child):
    """api.md: opt.set_backward_passes_per_step(passes), checked as the constructor's
    argument (> 0, else ValueError, leaving the value); gradients of the passes
    accumulate locally and every step() averages once: two passes of x = (1, 2) move
    w by 2 * lr * x per step, one WAGMA round per step."""
    res = ok(torch_child["passes"])
    assert res["stored"] == 2 and res["after_bad"] == 2
    assert all(e and "backward_passes_per_step" in e for e in res["refused"]), res["refused"]
    assert sum(res["weights"], []) == pytest.approx([0.3, -1.4, 0.1, -1.8], abs=1e-6)
    assert res["rounds"] == [1, 2]
    # api.md: streams are named wagma.optimizerN.model{i}; this is the child's first
    # DistributedWagmaOptimizer (no earlier section makes one), so N is 0.
    assert res["name"] == "wagma.optimizer0", res["name"]
    assert res["stream"] == "wagma.optimizer0.model0", res["stream"]
    # api.md: served_round is the round that served the last step, steps - 1 on a rank
    # that does not lag: -1 before the first step (round 0 not yet served).
    assert res["served"] == [-1, 1], res["served"]


# --- TensorFlow and Keras: one child -----------------------------------------------------

TF_CHILD = """
    import inspect, os, warnings
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import horovod_wagma.keras as hvd               # before TensorFlow (Keras 2)
    import horovod_wagma.tensorflow as wtf
    import numpy as np
    import tensorflow as tf
    import horovod.tensorflow as htf
    import horovod.tensorflow.keras as hk
    import horovod.tensorflow.keras.callbacks as hcb
    from horovod.tensorflow.compression import Compressor

    def origin(value):
        return getattr(value, "__module__", None) or getattr(value, "__name__", None)

    def compare(ours, theirs):
        names = sorted(n for n in dir(theirs) if not n.startswith("_"))
        replaced = sorted(n for n in names if hasattr(ours, n)
                          and getattr(ours, n) is not getattr(theirs, n))
        return {"count": len(names), "missing": [n for n in names if not hasattr(ours, n)],
                "replaced": {n: origin(getattr(ours, n)) for n in replaced}}

    @section("reexports")
    def _():
        extra = sorted(n for n in dir(hvd.callbacks) if not n.startswith("_")
                       and n not in dir(hcb) and isinstance(getattr(hvd.callbacks, n), type))
        return {"tensorflow": compare(wtf, htf), "keras": compare(hvd, hk),
                "callbacks": compare(hvd.callbacks, hcb), "wagma_callbacks": extra}

    hvd.init()

    def sgd(momentum=0.9):
        return tf.keras.optimizers.SGD(0.1, momentum=momentum)

    def eager_steps(opt, n=4):
        v = tf.Variable(np.random.RandomState(0).rand(8).astype("float32") - 0.5)
        target = tf.constant(np.linspace(-1, 1, 8).astype("float32"))
        for _ in range(n):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((v - target) ** 2)
            opt.apply_gradients([(tape.gradient(loss, v), v)])
        return v.numpy()

    @section("names")                              # the first optimizers of the process
    def _():
        first = hvd.DistributedWagmaOptimizer(sgd())
        second = hvd.DistributedWagmaOptimizer(sgd())
        named = hvd.DistributedWagmaOptimizer(sgd(), name="surface_opt")
        for opt in (first, second, named):
            eager_steps(opt, 1)
        return {"names": [o.wagma_status().name for o in (first, second, named)],
                "streams": sorted(hvd.stats())}

    @section("no_effect")
    def _():
        base_opt = hvd.DistributedWagmaOptimizer(sgd(), sync_period=3)
        base = eager_steps(base_opt)
        initial = eager_steps(hvd.DistributedWagmaOptimizer(sgd(), sync_period=3), 0)
        knobs = lambda o: {k: v for k, v in vars(o.wagma_status()).items() if k != "name"}
        same, same_knobs = {}, {}
        for arg, value in (("device_dense", "/cpu:0"), ("device_sparse", "/cpu:0"),
                           ("sparse_as_dense", True), ("gradient_predivide_factor", 0.5),
                           ("average_aggregated_gradients", True),
                           ("scale_local_gradients", False), ("backward_passes_per_step", 3)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opt = hvd.DistributedWagmaOptimizer(sgd(), sync_period=3, **{arg: value})
            same[arg] = bool(np.array_equal(eager_steps(opt), base))
            same_knobs[arg] = knobs(opt) == knobs(base_opt)
        return {"same": same, "same_knobs": same_knobs,
                "moved": not bool(np.array_equal(base, initial))}

    @section("status")
    def _():
        opt = hvd.DistributedWagmaOptimizer(sgd())
        eager_steps(opt, 3)
        s = opt.wagma_status()
        return {"served_round": s.served_round, "steps": s.steps}

    @section("compression")
    def _():
        class TopK(Compressor):
            pass
        errors = []
        for other in (TopK, "fp16"):
            try:
                hvd.DistributedWagmaOptimizer(sgd(), compression=other)
                errors.append(None)
            except ValueError as e:
                errors.append(str(e))
        for fine in (hvd.Compression.none, hvd.Compression.fp16):
            hvd.DistributedWagmaOptimizer(sgd(), compression=fine)
        return {"errors": errors}

    @section("drift_moment")
    def _():
        # drift_correction given: which optimizers keep a first moment
        def refused(opt):
            try:
                hvd.DistributedWagmaOptimizer(opt, drift_correction=0.25,
                                              average_optimizer_state="on_sync")
                return None
            except ValueError as e:
                return str(e)
        return {"sgd_without_momentum": refused(sgd(momentum=0.0)),
                "rmsprop": refused(tf.keras.optimizers.RMSprop(0.01)),
                "accepted": [refused(o) for o in (sgd(0.9), tf.keras.optimizers.Adam(0.01),
                                                  tf.keras.optimizers.AdamW(0.01),
                                                  tf.keras.optimizers.Nadam(0.01))]}

    @section("async_in_function")
    def _():
        h = wtf.group_allreduce_async(tf.constant([1.0, 2.0]), name="surface.async.eager")
        eager = wtf.synchronize(h).numpy().tolist()
        # api.md: poll is True when synchronize will not block, so also once the
        # handle is synchronized (the engine has forgotten its id by then).
        polled_after = [wtf.poll(h), wtf.synchronize(h).numpy().tolist()]

        @tf.function
        def inside(x):
            return wtf.group_allreduce_async(x, name="surface.async.graph")
        try:
            inside(tf.constant([1.0, 2.0]))
            raised = None
        except Exception as e:
            raised = [type(e).__name__, isinstance(e, wtf.WagmaError), str(e)]
        return {"eager": eager, "raised": raised, "polled_after": polled_after}

    class Recorder(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.lr, self.momentum, self.momentum_after = [], [], []

        def on_train_batch_begin(self, batch, logs=None):
            self.lr.append(float(tf.keras.backend.get_value(self.model.optimizer.lr)))
            m = self.model.optimizer.momentum
            self.momentum.append(float(m.numpy()) if isinstance(m, tf.Variable) else m)

        def on_train_batch_end(self, batch, logs=None):
            m = self.model.optimizer.momentum
            self.momentum_after.append(float(m.numpy()) if isinstance(m, tf.Variable) else m)

    x = np.random.RandomState(1).rand(32, 2).astype("float32")
    y = x.sum(axis=1, keepdims=True)

    def fit(opt, callbacks, epochs, **wagma):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        model.compile(optimizer=hvd.DistributedWagmaOptimizer(opt, **wagma), loss="mse")
        rec = Recorder()
        history = model.fit(x, y, batch_size=8, epochs=epochs, verbose=0,
                            callbacks=callbacks + [rec])   # 4 steps an epoch
        return {"lr": rec.lr, "momentum": rec.momentum, "momentum_after": rec.momentum_after,
                "history_lr": [float(v) for v in history.history.get("lr", [])],
                "served_round": model.optimizer.wagma_status().served_round,
                "steps": model.optimizer.wagma_status().steps}

    def signature(cls):
        return [(p.name, repr(p.default)) for p in
                inspect.signature(cls.__init__).parameters.values()]

    @section("schedule")
    def _():
        cb = hvd.callbacks
        stair = fit(tf.keras.optimizers.SGD(0.3, momentum=0.9),
                    [cb.LearningRateScheduleCallback(0.1, 0.5, start_epoch=1, end_epoch=3)], 4)
        smooth = fit(tf.keras.optimizers.SGD(0.3, momentum=0.9),
                     [cb.LearningRateScheduleCallback(0.1, lambda e: 1.0 / (1.0 + e),
                                                      staircase=False, steps_per_epoch=4)], 2)
        warmup = fit(tf.keras.optimizers.SGD(0.3, momentum=0.9),
                     [cb.LearningRateWarmupCallback(0.3, warmup_epochs=2, steps_per_epoch=4)], 1)
        return {"stair": stair, "smooth": smooth, "warmup": warmup,
                "signatures": {n: [signature(getattr(cb, n)), signature(getattr(hcb, n))]
                               for n in ("LearningRateScheduleCallback",
                                         "LearningRateWarmupCallback")}}

    @section("momentum_variable")
    def _():
        # The legacy SGD's momentum is a variable: corrected in the batch the lr
        # changes (0.9 * 0.1 / 0.3), restored after it.
        return fit(tf.keras.optimizers.legacy.SGD(0.3, momentum=0.9),
                   [hvd.callbacks.LearningRateScheduleCallback(0.1, 0.5, start_epoch=1)], 2,
                   average_optimizer_state="never")

    @section("op_knobs")
    def _():
        # What the TF op hands its kernel: a recorder stands in for the op library.
        from horovod_wagma.tensorflow import ops
        seen = []

        class Recorder:
            def wagma_group_allreduce(self, tensor, **kw):
                seen.append({k: v if isinstance(v, (int, float, bool, str)) else repr(v)
                             for k, v in kw.items()})
                return tensor, tf.constant(0, tf.int64)
        real, ops._op_lib = ops._op_lib, Recorder()
        try:
            ops.group_allreduce(tf.ones(2), name="knobs", sync_period=10, max_staleness=3,
                                global_rounds="wait_avoiding")
            ops.group_allreduce(tf.ones(2), name="knobs.waiting", wait_avoiding=False)
        finally:
            ops._op_lib = real
        return {"kernel": seen,
                "metric_callback": signature(hvd.callbacks.MetricAverageCallback)}

    @section("keras_elastic_verdicts")
    def _():
        # What horovod_wagma.keras.elastic.run raises for the op's engine errors: the
        # engine's verdicts become WAGMA's exceptions, other op errors stay TF's. Horovod's
        # run (which needs an elastic driver) is replaced by the bare function.
        import horovod_wagma.keras.elastic as kelastic
        real, kelastic._hvd_tf_elastic.run = kelastic._hvd_tf_elastic.run, lambda f: f
        raised = {}
        try:
            for key, text in (("lost", "membership changed: rank 1 was lost (...); 3 of 4 "
                                       "ranks remain"),
                              ("fenced", "fenced: ranks 2, 3 were lost (...); 2 of 4 ranks "
                                         "remain on this side, not a majority"),
                              ("other", "stalled: waited 3.0 s")):
                def body(state, text=text):
                    raise tf.errors.AbortedError(None, None, text)
                try:
                    kelastic.run(body)(None)
                except Exception as e:  # noqa: BLE001
                    raised[key] = [type(e).__name__, [c.__name__ for c in type(e).__mro__]]
        finally:
            kelastic._hvd_tf_elastic.run = real
        return raised

    @section("sequence_drop_last")
    def _():
        # 11 samples over 2 ranks: drop_last truncates to 10, else pads to 12.
        x = np.arange(11, dtype="float32")[:, None]
        out = {}
        for drop_last in (True, False):
            dealt = []
            for rank in (0, 1):
                seq = hvd.BalancedSequence(x, None, 2, shuffle=True, seed=1,
                                           drop_last=drop_last, num_replicas=2, rank=rank)
                dealt.append([int(v) for i in range(len(seq)) for v in seq[i][:, 0]])
            out[str(drop_last)] = dealt
        return out

    @section("sequence")
    def _():
        n = 10
        x1 = np.repeat(np.arange(n, dtype="float32")[:, None], 3, axis=1)  # row i: i
        x2, y1, y2 = np.arange(n) * 10, np.arange(n) + 100, -np.arange(n, dtype="float64")
        ranks = []
        for rank in (0, 1):
            seq = hvd.BalancedSequence([x1, x2], [y1, y2], 3, shuffle=True, seed=4,
                                       num_replicas=2, rank=rank)
            ids, aligned, kinds = [], True, set()
            for i in range(len(seq)):
                xs, ys = seq[i]
                kinds.add((type(xs).__name__, len(xs), type(ys).__name__, len(ys)))
                b = xs[0][:, 0].astype(int)
                aligned = aligned and bool(
                    (xs[0] == b[:, None]).all() and (xs[1] == b * 10).all()
                    and (ys[0] == b + 100).all() and (ys[1] == -b).all())
                ids += b.tolist()
            ranks.append({"ids": ids, "indices": seq.indices.tolist(), "len": len(seq),
                          "aligned": aligned, "kinds": sorted(map(list, kinds))})
        tup = hvd.BalancedSequence((x1, x2), None, 4, num_replicas=2, rank=1)
        unlabelled = hvd.BalancedSequence(x1, None, 4, shuffle=False, num_replicas=2, rank=1)
        first = unlabelled[0]
        return {"ranks": ranks, "tuple_kind": type(tup[0]).__name__,
                "unlabelled_kind": type(first).__name__,
                "unlabelled": np.asarray(first).tolist(), "unlabelled_len": len(unlabelled)}

    @section("fusion")
    def _():
        # The Keras optimizer's fusion buffers: its model streams (<prefix>.model{i}, one
        # per buffer) and values after 3 eager SGD steps (gradient i + 1 for variable i),
        # per grouping of 4 float32 variables, and for float32 variables around a float64
        # one. At size 1 the average is the model itself: every grouping gives the same
        # bits, and the float64 variable keeps its 2**-40 only in a float64 buffer.
        def steps(opt, variables):
            for _ in range(3):
                opt.apply_gradients([(tf.ones_like(v) * (i + 1), v)
                                     for i, v in enumerate(variables)])
            return [v.numpy().tolist() for v in variables]

        def run(variables, **kw):
            opt = hvd.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.1), sync_period=3,
                                                **kw)
            values = steps(opt, variables)
            prefix = opt.wagma_status().name + "."
            # Only the model's streams: the "sync" ones average the optimizer's
            # floating variables (Keras 3's SGD has its learning rate among them).
            return {"streams": sorted(k[len(prefix):] for k in hvd.stats()
                                      if k.startswith(prefix + "model")), "values": values}

        def four():
            return [tf.Variable(np.arange(n, dtype="float32") + 1.0) for n in (3, 2, 4, 1)]

        def mixed():
            return [tf.Variable(np.full(3, 1.0, "float32")),
                    tf.Variable(np.full(2, 1.0 + 2.0 ** -40, "float64")),
                    tf.Variable(np.full(2, 2.0, "float32"))]
        out = {"default": run(four()), "num_groups": run(four(), num_groups=2)}
        grouped = four()
        out["groups"] = run(grouped, groups=[[grouped[3], grouped[0]]])
        out["mixed"] = run(mixed())
        out["mixed_local"] = steps(tf.keras.optimizers.SGD(0.1), mixed())  # no WAGMA
        return out
"""


@pytest.fixture(scope="module")
def tf_child():
    return run_child(TF_CHILD, timeout=420)


@pytest.mark.tf
def test_tensorflow_and_keras_reexport_all_of_horovods(tf_child):
    """api.md: horovod_wagma.tensorflow / .keras re-export all of horovod.tensorflow /
    horovod.tensorflow.keras: every public name is there and is Horovod's object, but
    for the ones WAGMA replaces on purpose (init and join; Keras's callbacks and
    elastic modules), which are horovod_wagma's."""
    res = ok(tf_child["reexports"])
    tf_, keras = res["tensorflow"], res["keras"]
    assert tf_["count"] > 50 and keras["count"] > 30, res
    assert tf_["missing"] == [] and keras["missing"] == [], res
    assert sorted(tf_["replaced"]) == ["init", "join"], tf_["replaced"]
    assert sorted(keras["replaced"]) == ["callbacks", "elastic", "init"], keras["replaced"]
    assert all(m.startswith("horovod_wagma") for m in
               list(tf_["replaced"].values()) + list(keras["replaced"].values())), res


@pytest.mark.tf
def test_keras_callbacks_reexport_all_of_horovods(tf_child):
    """api.md: horovod_wagma.keras.callbacks has all of Horovod's Keras callbacks (the
    same classes but for the three it replaces: MetricAverageCallback and the two
    learning-rate schedules), plus WAGMA's own."""
    res = ok(tf_child["reexports"])["callbacks"]
    assert res["count"] >= 5 and res["missing"] == [], res
    assert res["replaced"] == {n: "horovod_wagma.keras.callbacks" for n in (
        "LearningRateScheduleCallback", "LearningRateWarmupCallback",
        "MetricAverageCallback")}, res
    assert {"WagmaGlobalSyncCallback", "WagmaStatsCallback"} <= set(
        tf_child["reexports"]["wagma_callbacks"])


@pytest.mark.tf
def test_tf_group_allreduce_async_inside_tf_function_is_a_wagma_error(tf_child):
    """api.md: group_allreduce_async works eagerly (a handle that synchronizes to the
    mean, at size 1 the input) and raises WagmaError inside tf.function."""
    res = ok(tf_child["async_in_function"])
    assert res["eager"] == [1.0, 2.0]
    assert res["polled_after"] == [True, [1.0, 2.0]], res["polled_after"]
    name, is_wagma_error, text = res["raised"]
    assert is_wagma_error and "eager mode only" in text, res["raised"]


@pytest.mark.tf
def test_tf_op_hands_its_knobs_to_the_kernel(tf_child):
    """api.md: the TensorFlow group_allreduce takes the PyTorch op's arguments: each
    given knob reaches the kernel as given (max_staleness 3, not sync_period's 10;
    wait_avoiding False). And MetricAverageCallback's stream is "wagma.keras_metrics"
    unless named."""
    res = ok(tf_child["op_knobs"])
    wa, waiting = res["kernel"]
    assert wa["stream_name"] == "knobs" and wa["sync_period"] == 10, wa
    assert wa["max_staleness"] == 3 and wa["wait_avoiding"] is True, wa
    assert wa["global_rounds"] == 1, wa  # config.GLOBAL_ROUNDS["wait_avoiding"]
    assert waiting["stream_name"] == "knobs.waiting" and waiting["wait_avoiding"] is False, \
        waiting
    # init()'s defaults where the call gives none: tau 10, blocking global rounds (0),
    # for which the engine gets max_staleness 0.
    assert (waiting["sync_period"], waiting["global_rounds"], waiting["max_staleness"]) == \
        (10, 0, 0), waiting
    assert ["name", "'wagma.keras_metrics'"] in res["metric_callback"], res


@pytest.mark.tf
def test_keras_elastic_run_turns_engine_verdicts_into_wagma_errors(tf_child):
    """elastic.md, README: under horovod_wagma.keras.elastic.run a lost member raises
    WagmaMembershipChanged (a HorovodInternalError: Horovod resets), a fenced side
    WagmaFenced (not one: the script ends), as in PyTorch; other op errors stay
    TensorFlow's."""
    res = ok(tf_child["keras_elastic_verdicts"])
    assert res["lost"][0] == "WagmaMembershipChanged" and \
        "HorovodInternalError" in res["lost"][1], res
    assert res["fenced"][0] == "WagmaFenced" and "HorovodInternalError" not in res["fenced"][1], res
    assert res["other"][0] == "AbortedError", res


@pytest.mark.tf
def test_keras_compression_other_than_none_or_fp16_is_a_value_error(tf_child):
    """api.md: the Keras optimizer takes the PyTorch one's compression rule: none and
    fp16 build, anything else is a ValueError naming compression."""
    errors = ok(tf_child["compression"])["errors"]
    assert all(e and "compression" in e for e in errors), errors


@pytest.mark.tf
def test_keras_drift_correction_needs_a_first_moment(tf_child):
    """api.md: a given drift_correction needs a first moment: tf.keras SGD with
    momentum > 0, or Adam, AdamW, Nadam (each accepted: tf_keras's AdamW and Nadam are
    not Adam subclasses); plain SGD (momentum 0) and other optimizers are a ValueError
    naming what is missing."""
    res = ok(tf_child["drift_moment"])
    assert res["accepted"] == [None, None, None, None], res  # SGD(0.9), Adam, AdamW, Nadam
    assert res["sgd_without_momentum"] and "momentum > 0" in res["sgd_without_momentum"], res
    assert res["rmsprop"] and "RMSprop" in res["rmsprop"] and "first moment" in \
        res["rmsprop"], res


@pytest.mark.tf
def test_keras_stream_prefix_and_name(tf_child):
    """api.md: a Keras optimizer's streams are prefixed wagma.keras_optimizerN, N in
    creation order, unless name= gives the prefix: the first two optimizers of the
    process are ..._optimizer0 and ..._optimizer1, and their steps run on
    <prefix>.model0 streams."""
    res = ok(tf_child["names"])
    assert res["names"] == ["wagma.keras_optimizer0", "wagma.keras_optimizer1",
                            "surface_opt"]
    for prefix in res["names"]:
        assert prefix + ".model0" in res["streams"], res["streams"]


@pytest.mark.tf
def test_keras_gradient_allreduce_arguments_have_no_effect(tf_child):
    """api.md: device_dense, device_sparse, sparse_as_dense, gradient_predivide_factor,
    average_aggregated_gradients, scale_local_gradients and backward_passes_per_step
    concern gradient allreduce and have no effect: 4 eager steps with each set give
    the same bits as without, and the same stream knobs (tau, global rounds, S)."""
    res = ok(tf_child["no_effect"])
    assert res["moved"]
    assert all(res["same"].values()), res["same"]
    assert all(res["same_knobs"].values()), res["same_knobs"]
    assert len(res["same"]) == 7


@pytest.mark.tf
def test_keras_groups_and_num_groups_only_split_the_fusion_buffers(tf_child):
    """api.md: the Keras optimizer takes Horovod's Keras arguments, then WAGMA's "as for
    PyTorch": groups / num_groups only split the fusion buffers, an int K into K
    contiguous buckets, a list of lists into those buckets and every other variable
    alone, one stream per buffer. 4 variables: one stream by default, model0 and model1
    with num_groups=2, model0..model2 with groups=[[v3, v0]]; the values are those of
    one buffer, bit for bit (size 1)."""
    res = ok(tf_child["fusion"])
    assert res["default"]["streams"] == ["model0"], res["default"]
    assert res["num_groups"]["streams"] == ["model0", "model1"], res["num_groups"]
    assert res["groups"]["streams"] == ["model0", "model1", "model2"], res["groups"]
    for variant in ("num_groups", "groups"):
        assert res[variant]["values"] == res["default"]["values"], (variant, res)
    # The steps moved the model: 3 steps of 0.1 * (i + 1) from 1..n.
    assert res["default"]["values"][3] == pytest.approx([1.0 - 1.2], abs=1e-6), res


@pytest.mark.tf
def test_keras_fuses_one_buffer_per_dtype(tf_child):
    """semantics.md, the optimizers (PyTorch and Keras): step() averages the
    parameters fused into one buffer per dtype, step k round k of each buffer's
    stream. A Keras model with a float64 variable between two float32 ones runs two
    streams, model0 (float32, the sorted dtypes' first) and model1 (float64), and ends
    with the plain SGD's values bit for bit (size 1), the float64 variable's 2**-40
    included (a float32 buffer would round it away)."""
    res = ok(tf_child["fusion"])
    assert res["mixed"]["streams"] == ["model0", "model1"], res["mixed"]
    assert res["mixed"]["values"] == res["mixed_local"], res
    # Not vacuous: the float64 values are not float32 ones.
    assert all(float(np.float32(v)) != v for v in res["mixed_local"][1]), res["mixed_local"]


@pytest.mark.tf
def test_keras_wagma_status_served_round_is_none(tf_child):
    """api.md: the Keras wagma_status() is PyTorch's, but served_round is None (the
    round stays in the graph): after 3 eager steps and after model.fit's 16 steps."""
    res = ok(tf_child["status"])
    assert res == {"served_round": None, "steps": 3}
    fitted = ok(tf_child["schedule"])["stair"]
    assert fitted["served_round"] is None and fitted["steps"] == 16


@pytest.mark.tf
def test_keras_learning_rate_schedule_is_horovods(tf_child):
    """api.md: LearningRateScheduleCallback(initial_lr, multiplier, start_epoch=0,
    end_epoch=None, staircase=True, momentum_correction=True, steps_per_epoch=None),
    Horovod's arguments and schedule: staircase, lr = initial_lr * multiplier **
    (epoch - start_epoch) from the first batch of epochs in [start_epoch, end_epoch),
    the optimizer's own lr before (0.3) and the last one after; staircase=False with a
    function, lr = initial_lr * f(epoch + batch / steps_per_epoch) at every batch; and
    Horovod's logs['lr'] at every epoch end."""
    res = ok(tf_child["schedule"])
    ours, horovods = res["signatures"]["LearningRateScheduleCallback"]
    assert ours == horovods, (ours, horovods)
    ours, horovods = res["signatures"]["LearningRateWarmupCallback"]
    assert ours == horovods, (ours, horovods)
    stair = res["stair"]
    assert stair["lr"] == pytest.approx([0.3] * 4 + [0.1] * 4 + [0.05] * 8, rel=1e-6)
    assert stair["history_lr"] == pytest.approx([0.3, 0.1, 0.05, 0.05], rel=1e-6)
    smooth = res["smooth"]
    assert smooth["lr"] == pytest.approx(
        [0.1 / (1 + e + b / 4) for e in range(2) for b in range(4)], rel=1e-6)


@pytest.mark.tf
def test_keras_momentum_correction_skipped_for_a_python_float_momentum(tf_child):
    """api.md: momentum correction is skipped where the optimizer's momentum is a Python
    float (tf_keras's SGD): with momentum_correction=True (the default) the schedule
    and warm-up callbacks run through fit and the momentum stays 0.9 in every batch,
    also where the lr changes. Where the momentum is a variable (the legacy SGD)
    Horovod's correction still runs: 0.9 * 0.1 / 0.3 during the batch the lr drops,
    0.9 again after it."""
    res = ok(tf_child["schedule"])
    for run, steps in (("stair", 16), ("smooth", 8), ("warmup", 4)):
        assert res[run]["momentum"] == [0.9] * steps, (run, res[run]["momentum"])
        assert res[run]["momentum_after"] == [0.9] * steps, run
    legacy = ok(tf_child["momentum_variable"])
    assert legacy["lr"] == pytest.approx([0.3] * 4 + [0.1] * 4, rel=1e-6)
    assert legacy["momentum"] == pytest.approx([0.9] * 4 + [0.3] + [0.9] * 3, rel=1e-6)
    assert legacy["momentum_after"] == pytest.approx([0.9] * 8, rel=1e-6)


@pytest.mark.tf
def test_balanced_sequence_drop_last_is_torchs(tf_child):
    """api.md: BalancedSequence's drop_last is torch DistributedSampler's: 11 samples
    over 2 ranks give 5 each, all distinct (one sample left out), with drop_last; 6 each
    covering all 11 (one repeated) without it."""
    res = ok(tf_child["sequence_drop_last"])
    dropped = res["True"]
    assert [len(d) for d in dropped] == [5, 5], dropped
    assert len(set(dropped[0] + dropped[1])) == 10, dropped
    padded = res["False"]
    assert [len(d) for d in padded] == [6, 6], padded
    assert set(padded[0] + padded[1]) == set(range(11)), padded


@pytest.mark.tf
def test_balanced_sequence_over_lists_of_arrays_or_unlabelled(tf_child):
    """api.md: BalancedSequence takes arrays or lists of arrays for x and y, or y=None:
    with lists every batch is a list of x's arrays and a list of y's, sliced by the
    same samples (the arrays' rows agree), a rank's batches are its share in order and
    the two shares deal every sample once; a tuple stays a tuple; unlabelled, a batch
    is x's rows alone."""
    res = ok(tf_child["sequence"])
    dealt = []
    for rank in res["ranks"]:
        assert rank["aligned"], rank
        assert rank["kinds"] == [["list", 2, "list", 2]], rank
        assert rank["ids"] == rank["indices"] and rank["len"] == math.ceil(5 / 3), rank
        dealt += rank["ids"]
    assert sorted(dealt) == list(range(10)), dealt
    assert res["tuple_kind"] == "tuple"
    assert res["unlabelled_kind"] == "ndarray"
    assert res["unlabelled"] == [[float(i)] * 3 for i in range(5, 9)]
    assert res["unlabelled_len"] == 2
