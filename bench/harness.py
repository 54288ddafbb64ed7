"""The harness every benchmark shares: how a benchmark launches itself under mpirun
(the Open MPI settings live here and nowhere else in bench/), its common options and
outputs, the imbalance patterns (``add_pattern_args``: a sleep before the forward pass
stands in for accelerator compute; the ``random`` pattern draws its delayed ranks from
an RNG seeded alike on every rank) with their ideals, and how a framework starts.
"""
import argparse
import json
import os
import sys

BATCH = 16   # samples per rank and step of the imbalance benchmarks
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
# Root may run mpirun here, and ranks outnumber cores: MPI must yield while it waits
# instead of busy-polling cores away from the ranks that compute.
MPIRUN_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
              "OMPI_MCA_mpi_yield_when_idle": "1"}
FRAMEWORK_ENV = {"torch": {}, "keras": {"TF_CPP_MIN_LOG_LEVEL": "3"}}


# -- launching ------------------------------------------------------------------------
def under_mpirun():
    return "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ


def launch_prefix(transport, num_ranks):
    """The launcher's command up to the program, on this host, for a benchmark that
    compares transports: mpirun (the engine on MPI) or horovodrun --gloo (on Gloo),
    neither binding ranks to cores (horovodrun does not)."""
    if transport == "gloo":
        return [os.path.join(os.path.dirname(sys.executable), "horovodrun"), "--gloo",
                "-np", str(num_ranks), "-H", f"localhost:{num_ranks}"]
    return ["mpirun", "-np", str(num_ranks), "--oversubscribe", "--bind-to", "none"]


def relaunch_under_mpirun(script, num_ranks, timeout, extra_env=None):
    """Unless already a rank of an MPI job, replaces this process by
    ``mpirun -np N --oversubscribe ... python script <same args>``."""
    if under_mpirun():
        return
    cmd = ["mpirun", "-np", str(num_ranks), "--oversubscribe", "--timeout", str(timeout),
           sys.executable, os.path.abspath(script)] + sys.argv[1:]
    print("+ " + " ".join(cmd), flush=True)
    os.execvpe(cmd[0], cmd, dict(os.environ, **MPIRUN_ENV, **(extra_env or {})))


def launch(script, args, run, env=None):
    """A benchmark's entry point after parsing: re-launches under mpirun (``--np``,
    ``--timeout``), then runs ``run(args)`` on every rank; one rank's exception aborts
    the job instead of leaving the others at a barrier until mpirun's timeout."""
    env = dict(env or {})
    if getattr(args, "horovod_cycle_ms", None) is not None:
        env["HOROVOD_CYCLE_TIME"] = f"{args.horovod_cycle_ms:g}"
    relaunch_under_mpirun(script, args.np, args.timeout, env)
    for k, v in env.items():
        os.environ.setdefault(k, v)
    try:
        run(args)
    except BaseException:
        import traceback
        from mpi4py import MPI
        traceback.print_exc()
        MPI.COMM_WORLD.Abort(1)


# -- the command line -----------------------------------------------------------------
def parser(doc, np=8, timeout=900):
    """An ArgumentParser with the options every benchmark has (``--np``, ``--timeout``);
    its description is the first paragraph of ``doc``."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--np", type=int, default=np,
                   help="ranks when the script launches mpirun itself (default %(default)s)")
    p.add_argument("--timeout", type=int, default=timeout,
                   help="seconds before the self-launched mpirun kills the job")
    return p


def add_outputs(p, plot=True):
    p.add_argument("--json", metavar="PATH", help="JSON output (default: in bench/results/)")
    if plot:
        p.add_argument("--plot", metavar="PATH", help="PNG output (default: in bench/results/)")


def output_path(given, stem):
    """``given`` or bench/results/<stem>; its directory exists afterwards."""
    path = given or os.path.join(RESULTS_DIR, stem)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return path


def jsonable(obj):
    """``obj`` with infinities and NaNs as strings (JSON has neither)."""
    import math
    if isinstance(obj, float) and (math.isinf(obj) or math.isnan(obj)):
        return str(obj)
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def write_json(path, obj, indent, prefix=""):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent)
    print(f"{prefix}wrote {path}")


def add_seeds(p, default=3):
    """--seeds N and --first-seed K: the run seeds K..K+N-1."""
    p.add_argument("--seeds", type=int, default=default,
                   help=f"seeds 0..N-1 (default {default})")
    p.add_argument("--first-seed", type=int, default=0)


def add_framework(p):
    p.add_argument("--framework", choices=("torch", "keras"), default="torch",
                   help="PyTorch or Keras (default torch)")


def add_methods(p):
    p.add_argument("--methods", nargs="+", metavar="SPEC",
                   help="method specs NAME[:key=value,...] (bench/methods.py), e.g. "
                        "horovod localsgd wagma wagma:rounds=blocking")


def check_methods(p, specs, supported, unsupported_keys=()):
    """Every spec parses and is one this benchmark runs; duplicates dropped."""
    import methods
    for spec in specs:
        try:
            methods.check(spec, supported, unsupported_keys)
        except ValueError as e:
            p.error(str(e))
    return list(dict.fromkeys(specs))


def choices(p, flag, text, allowed):
    """A comma-separated subset of ``allowed`` (e.g. --tasks mlp,cnn)."""
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in chosen if c not in allowed]
    if bad or not chosen:
        p.error(f"{flag}: choose from {','.join(allowed)}, got {text!r}")
    return chosen


# -- patterns and ideals --------------------------------------------------------------
def add_pattern_args(p, one_pattern=True):
    """The imbalance pattern's options. ``one_pattern=False``: the benchmark picks the
    patterns and seeds itself (no ``--pattern``, ``--seed``)."""
    if one_pattern:
        p.add_argument("--pattern", choices=("random", "persistent"), default="random",
                       help="random: --num-delayed ranks drawn per step sleep --delay "
                            "more; persistent: ranks 0..K-1 always take --slow-factor x "
                            "--step-time (default random)")
        p.add_argument("--seed", type=int, default=0, help="random: seed of the schedule")
    p.add_argument("--step-time", type=float, default=0.010,
                   help="seconds of simulated compute per step (default 0.010)")
    p.add_argument("--delay", type=float, default=0.040,
                   help="random: extra seconds slept by each delayed rank (default 0.040)")
    p.add_argument("--num-delayed", type=int, default=2,
                   help="random: ranks delayed at every step (default 2)")
    p.add_argument("--slow-ranks", default="1",
                   help="persistent: number K of slow ranks (ranks 0..K-1), or 'half' "
                        "for P/2 (default 1)")
    p.add_argument("--slow-factor", type=float, default=2.0,
                   help="persistent: slow ranks' step time over --step-time (default 2)")


HOROVOD_CYCLE_MS = 1.0   # Horovod's default HOROVOD_CYCLE_TIME (>= 0.21)


def add_time_scale(p):
    """--time-scale X: every sleep that stands in for compute (step times, delays),
    every time span of the run (budgets, snapshot intervals) and Horovod's cycle
    (HOROVOD_CYCLE_TIME, 1 ms x X unless the environment sets it) multiplied by X.
    Real clusters are the large-X case: an accelerator's step dwarfs the host's
    per-step work, where on this host 8 ranks at 10 ms keep both cores busy. The cycle
    scales too because Horovod's background loop alone, at 1 ms on 8 ranks that only
    sleep, keeps this host's 2 cores busy (docs/benchmarks.md, "Regimes")."""
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="multiplies every simulated compute time and time span "
                        "(default 1; 4: below ~60%% host CPU busy at P=8 here)")


def scale_times(p, args, *names):
    """Multiplies ``args``' named times (None stays None) by --time-scale, in place."""
    if args.time_scale <= 0:
        p.error(f"--time-scale must be > 0, got {args.time_scale:g}")
    given = os.environ.get("HOROVOD_CYCLE_TIME")
    args.horovod_cycle_ms = float(given) if given else HOROVOD_CYCLE_MS * args.time_scale
    for name in names:
        value = getattr(args, name)
        if value is not None:
            setattr(args, name, value * args.time_scale)


def check_pattern_args(p, args):
    if args.step_time <= 0 or args.delay < 0 or args.num_delayed < 0:
        p.error("need --step-time > 0, --delay >= 0, --num-delayed >= 0")
    if args.slow_factor <= 0:
        p.error("need --slow-factor > 0")
    if args.slow_ranks != "half" and not args.slow_ranks.isdigit():
        p.error("--slow-ranks takes a number or 'half'")


def with_pattern(args, pattern):
    """``args`` for one pattern of a benchmark that runs several."""
    return argparse.Namespace(**dict(vars(args), pattern=pattern))


def slow_ranks(args, P):
    """K, the number of persistently slow ranks (ranks 0..K-1)."""
    return P // 2 if args.slow_ranks == "half" else min(int(args.slow_ranks), P)


def compute_schedule(args, P, steps, seed):
    """(steps, P) array of nominal compute seconds per step and rank. Rows do not
    depend on ``steps``: a longer table extends a shorter one."""
    import numpy as np
    if args.pattern == "persistent":
        per_rank = np.full(P, args.step_time)
        per_rank[:slow_ranks(args, P)] *= args.slow_factor
        return np.tile(per_rank, (steps, 1))
    rng = np.random.default_rng(seed)
    sched = np.full((steps, P), args.step_time)
    k = min(args.num_delayed, P)
    for t in range(steps):
        sched[t, rng.choice(P, size=k, replace=False)] += args.delay
    return sched


def ideal_time(sched, tau):
    """Seconds for the schedule when ranks wait only at global rounds, every tau steps
    (zero communication cost): the sum over blocks of tau steps of the slowest rank's
    compute in that block."""
    steps = sched.shape[0]
    return float(sum(sched[b:b + tau].sum(axis=0).max() for b in range(0, steps, tau)))


def no_wait_rate(per_rank_mean_s):
    """samples/s with every rank at its own pace and no waiting: sum_r B / mean_r."""
    return float(sum(BATCH / s for s in per_rank_mean_s))


def ideals(sched, tau):
    """The ideals of a (steps, P) schedule in samples/s, with zero communication cost:
    no_wait (every rank at its own pace), ideal (waits at global rounds only),
    equal_steps (the same N steps on every rank, one wait at the end: the rank with the
    most compute sets the time) and lockstep (a wait at every step)."""
    steps, P = sched.shape
    samples = steps * P * BATCH
    return {"no_wait": no_wait_rate(sched.mean(axis=0)),
            "ideal": samples / ideal_time(sched, tau),
            "equal_steps": samples / float(sched.sum(axis=0).max()),
            "lockstep": samples / float(sched.max(axis=1).sum())}


def describe_pattern(args, P):
    ms = 1e3 * args.step_time
    if args.pattern == "persistent":
        k = slow_ranks(args, P)
        who = "no rank takes" if k == 0 else "rank 0 takes" if k == 1 else \
            f"ranks 0..{k - 1} take"
        return f"persistent: {who} {args.slow_factor:g}x the {ms:g} ms step"
    seed = f" (seed {args.seed})" if hasattr(args, "seed") else ""
    return (f"random: {ms:g} ms step + {1e3 * args.delay:g} ms on {args.num_delayed} "
            f"ranks/step{seed}")


def thread_cpu_seconds():
    """[(tid, name, CPU seconds)] of this process's threads, from /proc (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:   # the thread ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()   # utime, stime: fields 14, 15
        out.append((int(tid), name, (int(fields[11]) + int(fields[12])) / tick))
    return out


# -- starting a framework -------------------------------------------------------------
def method_order(methods, seed):
    """The methods in the order one seed runs them: reversed on odd seeds, so that no
    method always runs first (or last) on a host whose speed drifts."""
    methods = list(methods)
    return methods if seed % 2 == 0 else methods[::-1]


def torch_job():
    """(comm, rank, size, hvd) of a PyTorch benchmark's rank: horovod_wagma.torch
    started, and torch.distributed over gloo for the model averagers."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    hvd = start_torch()
    init_gloo(comm)
    return comm, comm.Get_rank(), comm.Get_size(), hvd


def start_torch():
    """horovod_wagma.torch, initialised; one intra-op thread (ranks share cores)."""
    from mpi4py import MPI  # noqa: F401  (MPI_THREAD_MULTIPLE, before Horovod)
    import torch
    torch.set_num_threads(1)
    import horovod_wagma.torch as hvd
    hvd.init()
    return hvd


def start_keras():
    """A namespace of horovod_wagma.keras (initialised), horovod.tensorflow(.keras),
    tensorflow and numpy; one intra-op thread, TF's logger quiet."""
    from mpi4py import MPI  # noqa: F401  (MPI_THREAD_MULTIPLE, before Horovod)
    import horovod_wagma.keras as hvd          # before TF: sets TF_USE_LEGACY_KERAS=1
    import horovod.tensorflow as hvd_tf
    import horovod.tensorflow.keras as hvd_keras
    import numpy as np
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")   # no "callback is slow" warnings: they sleep
    tf.config.threading.set_intra_op_parallelism_threads(1)
    hvd.init()
    return argparse.Namespace(hvd=hvd, hvd_tf=hvd_tf, hvd_keras=hvd_keras, np=np, tf=tf)


def stop_gloo():
    """Ends init_gloo's process group, if this process started one."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_initialized():
        dist.destroy_process_group()


def init_gloo(comm):
    """torch.distributed with gloo over the MPI job's ranks, at a free port chosen by
    rank 0 (for PyTorch's model averagers). Rank 0's address is 127.0.0.1 unless
    WAGMA_BENCH_MASTER_ADDR names another (ranks on several hosts: rank 0's address on
    the network the job uses, with GLOO_SOCKET_IFNAME set to its interface)."""
    import socket
    import torch.distributed as dist
    if dist.is_initialized():
        return
    rank, size = comm.Get_rank(), comm.Get_size()
    addr = os.environ.get("WAGMA_BENCH_MASTER_ADDR", "127.0.0.1")
    port = None
    if rank == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((addr, 0))
            port = s.getsockname()[1]
    port = comm.bcast(port, root=0)
    os.environ.update(MASTER_ADDR=addr, MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(size))
    if addr == "127.0.0.1":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(backend="gloo", init_method="env://", rank=rank,
                            world_size=size)
