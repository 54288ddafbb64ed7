"""The PyTorch and Keras DistributedWagmaOptimizer twins on one deterministic scenario
(tests/test_twin_properties.py computes what both must give). The framework comes from
WAGMA_TEST_FRAMEWORK (frameworks.py); the command line names the scenarios
(common.run_scenarios):

  parity      every knob case of CASES: 7 steps (tau 3: global rounds 0, 2, 5) and a
              sync(), each rank's model and optimizer state after each, this
              optimizer's stream statistics;
  acceptance  which optimizer types and knob values each factory takes (resolved
              drift_correction alpha, or the error), built locally on every rank;
  sequence    BalancedSequence over a knob matrix, the ranks' allgather faked (rank 0
              only: it is local arithmetic; TensorFlow only);
  callbacks   model.fit with WagmaGlobalSyncCallback, MetricAverageCallback and
              WagmaStatsCallback, blocking rounds, each callback's input and output
              recorded (TensorFlow only).

Every gradient is handed in (x - a_i) * w, computed in numpy from the rank's current
model, so both frameworks get the same inputs; group rounds wait for every member and
global rounds are blocking, so every average is exact (no passive join)."""
import os
import sys

if os.environ.get("WAGMA_TEST_FRAMEWORK") == "tensorflow":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import horovod_wagma.keras  # noqa: F401  (Keras 2: before TensorFlow)

import numpy as np

import frameworks as fw
from common import run_scenarios
from world import world
from twin_cases import CASES, HYPER, STEPS, TAU, W, fake_gather, start, targets

hvd = fw.hvd
hvd.init()
comm = world()
rank, size = comm.Get_rank(), comm.Get_size()
TORCH = fw.NAME == "torch"
if not TORCH:
    import tensorflow as tf
    import horovod_wagma.keras as hvd_keras

KNOBS = dict(group_size=2, sync_period=TAU, wait_avoiding=False, global_rounds="blocking")
SHAPES = [(3,), (2,)]


def split(flat):
    return [flat[:3], flat[3:]]


def torch_case(kind, mode, alpha, fp16, graph):
    import torch
    dtype = torch.float32 if kind == "sgd" else torch.float64
    params = [torch.nn.Parameter(torch.tensor(v, dtype=dtype)) for v in split(start(rank))]
    h = HYPER[kind]
    if kind == "adam":
        base = torch.optim.Adam(params, lr=h["lr"], betas=(h["beta_1"], h["beta_2"]), eps=0.0)
    else:
        base = torch.optim.SGD(params, lr=h["lr"], momentum=h.get("momentum", 0.0))
    opt = hvd.DistributedWagmaOptimizer(
        base, named_parameters=[(f"p{i}", p) for i, p in enumerate(params)],
        compression=hvd.Compression.fp16 if fp16 else hvd.Compression.none,
        average_optimizer_state=mode, drift_correction=alpha, **KNOBS)

    def model():
        return np.concatenate([p.detach().double().numpy() for p in params]).tolist()

    def state():
        keys = ["exp_avg", "exp_avg_sq"] if kind == "adam" else ["momentum_buffer"]
        return {k: np.concatenate([opt.state[p][k].double().numpy() for p in params]).tolist()
                for k in keys if all(k in opt.state.get(p, {}) for p in params)}

    def step():
        g = (np.array(model()) - targets(rank)) * W
        for p, gp in zip(params, split(g)):
            p.grad = torch.tensor(gp, dtype=dtype)
        opt.step()
    return opt, model, state, step, opt.sync


def keras_case(kind, mode, alpha, fp16, graph):
    dtype = tf.float32 if kind == "sgd" else tf.float64
    variables = [tf.Variable(tf.constant(v, dtype)) for v in split(start(rank))]
    h = HYPER[kind]
    if kind == "adam":
        base = tf.keras.optimizers.Adam(h["lr"], beta_1=h["beta_1"], beta_2=h["beta_2"],
                                        epsilon=0.0)
    else:
        base = tf.keras.optimizers.SGD(h["lr"], momentum=h.get("momentum", 0.0))
    opt = hvd_keras.DistributedWagmaOptimizer(
        base, compression=hvd_keras.Compression.fp16 if fp16 else hvd_keras.Compression.none,
        average_optimizer_state=mode, drift_correction=alpha, **KNOBS)

    def model():
        return np.concatenate([v.numpy().astype(np.float64) for v in variables]).tolist()

    def slot(slots, v):
        return slots[opt._index_dict[opt._var_key(v)]].numpy().astype(np.float64)

    def state():
        if not opt.variables or len(opt.variables) <= 1:
            return {}
        if kind == "adam":
            return {"m": np.concatenate([slot(opt._momentums, v) for v in variables]).tolist(),
                    "v": np.concatenate([slot(opt._velocities, v) for v in variables]).tolist()}
        if kind == "sgdm":
            return {"velocity": np.concatenate([slot(opt.momentums, v)
                                                for v in variables]).tolist()}
        return {}

    def apply(g0, g1):
        opt.apply_gradients(zip([g0, g1], variables))
    run = tf.function(apply) if graph else apply

    def step():
        g = (np.array(model()) - targets(rank)) * W
        run(*[tf.constant(gp, dtype) for gp in split(g)])
    return opt, model, state, step, lambda: opt.sync(variables)


def parity():
    out = {}
    for name, (kind, mode, alpha, fp16, graph) in CASES.items():
        if not TORCH and mode == "always":
            continue
        if TORCH and graph:
            continue
        comm.Barrier()
        make = torch_case if TORCH else keras_case
        opt, model, state, step, sync = make(kind, mode, alpha, fp16, graph)
        models, states = [], []
        for _ in range(STEPS):
            comm.Barrier()
            step()
            models.append(model())
            states.append(state())
        comm.Barrier()
        sync()
        prefix = opt.wagma_status().name + "."
        stats = {k[len(prefix):]: v for k, v in hvd.stats().items() if k.startswith(prefix)}
        out[name] = dict(models=models, states=states, synced=model(), synced_state=state(),
                         stats=stats, steps=opt.wagma_status().steps)
    return out


def acceptance():
    """Per optimizer type and knobs: the resolved drift alpha and averaging rule, or
    the error's type and text. Nothing is stepped."""
    rows = {}
    if TORCH:
        import torch
        p = [torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))]
        makers = {"sgd": lambda: torch.optim.SGD(p, lr=0.1),
                  "sgdm": lambda: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                  "adam": lambda: torch.optim.Adam(p), "adamw": lambda: torch.optim.AdamW(p),
                  "nadam": lambda: torch.optim.NAdam(p), "adagrad": lambda: torch.optim.Adagrad(p),
                  "rmsprop": lambda: torch.optim.RMSprop(p)}

        def build(make, **kw):
            return hvd.DistributedWagmaOptimizer(make(), named_parameters=[("p", p[0])], **kw)

        def alpha_of(opt):
            return opt._drift._alpha if opt._drift else 0.0
    else:
        makers = {"sgd": lambda: tf.keras.optimizers.SGD(0.1),
                  "sgdm": lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
                  "adam": lambda: tf.keras.optimizers.Adam(),
                  "adamw": lambda: tf.keras.optimizers.AdamW(),
                  "nadam": lambda: tf.keras.optimizers.Nadam(),
                  "adagrad": lambda: tf.keras.optimizers.Adagrad(),
                  "rmsprop": lambda: tf.keras.optimizers.RMSprop()}

        def build(make, **kw):
            return hvd_keras.DistributedWagmaOptimizer(make(), **kw)

        def alpha_of(opt):
            state = opt._wagma["state"]
            return state.drift._alpha if state and state.drift else 0.0
    variants = {"default": {}, "on_sync.0.5": dict(drift_correction=0.5),
                "on_sync.1": dict(drift_correction=1.0),
                "on_sync.0": dict(drift_correction=0.0),
                "never.0.5": dict(average_optimizer_state="never", drift_correction=0.5),
                "never": dict(average_optimizer_state="never"),
                "quasi_global": dict(average_optimizer_state="quasi_global"),
                "always": dict(average_optimizer_state="always"),
                "local": dict(averaging="local")}
    for kind, make in makers.items():
        for label, kw in variants.items():
            try:
                opt = build(make, **kw)
                rows[f"{kind}.{label}"] = {"alpha": alpha_of(opt),
                                           "averaging": opt.wagma_status().averaging}
            except ValueError as e:
                rows[f"{kind}.{label}"] = {"error": str(e)}
    return rows


def sequence():
    """BalancedSequence's cuts over a knob matrix (rank 0 builds every rank's sequence;
    the allgather returns the given throughputs). Per case and epoch: every rank's
    shares, indices, len() and the batches it serves; the clock's throughput from a
    fake time."""
    if TORCH or rank != 0:
        return {}
    from horovod_wagma.keras import BalancedSequence

    out = {"cases": []}
    for case in sequence_cases():
        n, p = case["n"], case["p"]
        x = np.arange(n, dtype=np.float64)[:, None] * np.ones((1, 2))
        seqs = [BalancedSequence(x, np.arange(n), case["batch"], shuffle=case["shuffle"],
                                 seed=case["seed"], drop_last=case["drop_last"],
                                 num_replicas=p, rank=r, min_share=case["min_share"],
                                 dead_band=case["dead_band"]) for r in range(p)]
        epochs = []
        for e, speeds in enumerate(case["speeds"] + [None]):
            record = {"shares": [list(map(int, s.shares)) for s in seqs],
                      "epoch": [s.epoch for s in seqs],
                      "len": [len(s) for s in seqs],
                      "batches": [[s[i][1].tolist() for i in range(len(s))] for s in seqs],
                      "x_matches_y": all(bool((s[i][0][:, 0] == s[i][1]).all())
                                         for s in seqs for i in range(len(s)))}
            epochs.append(record)
            if speeds is None:
                break
            for s in seqs:
                s._clock.reset()  # the batches served above are not a measurement here
                s._exchange._samples = 0
                fake_gather(s, speeds, case.get("synchronous", 0.0))
                s.on_epoch_end()
            epochs[-1]["equal_steps_needed"] = [s.equal_steps_needed for s in seqs]
        out["cases"].append(dict(case, epochs=epochs))
    out["clock"] = sequence_clock(BalancedSequence, fake_gather)
    return out


def sequence_cases():
    """The knob matrix (also read by the test: tests/test_twin_properties.py imports
    nothing from here, so the cases travel in the payload)."""
    cases = []
    for p, n in ((2, 23), (3, 31), (3, 30)):
        for shuffle, drop_last in ((True, False), (False, True), (True, True)):
            cases.append(dict(p=p, n=n, batch=4, shuffle=shuffle, drop_last=drop_last,
                              seed=3 + p, min_share=0.25, dead_band=0.1,
                              speeds=[[1.0] * p, [1.0] + [3.0] * (p - 1)]))
    cases += [
        dict(p=3, n=40, batch=5, shuffle=True, drop_last=False, seed=0, min_share=0.5,
             dead_band=0.0, speeds=[[1e-6, 1.0, 1.0], [1.0, 1.05, 0.97]]),
        dict(p=3, n=40, batch=5, shuffle=True, drop_last=False, seed=0, min_share=0.0,
             dead_band=0.2, speeds=[[0.0, 2.0, 4.0], [1.0, 1.05, 0.97]]),
        dict(p=2, n=17, batch=3, shuffle=True, drop_last=False, seed=9, min_share=0.25,
             dead_band=0.1, speeds=[[1.0, 4.0], [4.0, 1.0]], synchronous=[0.0, 1.0]),
    ]
    return cases


def sequence_clock(BalancedSequence, fake_gather):
    """The sequence's step clock under a fake time: 9 batches of 4 a epoch, 10 ms apart
    in epoch 0 except one 2 s gap (an evaluation), 40 ms apart in epoch 1 after a 5 s
    pause at the epoch boundary. The throughput each on_epoch_end sends is its row's
    second column (the fake allgather echoes it)."""
    seq = BalancedSequence(np.zeros((72, 2)), None, 4, num_replicas=2, rank=0)
    now = [0.0]
    seq._clock._now = lambda: now[0]
    sent = []

    def echo(row):
        sent.append(float(row[0][1]))
        return np.concatenate([row, row])
    seq._exchange._allgather = echo
    for gaps in ([0.01] * 4 + [2.0] + [0.01] * 4, [5.0] + [0.04] * 8):
        for i, gap in enumerate(gaps):
            now[0] += gap
            seq[i % len(seq)]
        seq.on_epoch_end()
    return {"sent": sent, "equal_steps_needed": seq.equal_steps_needed}


def callbacks():
    """model.fit, 3 epochs of 3 steps (96 samples, batches of 32), SGD with momentum,
    on_sync, blocking rounds, tau 3 (global steps 0, 2, 5, 8): each callback's input
    (a recorder before it) and output (one after it)."""
    if TORCH:
        return {}
    from horovod_wagma.common.op import engine_lib
    tf.random.set_seed(rank)
    model = tf.keras.Sequential([tf.keras.layers.Input((4,)),
                                 tf.keras.layers.Dense(6, activation="relu"),
                                 tf.keras.layers.BatchNormalization(),
                                 tf.keras.layers.Dense(2)])
    opt = hvd_keras.DistributedWagmaOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.5),
                                              **KNOBS)
    model.compile(optimizer=opt, metrics=["accuracy"],
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(rank)
    x = rng.standard_normal((96, 4)).astype("float32")
    y = (x[:, 0] + rank * x[:, 1] > 0).astype("int64")

    class Record(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.variables, self.logs, self.rounds = [], [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.begin = engine_lib.stats()["rounds_completed"]

        def on_epoch_end(self, epoch, logs=None):
            self.variables.append([v.numpy().astype(np.float64).ravel().tolist()
                                   for v in self.model.variables])
            self.logs.append({k: float(v) for k, v in (logs or {}).items()})
            self.rounds.append(engine_lib.stats()["rounds_completed"] - self.begin)

    before_sync, after_sync, after_average, after_stats = Record(), Record(), Record(), Record()
    model.fit(x, y, batch_size=32, epochs=3, verbose=0, shuffle=False, callbacks=[
        before_sync, hvd_keras.callbacks.WagmaGlobalSyncCallback(), after_sync,
        hvd_keras.callbacks.MetricAverageCallback(), after_average,
        hvd_keras.callbacks.WagmaStatsCallback(), after_stats])
    return dict(before_sync=before_sync.variables, after_sync=after_sync.variables,
                own_logs=after_sync.logs, averaged_logs=after_average.logs,
                stats_logs=after_stats.logs, rounds_before_sync=before_sync.rounds,
                rounds_after_stats=after_stats.rounds,
                steps=opt.wagma_status().steps,
                staleness_max=engine_lib.stats()["staleness_max"])


run_scenarios({name: globals()[name] for name in sys.argv[1:]}, sys.argv[1:])
