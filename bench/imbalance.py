#!/usr/bin/env python
"""Training throughput under load imbalance: WAGMA vs Horovod vs local SGD.

P ranks train a small MLP while a sleep stands in for accelerator compute
(bench/harness.py's patterns); every method runs in the same launch. The protocol
(windows, ideals, targets, diagnostics): docs/benchmarks.md, "Throughput under
imbalance".

    python bench/imbalance.py [--framework torch|keras] [--np 8]
        [--pattern random|persistent] [--slow-ranks K|half] [--slow-factor F]
        [--methods horovod localsgd wagma:rounds=blocking wagma:rounds=wa] [--trials 2]

Rank 0 prints the table and writes bench/results/[keras_]imbalance_<pattern>_P{P}.json
and .png.
"""
import math
import os
import time

from adapters import keras_mlp
import harness
import methods as registry
import plot
from table import print_table

BATCH = harness.BATCH
IN_FEATURES, HIDDEN, CLASSES = 128, 512, 10   # 71,178 parameters
NPARAMS = (IN_FEATURES + 1) * HIDDEN + (HIDDEN + 1) * CLASSES
PERSISTENT_TARGET = 1.6   # wait-avoiding wagma / horovod, one rank 2x slower
RANDOM_TARGET = 0.8       # wait-avoiding wagma / no_wait
BLOCKING_TARGET = 0.9     # blocking wagma / ideal (random)
IDEAL_LABELS = {"no_wait": "no-wait ideal", "ideal": "ideal (global rounds)",
                "ideal_measured": "ideal(meas)", "no_wait_measured": "no_wait(meas)"}
COLORS = {"horovod": "tab:gray", "localsgd": "tab:orange"}


# -- command line ---------------------------------------------------------------------
def parse_args(argv=None):
    p = harness.parser(__doc__, np=8)
    harness.add_framework(p)
    harness.add_methods(p)
    p.add_argument("--steps", type=int, default=200,
                   help="timed steps of lockstep methods, rounded up to a multiple of "
                        "--sync-period (default 200)")
    p.add_argument("--sync-period", type=int, default=10,
                   help="tau, every WAGMA and local-SGD method's (default 10)")
    p.add_argument("--group-size", type=int, default=None,
                   help="WAGMA group size S (default: the library's)")
    harness.add_pattern_args(p)
    p.add_argument("--window", type=float, default=None,
                   help="seconds of the wait-avoiding methods' window (default: the "
                        "first blocking wagma method's wall time in the same trial)")
    p.add_argument("--user-loop", action="store_true",
                   help="measure wait-avoiding WAGMA in a user's loop (Horovod barrier, "
                        "N steps, allreduce of the rate) instead of a wall-time window")
    p.add_argument("--trials", type=int, default=None,
                   help="timed runs per method, interleaved (default torch 2, keras 1)")
    harness.add_outputs(p)
    args = p.parse_args(argv)
    torch = args.framework == "torch"
    args.methods = harness.check_methods(
        p, args.methods or (["horovod"] + (["localsgd"] if torch else [])
                            + ["wagma:rounds=blocking", "wagma:rounds=wa"]),
        ("horovod", "localsgd", "wagma") if torch else ("horovod", "wagma"),
        ("outer",))
    # Lockstep methods first: a wall-time window lasts a blocking run's wall time.
    args.methods.sort(key=lambda m: not registry.blocking(m))
    args.trials = args.trials or (2 if torch else 1)
    if wall_methods(args) and args.window is None and not blocking_wagma(args):
        p.error("a wait-avoiding method's window is a blocking wagma method's wall time: "
                "add e.g. wagma:rounds=blocking to --methods or give --window")
    if args.user_loop and not torch:
        p.error("--user-loop: PyTorch only (Keras' loop is model.fit)")
    if args.sync_period < 2 or args.steps < 1 or args.trials < 1:
        p.error("need --sync-period >= 2, --steps >= 1, --trials >= 1")
    if args.window is not None and args.window <= 0:
        p.error("need --window > 0")
    harness.check_pattern_args(p, args)
    args.steps = -(-args.steps // args.sync_period) * args.sync_period
    return args


def wall_methods(args):
    return [] if args.user_loop else [m for m in args.methods if not registry.blocking(m)]


def blocking_wagma(args):
    return [m for m in args.methods if registry.family(m) == "wagma" and registry.blocking(m)]


def first(specs):
    return specs[0] if specs else None


# -- the timed window -----------------------------------------------------------------
def thread_cpu():
    """CPU seconds of this process's threads by role: "main" (the training loop),
    "engine" (the WAGMA progress thread, named wagma-engine) and "other"."""
    import threading
    main_tid = threading.main_thread().native_id
    out = {"main": 0.0, "engine": 0.0, "other": 0.0}
    for tid, name, seconds in harness.thread_cpu_seconds():
        out["main" if tid == main_tid else
            "engine" if name == "wagma-engine" else "other"] += seconds
    return out


def engine_counters():
    from horovod_wagma.common.op import engine_lib
    return engine_lib.stats() if engine_lib.started() else {}


def window_diff(before, after):
    """Counters over a window: differences, except maxima and means (as of the end:
    they cannot be windowed). Non-numeric values are dropped."""
    return {k: v if k.endswith(("_max", "_mean")) else v - before.get(k, 0)
            for k, v in after.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def active_stream_stats(before, after):
    """This rank's summary of the streams that ran rounds in the window: counters
    summed, ``*_max`` the max, ``*_mean`` the mean over those streams."""
    active = [window_diff(before.get(n, {}), s) for n, s in after.items()
              if s.get("rounds", 0) > before.get(n, {}).get("rounds", 0)]
    out = {"streams": len(active)}
    for k in sorted({k for s in active for k in s}):
        vals = [s[k] for s in active if k in s]
        out[k] = (max(vals) if k.endswith("_max") else
                  sum(vals) / len(vals) if k.endswith("_mean") else sum(vals))
    return out


class Window:
    """One rank's timed window for one method: ``steps`` mode (a fixed number of steps
    between two barriers, or Horovod's barrier and allreduce in a user's loop) or
    ``wall`` mode (steps until a deadline W seconds after the opening barrier)."""

    def __init__(self, comm, sched, tau, wall_s=None, wagma=False, stream_stats=None,
                 horovod=None):
        self.comm, self.sched, self.tau, self.wall_s = comm, sched, tau, wall_s
        self.lockstep = wall_s is None
        self.horovod = horovod   # (barrier, allreduce of a float): a user's loop
        self.rank = comm.Get_rank()
        self.wagma, self.stream_stats = wagma, stream_stats
        self.times = []       # phase seconds of each counted step
        self.t_end = None
        self.own_rate = None  # steps/s over this rank's own steps (a user's loop only)

    def nominal(self, t):
        """Nominal compute seconds of this rank's step t of the window."""
        return float(self.sched[t % len(self.sched), self.rank])

    def open(self):
        self._engine0 = engine_counters() if self.wagma else {}
        self._streams0 = self.stream_stats() if self.wagma else {}
        (self.horovod[0] if self.horovod else self.comm.Barrier)()
        self._threads0, self._cpu0 = thread_cpu(), time.process_time()
        self.t0 = time.perf_counter()
        self.deadline = None if self.lockstep else self.t0 + self.wall_s

    def record(self, *phases):
        """Records a finished step's phase seconds; returns False when the window is
        over for this rank (steps mode: after the closing barrier)."""
        if self.lockstep:
            self.times.append(phases)
            if len(self.times) < len(self.sched):
                return True
            if self.horovod:
                # The rate a user's loop computes and allreduces: its own steps over its
                # own time, before the collective's wait for the others.
                self.own_rate = len(self.times) / (time.perf_counter() - self.t0)
                self.horovod[1](self.own_rate)
            else:
                self.comm.Barrier()
        elif time.perf_counter() <= self.deadline:
            self.times.append(phases)
            return True
        self._stop()
        return False

    def _stop(self):
        self.t_end = time.perf_counter()
        self.cpu = time.process_time() - self._cpu0   # all threads of this process
        threads1 = thread_cpu()
        self.threads = {k: threads1[k] - self._threads0[k] for k in threads1}
        self.engine = window_diff(self._engine0, engine_counters()) if self.wagma else {}
        self.streams = (active_stream_stats(self._streams0, self.stream_stats())
                        if self.wagma else {})

    def finish(self, join=None):
        """Ends this rank's part: ``join`` (wall mode: the optimizer's, outside the
        window) lets every rank stop without waiting for the others' rounds."""
        if self.t_end is None:   # the planned steps ran out before the window ended
            self._stop()
        if join is not None:
            join()
        self.comm.Barrier()

    def collect(self, extra, phases):
        """Gathers every rank's measurements; on rank 0 returns the method's record."""
        import numpy as np
        g = self.comm.gather(dict(times=np.array(self.times, dtype=float).reshape(
                                      -1, len(phases)),
                                  t0=self.t0, t_end=self.t_end, cpu=self.cpu,
                                  own_rate=self.own_rate, threads=self.threads,
                                  engine=self.engine, streams=self.streams, extra=extra),
                             root=0)
        if self.rank != 0:
            return None
        P, tau = len(g), self.tau
        steps = [len(x["times"]) for x in g]
        total = sum(steps)
        wall = g[0]["t_end"] - g[0]["t0"] if self.lockstep else self.wall_s
        work = [x["times"][:, :-1].sum(axis=1) for x in g]      # all but the opt step
        last = [x["times"][:, -1] for x in g]
        allsteps = np.concatenate([x["times"] for x in g])
        total_cpu = sum(x["cpu"] for x in g)
        rec = {"window": "steps" if self.lockstep else "wall", "wall_s": wall,
               "steps_per_rank": steps, "samples_per_s": total * BATCH / wall,
               "steps_per_s": total / P / wall,
               "rank_window_s": [x["t_end"] - x["t0"] for x in g],
               "mean_ms": {ph: 1e3 * float(allsteps[:, i].mean())
                           for i, ph in enumerate(phases)},
               "mean_nominal_ms": 1e3 * float(np.mean(np.concatenate(
                   [self.sched[np.arange(n) % len(self.sched), r]
                    for r, n in enumerate(steps)]))),
               "per_rank_last_phase_ms": [1e3 * float(v.mean()) for v in last],
               "no_wait_measured": harness.no_wait_rate(
                   [float(w.mean()) if len(w) else math.inf for w in work]),
               "cpu_ms_per_rank_step": 1e3 * total_cpu / total,
               "thread_cpu_ms_per_rank_step": {
                   k: 1e3 * sum(x["threads"][k] for x in g) / total for k in g[0]["threads"]},
               "host_cpu_share": total_cpu / wall / (os.cpu_count() or 1),
               "extra": [x["extra"] for x in g]}
        if self.horovod:
            # Horovod's synthetic benchmark reports this sum: each rank's own rate.
            rec["own_rates_samples_per_s"] = sum(x["own_rate"] for x in g) * BATCH
        if self.lockstep:
            work, last = np.stack(work, axis=1), np.stack(last, axis=1)   # (steps, P)
            sync_rows = np.arange(tau - 1, len(last), tau)
            rec["ideal_measured"] = len(work) * P * BATCH / harness.ideal_time(work, tau)
            rec["last_phase_between_syncs_ms"] = 1e3 * float(
                np.delete(last, sync_rows, axis=0).mean())
            rec["last_phase_at_syncs_ms"] = 1e3 * float(last[sync_rows].mean())
        if self.wagma:
            rec["engine_stats_sum"] = {   # summed over ranks (maxima: max over ranks)
                k: (max if k.endswith("_max") else sum)(x["engine"].get(k, 0) for x in g)
                for k in g[0]["engine"]}
            rec["stream_stats_per_rank"] = [x["streams"] for x in g]
        return rec


# -- the frameworks -------------------------------------------------------------------
class Torch:
    """A Python training loop; phases sleep, fwd+bwd, opt.step."""
    name, title, phases = "imbalance", "PyTorch", ("sleep", "fwd+bwd", "opt.step")

    def setup(self, args, comm):
        self.hvd, self.rank = harness.start_torch(), comm.Get_rank()
        self.stream_stats = self.hvd.stats
        if "localsgd" in map(registry.family, args.methods):
            harness.init_gloo(comm)
        return f"MLP {NPARAMS} params ({NPARAMS * 4 / 1024:.0f} KB)"

    def horovod_collectives(self):
        import torch
        hvd = self.hvd
        return (hvd.barrier,
                lambda rate: hvd.allreduce(torch.tensor(rate), op=hvd.Sum, name="rate"))

    def run_method(self, spec, trial, args, warm_sched, window):
        import torch
        torch.manual_seed(1234)  # the same initial model for every method
        model = torch.nn.Sequential(torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.ReLU(),
                                    torch.nn.Linear(HIDDEN, CLASSES))
        self.hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        method = registry.build_torch(
            spec, model, torch.optim.SGD(model.parameters(), lr=0.01), self.hvd,
            self.hvd.size(), {"tau": args.sync_period},
            {"tau": args.sync_period, "S": args.group_size})
        g = torch.Generator().manual_seed(100 + self.rank)
        xs = torch.randn(8, BATCH, IN_FEATURES, generator=g)
        ys = torch.randint(0, CLASSES, (8, BATCH), generator=g)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step(k, seconds):
            t0 = time.perf_counter()
            time.sleep(seconds)  # stand-in for accelerator compute; the delay comes first
            t1 = time.perf_counter()
            method.zero_grad()
            loss_fn(model(xs[k % 8]), ys[k % 8]).backward()
            t2 = time.perf_counter()
            method.step()
            return t1 - t0, t2 - t1, time.perf_counter() - t2
        warm = args.sync_period + (registry.family(spec) == "localsgd")
        for t in range(warm):
            step(t, warm_sched[t, self.rank])
        window.open()
        t = 0
        while window.record(*step(warm + t, window.nominal(t))):
            t += 1
        window.finish(None if window.lockstep else method.opt.join)
        return {}

    def progress(self, rec):
        return ""

    notes = progress


class Keras:
    """``model.fit`` compiled to a graph; a callback sleeps the scheduled compute
    before every batch and drives the window; phases sleep, train (forward, backward,
    optimizer step, averaging, waiting and Keras' per-batch overhead). The timed fit
    must not retrace the train function (checked). tf.data autotuning is off: with it,
    deleting the iterator at the end of a fit blocked a random rank for seconds on an
    oversubscribed host."""
    name, title, phases = "keras_imbalance", "Keras model.fit", ("sleep", "train")

    def setup(self, args, comm):
        from mpi4py import MPI
        t_import = time.perf_counter()
        self.k = harness.start_keras()
        self.rank, self.stream_stats = comm.Get_rank(), self.k.hvd.stats
        import_s = comm.allreduce(time.perf_counter() - t_import, op=MPI.MAX)
        tf = self.k.tf
        return (f"MLP {NPARAMS} params ({NPARAMS * 4 / 1024:.0f} KB), graph mode; TF "
                f"{tf.__version__}, tf.keras = {tf.keras.__name__}, imports + init "
                f"{import_s:.0f} s")

    def build(self, spec, trial, args):
        tf = self.k.tf
        # Seed 1234: the same initial model for every method.
        model = keras_mlp(tf, f"m{args.methods.index(spec)}_t{trial}", 1234,
                          IN_FEATURES, [("hidden", HIDDEN), ("out", CLASSES)])
        opt, _, _ = registry.build_keras(
            spec, tf.keras.optimizers.SGD(learning_rate=0.01), self.k.hvd,
            self.k.hvd_keras, args.sync_period,
            {"tau": args.sync_period, "S": args.group_size})
        model.compile(optimizer=opt, run_eagerly=False,
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    def dataset(self):
        tf, np = self.k.tf, self.k.np
        rng = np.random.default_rng(100 + self.rank)
        x = rng.standard_normal((8 * BATCH, IN_FEATURES)).astype("float32")
        y = rng.integers(0, CLASSES, 8 * BATCH).astype("int64")
        options = tf.data.Options()
        options.autotune.enabled = False
        options.experimental_optimization.inject_prefetch = False
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat() \
            .with_options(options)

    def callback(self, nominal, window=None):
        class Sleeper(self.k.tf.keras.callbacks.Callback):
            def on_train_batch_begin(self, batch, logs=None):
                if window is not None and batch == 0:
                    window.open()
                t0 = time.perf_counter()
                time.sleep(nominal(batch))  # stand-in for compute; the delay first
                self.t1 = time.perf_counter()
                self.sleep = self.t1 - t0

            def on_train_batch_end(self, batch, logs=None):
                if logs and "loss" in logs:
                    self.loss = float(logs["loss"])   # also waits for the step to end
                if window is not None and not window.record(
                        self.sleep, time.perf_counter() - self.t1):
                    self.model.stop_training = True
        return Sleeper()

    def run_method(self, spec, trial, args, warm_sched, window):
        t_build = time.perf_counter()
        model, data = self.build(spec, trial, args), self.dataset()
        # Warm-up fit: traces the train function; WAGMA's rounds 0 and tau-1 (global).
        model.fit(data, epochs=1, steps_per_epoch=args.sync_period, verbose=0, callbacks=[
            self.k.hvd_keras.callbacks.BroadcastGlobalVariablesCallback(0),
            self.callback(lambda t: warm_sched[t, self.rank])])
        warmup_s = time.perf_counter() - t_build
        traces_warm = tracing_count(model)
        cb = self.callback(window.nominal, window)
        t_fit = time.perf_counter()
        model.fit(data, epochs=1, steps_per_epoch=len(window.sched), verbose=0,
                  callbacks=[cb])
        fit_wall = time.perf_counter() - t_fit
        window.finish(None if window.lockstep else model.optimizer.join)
        return dict(fit_wall_s=fit_wall, warmup_s=warmup_s, loss=getattr(cb, "loss", None),
                    traces=(traces_warm, tracing_count(model)))

    def progress(self, rec):
        return (f"; fit st/s {fit_rate(rec):.1f}, warm-up "
                f"{max(e['warmup_s'] for e in rec['extra']):.0f} s")

    def notes(self, rec):
        retraced = [r for r, e in enumerate(rec["extra"]) if e["traces"][1] != e["traces"][0]]
        return (f"fit st/s {fit_rate(rec):.1f}"
                + (f" RETRACED on ranks {retraced}" if retraced else ""))


def tracing_count(model):
    fn = getattr(model, "train_function", None)
    get = getattr(fn, "experimental_get_tracing_count", None)
    return int(get()) if get else -1


def fit_rate(rec):
    """Mean steps per rank over the timed fit's wall time (max over ranks)."""
    steps = sum(rec["steps_per_rank"]) / len(rec["steps_per_rank"])
    return steps / max(e["fit_wall_s"] for e in rec["extra"])


# -- the driver -----------------------------------------------------------------------
def run(args):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, P = comm.Get_rank(), comm.Get_size()
    bench = Torch() if args.framework == "torch" else Keras()
    model_line = bench.setup(args, comm)
    from horovod_wagma.common.op.schedule import default_group_size, groups
    S = args.group_size or default_group_size(P)
    tau = args.sync_period
    timed = harness.compute_schedule(args, P, args.steps, args.seed)
    warm = harness.compute_schedule(args, P, tau + 1, args.seed + 1)
    if rank == 0:
        print(f"{bench.title}: P={P}, S={S} (phases {groups(P, S)}), tau={tau}, "
              f"{harness.describe_pattern(args, P)}; {args.steps} timed steps (lockstep "
              f"methods), batch {BATCH}/rank; {model_line}; {args.trials} trial(s)",
              flush=True)
    trials = {m: [] for m in args.methods}
    t_start = time.perf_counter()
    for trial in range(args.trials):
        walls = {}
        for spec in args.methods:
            wall_s, sched = None, timed
            if spec in wall_methods(args):
                wall_s = args.window or walls[first(blocking_wagma(args))]
                # Enough rows that no rank runs out before the deadline.
                rows = max(len(timed), math.ceil(wall_s / timed.min()) + tau)
                sched = harness.compute_schedule(args, P, rows, args.seed)
            loop = args.user_loop and not registry.blocking(spec)
            window = Window(comm, sched, tau, wall_s, wagma=registry.family(spec) == "wagma",
                            stream_stats=bench.stream_stats,
                            horovod=bench.horovod_collectives() if loop else None)
            comm.Barrier()
            extra = bench.run_method(spec, trial, args, warm, window)
            rec = window.collect(extra, bench.phases)
            walls[spec] = comm.bcast(rec["wall_s"] if rank == 0 else None, root=0)
            if rank == 0:
                trials[spec].append(rec)
                print(f"  trial {trial}: {spec:>22}: {rec['samples_per_s']:7.0f} "
                      f"samples/s ({rec['window']} window {rec['wall_s']:.2f} s, "
                      f"steps/rank {steps_text(rec)}; "
                      + ", ".join(f"{ph} {v:.1f}" for ph, v in rec["mean_ms"].items())
                      + f" ms vs {rec['mean_nominal_ms']:.1f} nominal"
                      + bench.progress(rec) + ")", flush=True)
    if rank == 0:
        report(bench, args, P, S, trials, harness.ideals(timed, tau),
               time.perf_counter() - t_start)
    comm.Barrier()
    harness.stop_gloo()


# -- reporting ------------------------------------------------------------------------
def steps_text(rec):
    s = rec["steps_per_rank"]
    return f"{min(s)}" if min(s) == max(s) else f"{min(s)}-{max(s)}"


def method_notes(rec):
    s = rec.get("engine_stats_sum")
    if s is None:
        return ""
    notes = (f"passive_joins={s.get('passive_joins', 0)} "
             f"rounds={s.get('rounds_completed', 0)}")
    if "call_wait_us" in s:
        notes += f" call_wait={s['call_wait_us'] / 1e3 / sum(rec['steps_per_rank']):.1f}ms/step"
    if rec["window"] == "wall":
        per_rank = rec["stream_stats_per_rank"]
        skipped = [r.get("rounds_skipped") for r in per_rank]
        if any(v is not None for v in skipped):
            notes += f" rounds_skipped/rank={skipped}"
        ages = [r["contribution_age_mean"] for r in per_rank if "contribution_age_mean" in r]
        if ages:
            notes += (f" contribution age: mean {max(ages):.2f} (worst rank), max "
                      f"{max(r.get('contribution_age_max', 0) for r in per_rank)}")
    return notes


def targets(args, P, rate):
    """The issue's targets for this run's pattern: [{target, method, base, threshold,
    achieved (None when a method did not run), verdict}]."""
    wa = first([m for m in args.methods if not registry.blocking(m)]) or "wagma:rounds=wa"
    if args.pattern == "persistent":
        if harness.slow_ranks(args, P) != 1 or args.slow_factor != 2.0:
            return []
        # Measured in a wall-time window: a user's loop runs equal steps on every rank.
        wanted = [(first(wall_methods(args)) or "wagma:rounds=wa", "horovod",
                   PERSISTENT_TARGET, "(one rank 2x slower)")]
    else:
        wanted = [(wa, "no_wait", RANDOM_TARGET, "ideal" + (" (a user's loop)"
                                                             if args.user_loop else "")),
                  (first(blocking_wagma(args)) or "wagma:rounds=blocking", "ideal",
                   BLOCKING_TARGET, "(global rounds only)")]
    out = []
    for method, base, threshold, suffix in wanted:
        got = rate[method] / rate[base] if method in rate and rate.get(base) else None
        out.append({"target": f"{method} >= {threshold}x {base} {suffix}",
                    "method": method, "base": base, "threshold": threshold,
                    "achieved": got, "verdict": "not run" if got is None else
                    "met" if got >= threshold else "MISSED"})
    return out


def median_trial(recs):
    """The trial with the median samples/s (the lower middle one for an even count)."""
    return sorted(recs, key=lambda r: r["samples_per_s"])[(len(recs) - 1) // 2]


def print_spread(trials):
    """Each method's samples/s range over the trials, and the per-trial ratio of each
    WAGMA method to Horovod (trials interleave the methods, so a trial's ratio pairs
    runs made under the same host conditions)."""
    if max(len(recs) for recs in trials.values()) < 2:
        return
    print("  spread over trials (samples/s min-max): " + "; ".join(
        f"{m} {min(r['samples_per_s'] for r in recs):.0f}-"
        f"{max(r['samples_per_s'] for r in recs):.0f}" for m, recs in trials.items()))
    for m, recs in trials.items():
        if "own_rates_samples_per_s" in recs[0]:
            print(f"  {m}: sum of the ranks' own rates (each over its own steps, before "
                  "the final allreduce) per trial: "
                  + ", ".join(f"{r['own_rates_samples_per_s']:.0f}" for r in recs))
        if registry.family(m) == "wagma" and "horovod" in trials:
            print(f"  {m} / horovod per trial: " + ", ".join(
                f"{a['samples_per_s'] / b['samples_per_s']:.2f}"
                for a, b in zip(recs, trials["horovod"])))


def report(bench, args, P, S, trials, ideal, elapsed):
    # The median trial of each method: one lucky run must not decide a target.
    best = {m: median_trial(recs) for m, recs in trials.items()}
    rate = {m: r["samples_per_s"] for m, r in best.items()}
    rate.update(ideal)
    measured_from = {"ideal_measured": first(blocking_wagma(args)),
                     "no_wait_measured": first(wall_methods(args))}
    for key, m in measured_from.items():
        if key in best.get(m, {}):
            rate[key] = best[m][key]
    hv = rate.get("horovod")
    print(f"\n{bench.title} throughput, {harness.describe_pattern(args, P)}: P={P}, S={S}, "
          f"tau={args.sync_period}, batch {BATCH}/rank, median of {args.trials} (methods "
          f"{elapsed:.0f} s)")
    print(f"  ideals (nominal schedule, samples/s): no-wait {ideal['no_wait']:.0f}; wait "
          f"only at global rounds {ideal['ideal']:.0f}; the same steps on every rank, "
          f"one wait at the end {ideal['equal_steps']:.0f}; sync every step "
          f"{ideal['lockstep']:.0f}")
    print(f"  window: lockstep methods {args.steps} steps between barriers; wait-avoiding "
          + ("a user's loop" if args.user_loop else f"{args.window:g} s (--window)"
             if args.window else "the blocking wagma run's wall time in the same trial")
          + f"\n  phases ({', '.join(bench.phases)}): mean ms per step over ranks and "
          f"steps; '{bench.phases[-1]}' also between / at synchronising steps;\n  cpu "
          "ms: CPU per rank-step, all threads and main/engine/other; host cpu: all "
          "ranks' CPU / window / cores")
    rows = [("method", "samples/s", "x no-wait", "x Horovod", "steps/rank",
             *(f"{ph} ms" for ph in bench.phases), "between", "at sync", "cpu ms",
             "main/engine/other", "host cpu", "notes")]
    idle = ("-",) * (len(bench.phases) + 6)
    for m in list(best) + list(IDEAL_LABELS):
        if m not in rate:
            continue
        r = best.get(m)
        head = (IDEAL_LABELS.get(m, m), f"{rate[m]:.0f}", f"{rate[m] / rate['no_wait']:.2f}",
                f"{rate[m] / hv:.2f}" if hv else "-")
        if r is None:
            rows.append(head + idle + (f"from {measured_from[m]}'s measured work"
                                       if m in measured_from else "",))
            continue
        lockstep = r["window"] == "steps"
        rows.append(head + (
            steps_text(r), *(f"{v:.1f}" for v in r["mean_ms"].values()),
            f"{r['last_phase_between_syncs_ms']:.1f}" if lockstep else "-",
            f"{r['last_phase_at_syncs_ms']:.1f}" if lockstep else "-",
            f"{r['cpu_ms_per_rank_step']:.2f}",
            "/".join(f"{r['thread_cpu_ms_per_rank_step'][k]:.1f}"
                     for k in ("main", "engine", "other")),
            f"{100 * r['host_cpu_share']:.0f}%",
            (method_notes(r) + " " + bench.notes(r)).strip()))
    print_table(rows)
    print_spread(trials)
    ratios = {f"{m}_over_{d}": rate[m] / rate[d] for m in best
              for d in ("no_wait", "ideal", "horovod") if d in rate and d != m}
    cores = os.cpu_count() or 1
    for m in (m for m in best if registry.family(m) == "wagma"):
        bound = cores / (best[m]["cpu_ms_per_rank_step"] / 1e3) * BATCH
        print(f"  host CPU bound for {m}'s CPU use: {bound:.0f} samples/s ({cores} cores / "
              f"{best[m]['cpu_ms_per_rank_step']:.2f} ms CPU per rank-step x {BATCH}); "
              f"reached {rate[m] / bound:.2f}x of it")
    checked = targets(args, P, rate)
    for t in checked:
        print(f"  target {t['target']}: {t['verdict']}"
              + (f" ({t['achieved']:.2f}x)" if t["achieved"] is not None else ""))
    if not checked:
        print("  (no target from the issue for this configuration)")
    stem = f"{bench.name}_{args.pattern}_P{P}"
    json_path = harness.output_path(args.json, stem + ".json")
    plot_path = harness.output_path(args.plot, stem + ".png")
    harness.write_json(json_path, {
        "framework": bench.title, "ranks": P, "group_size": S, "sync_period": args.sync_period,
        "pattern": args.pattern, "step_time_s": args.step_time, "delay_s": args.delay,
        "num_delayed": args.num_delayed, "seed": args.seed,
        "slow_ranks": harness.slow_ranks(args, P), "slow_factor": args.slow_factor,
        "batch_per_rank": BATCH, "steps": args.steps, "window_s_arg": args.window,
        "user_loop": args.user_loop, "trials": args.trials,
        "horovod_cycle_time_ms": os.environ.get("HOROVOD_CYCLE_TIME"),
        "samples_per_s": rate, "ratios": ratios, "targets": checked, "runs": trials}, 2, "  ")
    shown = list(best) + ["no_wait"] + (["ideal"] if args.pattern == "random" else [])
    palette = iter(("tab:blue", "tab:green", "tab:cyan", "tab:olive", "tab:purple"))
    colour = {m: COLORS.get(m) or next(palette, "tab:brown") for m in best}
    plot.bars(plot_path, [
        (IDEAL_LABELS.get(m, m).replace(":", ":\n", 1).replace(" ", "\n", 1), rate[m],
         colour.get(m, "white"), {"no_wait": "//", "ideal": ".."}.get(m),
         f"{rate[m]:.0f}" + (f"\n{rate[m] / hv:.2f}x Hvd" if hv else "")) for m in shown],
        [(t["threshold"] * rate[t["base"]], style,
          f"target for {t['method']}: {t['threshold']}x {t['base']}")
         for t, style in zip(checked, ("--", ":")) if rate.get(t["base"])],
        "samples / s (sum over ranks)",
        f"{bench.title}, P={P}, S={S}, tau={args.sync_period}: "
        f"{harness.describe_pattern(args, P)}")
    print(f"  wrote {plot_path}")


if __name__ == "__main__":
    args = parse_args()
    harness.launch(__file__, args, run, harness.FRAMEWORK_ENV[args.framework])
