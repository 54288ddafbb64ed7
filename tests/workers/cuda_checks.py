"""CUDA tensors through the torch ops, one scenario per argv[1]; every rank uses cuda:0
(ranks share one GPU). Each scenario runs the same computation on CPU tensors beside
the CUDA one (another stream name), so that the CUDA path is checked bit for bit
against the CPU path, and against the exact reference where the values allow.

  gossip              gossip exactness (tests/workers/gossip.py) with CUDA tensors,
                      all four dtypes, out-of-place and in-place, both reduction paths
  straggler D R T S W tests/workers/straggler.py with a CUDA tensor
  noncontig           transposed, strided, offset, expanded and channels_last inputs
  reuse               inputs produced by GPU work still queued at enqueue (on the
                      default and on a user stream); results, inputs and a dropped
                      input overwritten or freed right after synchronize, so that
                      the caching allocator hands their memory to later rounds"""
import itertools
import sys
import time

import numpy as np
import torch
from mpi4py import MPI

from common import emit, initial_value
from reference import average_round, gossip_trajectory

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

DEV = torch.device("cuda", 0)
DTYPES = {"float64": torch.float64, "float32": torch.float32,
          "float16": torch.float16, "bfloat16": torch.bfloat16}


def host_tensor(array, dtype):
    """A CPU tensor of `dtype` from float64 values (the cast both paths start from)."""
    return torch.from_numpy(np.array(array, dtype=np.float64)).to(DTYPES[dtype])


def as_f64(t):
    return t.detach().to("cpu").to(torch.float64).numpy()


def bits(t):
    """The raw bytes of a tensor (bf16 has no numpy type): for bit-exact comparisons."""
    return t.detach().to("cpu").contiguous().view(-1).view(torch.uint8)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


# -- gossip ---------------------------------------------------------------------------
ROUNDS = 12


def gossip_config(comm, rank, size, S, tau, dtype, wa, averaging, n, inplace=False,
                  global_rounds="blocking"):
    """Feeds each output back, a CPU stream and a CUDA stream in flight together.
    Returns (name, max error of both against the reference, rounds whose CUDA result
    differs from the CPU one in any bit, rounds with a wrong device/dtype/shape or
    (in-place) a result that is not the input tensor)."""
    mode = "wag" if global_rounds == "wait_avoiding" else ("wa" if wa else "sync")
    place = "inplace" if inplace else "out"
    name = f"cuda.S{S}.t{tau}.{dtype}.{mode}.{averaging}.{n}.{place}"
    phases = hvd.groups(size, S)
    x0 = np.stack([initial_value(r, n, size) for r in range(size)])
    expected = gossip_trajectory(as_f64(host_tensor(x0, dtype)), phases, tau, ROUNDS,
                                 averaging)
    knobs = dict(group_size=S, sync_period=tau, averaging=averaging, wait_avoiding=wa,
                 global_rounds=global_rounds)
    x_cpu = host_tensor(x0[rank], dtype)
    x_gpu = x_cpu.to(DEV, copy=True)
    max_err, mismatched, bad_result = 0.0, 0, 0
    for r in range(ROUNDS):
        if wa and rank == size - 1:
            time.sleep(0.003)  # others arrive first: this rank's engine joins passively
        h_cpu = hvd.group_allreduce_async(x_cpu, name=name + ".cpu", **knobs)
        if inplace:
            h_gpu = hvd.group_allreduce_async_(x_gpu, name=name + ".cuda", **knobs)
        else:
            h_gpu = hvd.group_allreduce_async(x_gpu, name=name + ".cuda", **knobs)
        y_gpu = hvd.synchronize(h_gpu)
        x_cpu = hvd.synchronize(h_cpu)
        if h_cpu.round != r or h_gpu.round != r:  # in lockstep no round is skipped
            return name, float("inf"), mismatched, bad_result
        if (y_gpu.device != DEV or y_gpu.dtype != DTYPES[dtype] or y_gpu.shape != (n,)
                or (inplace and y_gpu.data_ptr() != x_gpu.data_ptr())):
            bad_result += 1
        x_gpu = y_gpu
        if not same_bits(x_gpu, x_cpu):
            mismatched += 1
        err = max(np.abs(as_f64(x_cpu) - expected[r][rank]).max(),
                  np.abs(as_f64(x_gpu) - expected[r][rank]).max())
        max_err = max(max_err, float(err))
        comm.Barrier()
    return name, max_err, mismatched, bad_result


def gossip(comm, rank, size):
    configs = [dict(S=S, tau=tau, dtype=d, wa=wa, averaging="fresh", n=33, inplace=ip)
               for S, tau, d, wa, ip in itertools.product(
                   [2, 4], [1, 3], DTYPES, [True, False], [False, True])]
    # Tensors large enough for the reduce-scatter/allgather path (P=2 with the test's
    # HOROVOD_WAGMA_PAIR_SCATTER_BYTES), and the "paper" rule.
    configs += [dict(S=S, tau=4, dtype=d, wa=wa, averaging="fresh", n=50001)
                for S, d, wa in itertools.product([2, 4], ["float32", "float16", "bfloat16"],
                                                  [True, False])]
    configs += [dict(S=2, tau=3, dtype=d, wa=wa, averaging="paper", n=33)
                for d, wa in itertools.product(["float32", "float64"], [True, False])]
    # Wait-avoiding global rounds, in lockstep: the blocking trajectory.
    configs += [dict(S=S, tau=tau, dtype=d, wa=True, averaging="fresh", n=33,
                     global_rounds="wait_avoiding")
                for S, tau, d in itertools.product([2, 4], [1, 3], ["float32", "bfloat16"])]
    errors, mismatches, bad = {}, {}, {}
    for c in configs:
        name, err, mism, b = gossip_config(comm, rank, size, **c)
        errors[name], mismatches[name], bad[name] = err, mism, b
    st = hvd.stats()
    emit(rank, errors=errors, mismatches=mismatches, bad_results=bad,
         cuda_passive_joins=sum(v["passive_joins"] for k, v in st.items()
                                if k.endswith(".cuda")))


# -- straggler ------------------------------------------------------------------------
def straggler(rank, size, delay, rounds, tau, S, wa):
    """tests/workers/straggler.py on a CUDA tensor; a wait lasts until the result is
    on the GPU (the current stream is synchronized inside the timed interval)."""
    slow = size - 1
    x = torch.full((1000,), float(rank), dtype=torch.float32, device=DEV)
    torch.cuda.synchronize()
    waits = []
    for _ in range(rounds):
        if rank == slow:
            time.sleep(delay)
        t0 = time.monotonic()
        x = hvd.group_allreduce(x, name="straggle.cuda", group_size=S, sync_period=tau,
                                wait_avoiding=wa)
        torch.cuda.current_stream().synchronize()
        waits.append(time.monotonic() - t0)
    emit(rank, waits=waits, final=as_f64(x)[:4].tolist(), device=str(x.device),
         stats=engine_lib.stats())


# -- non-contiguous inputs ------------------------------------------------------------
def rank_values(rank, size, shape, dtype, salt=0):
    """Exactly representable values, different on every rank (a CPU tensor)."""
    n = int(np.prod(shape))
    k = np.arange(n, dtype=np.float64)
    v = ((rank * 7 + k * 3 + salt) % (2 * size)) + 0.25 * rank
    return host_tensor(v.reshape(shape), dtype)


def noncontig(comm, rank, size):
    """Each case's round 0 is global: the result is the exact global mean."""
    cases = {}
    for dtype in DTYPES:
        base = rank_values(rank, size, (24, 40), dtype).to(DEV)
        cases[f"transposed.{dtype}"] = (base, base.t())
    base = rank_values(rank, size, (24, 40), "float32", 1).to(DEV)
    cases["strided"] = (base, base[:, ::3])
    base = rank_values(rank, size, (24, 40), "float32", 2).to(DEV)
    cases["offset"] = (base, base[5:20, 7:30])
    base = rank_values(rank, size, (40,), "float32", 3).to(DEV)
    cases["expanded"] = (base, base.expand(16, 40))  # stride 0
    base = rank_values(rank, size, (2, 3, 8, 8), "float32", 4).to(DEV)
    base = base.contiguous(memory_format=torch.channels_last)
    cases["channels_last"] = (base, base)
    out = {}
    for case, (base, x) in cases.items():
        assert not x.is_contiguous(), case
        base_before, x_before = base.clone(), x.clone()
        y = hvd.group_allreduce(x, name=f"nc.{case}.cuda")
        y_cpu = hvd.group_allreduce(x.cpu().contiguous(), name=f"nc.{case}.cpu")
        everyone = comm.allgather(as_f64(x))
        mean = sum(everyone) / size
        out[case] = dict(
            device=str(y.device), shape_ok=tuple(y.shape) == tuple(x.shape),
            dtype_ok=y.dtype == x.dtype,
            equals_cpu=same_bits(y.contiguous(), y_cpu),
            err=float(np.abs(as_f64(y) - mean).max()),
            input_unchanged=same_bits(x, x_before) and same_bits(base, base_before),
            nontrivial=bool(np.abs(as_f64(x) - mean).max() > 0))
    # In place into a strided view: only the view's elements change.
    base = rank_values(rank, size, (24, 40), "float32", 5).to(DEV)
    view, others = base[:, ::2], base[:, 1::2].clone()
    view_before = as_f64(view)
    mean = sum(comm.allgather(view_before)) / size
    ref = hvd.group_allreduce(view.cpu().contiguous(), name="nc.inplace.cpu")
    r = hvd.group_allreduce_(view, name="nc.inplace.cuda")
    out["inplace"] = dict(
        device=str(r.device), shape_ok=tuple(r.shape) == tuple(view.shape),
        dtype_ok=r.dtype == view.dtype,
        returned_input=r.data_ptr() == view.data_ptr() and r.stride() == view.stride(),
        equals_cpu=same_bits(view, ref), err=float(np.abs(as_f64(view) - mean).max()),
        input_unchanged=same_bits(base[:, 1::2], others),
        nontrivial=bool(np.abs(view_before - mean).max() > 0))
    emit(rank, cases=out)


# -- freed / overwritten tensors -----------------------------------------------------
REUSE_ROUNDS = 40
BIG, SMALL = 1 << 20, 1000
SLEEP_CYCLES = 2_000_000  # about a millisecond of GPU time


def fill_on_gpu(t, rank, size, r, salt):
    """Writes values_on_cpu(...) into CUDA tensor t with kernels on the current stream
    (nothing waits for them on the host). Computed in float32, exact below 2**24."""
    v = torch.arange(t.numel(), dtype=torch.float32, device=t.device)
    v.mul_(3).add_(rank * 7 + r * 5 + salt).remainder_(2 * size).add_(0.25 * rank)
    return t.copy_(v)


def values_on_cpu(rank, size, n, dtype, r, salt):
    return rank_values(rank, size, (n,), dtype, r * 5 + salt)


def reuse(comm, rank, size):
    """Lockstep rounds without wait-avoidance (deterministic groups). Per round:
      - big (float32, 4 MB, out-of-place) and small (float16, in-place): inputs are
        written by kernels queued behind a GPU sleep, so the staging copy must wait
        for the producing stream; both streams are in flight together;
      - dropped (float32): the app drops its input right after enqueue and allocates
        a NaN-filled tensor of the same size (the allocator's first candidate);
      - right after synchronize the result is snapshot (on the GPU), then results and
        inputs are overwritten with NaN, more GPU work is queued, and all are freed.
    Odd rounds run on a user stream instead of the default stream. The snapshots are
    read back at the end; each must equal the CPU stream's result bit for bit, and
    the exact group mean."""
    knobs = dict(group_size=2, sync_period=5, wait_avoiding=False, averaging="fresh")
    user_stream = torch.cuda.Stream()
    phases = hvd.groups(size, 2)
    snaps = {"big": [], "small": [], "dropped": []}
    cpu = {"big": [], "small": [], "dropped": []}
    spec = {"big": (BIG, "float32", 0), "small": (SMALL, "float16", 1),
            "dropped": (SMALL, "float32", 2)}
    freed_ptrs, reused, dropped_reused, polled = set(), 0, 0, 0
    nan = float("nan")
    for r in range(REUSE_ROUNDS):
        stream = user_stream if r % 2 else torch.cuda.current_stream()
        with torch.cuda.stream(stream):
            big = torch.empty(BIG, dtype=torch.float32, device=DEV)
            small = torch.empty(SMALL, dtype=torch.float16, device=DEV)
            reused += big.data_ptr() in freed_ptrs
            torch.cuda._sleep(SLEEP_CYCLES)
            fill_on_gpu(big, rank, size, r, 0)
            fill_on_gpu(small, rank, size, r, 1)
            h_big = hvd.group_allreduce_async(big, name="reuse.big.cuda", **knobs)
            h_small = hvd.group_allreduce_async_(small, name="reuse.small.cuda", **knobs)
            dropped = fill_on_gpu(torch.empty(SMALL, dtype=torch.float32, device=DEV),
                                  rank, size, r, 2)
            h_dropped = hvd.group_allreduce_async(dropped, name="reuse.dropped.cuda",
                                                  **knobs)
            dropped_ptr = dropped.data_ptr()
            del dropped
            decoys = [torch.empty(SMALL, dtype=torch.float32, device=DEV).fill_(nan)
                      for _ in range(4)]
            dropped_reused += any(d.data_ptr() == dropped_ptr for d in decoys)
            h_cpu = {k: hvd.group_allreduce_async(values_on_cpu(rank, size, n, d, r, salt),
                                                  name=f"reuse.{k}.cpu", **knobs)
                     for k, (n, d, salt) in spec.items()}
            # Unrelated GPU work on the current stream while the rounds are in flight.
            junk = torch.ones(256, 256, device=DEV) @ torch.ones(256, 256, device=DEV)
            if r % 3 == 0:
                while not hvd.poll(h_big):
                    time.sleep(0.0005)
                polled += 1
            y_big = hvd.synchronize(h_big)
            y_small = hvd.synchronize(h_small)
            y_dropped = hvd.synchronize(h_dropped)
            for k, y in (("big", y_big), ("small", y_small), ("dropped", y_dropped)):
                snaps[k].append(y.clone())  # ordered after the result by synchronize
            for k in spec:
                cpu[k].append(hvd.synchronize(h_cpu[k]))
            # The app reuses everything at once.
            for t in [y_big, big, y_small, y_dropped, junk] + decoys:
                t.fill_(nan)
            torch.cuda._sleep(SLEEP_CYCLES)
            freed_ptrs.update({big.data_ptr(), y_big.data_ptr()})
            del big, small, y_big, y_small, y_dropped, decoys, junk
    torch.cuda.synchronize()
    wrong = {k: [] for k in spec}
    for k, (n, d, salt) in spec.items():
        for r in range(REUSE_ROUNDS):
            stacked = np.stack([as_f64(values_on_cpu(q, size, n, d, r, salt))
                                for q in range(size)])
            exact = average_round(stacked, r, phases, knobs["sync_period"])[rank]
            snap = snaps[k][r]
            if not (snap.device == DEV and same_bits(snap, cpu[k][r])
                    and np.array_equal(as_f64(snap), exact)):
                wrong[k].append(r)
    # reused: rounds whose input landed in memory a freed tensor of an earlier round
    # held (the poison was in place). dropped_reused: rounds where the dropped input's
    # memory went to a NaN decoy before the round completed (only possible when the
    # op does not keep it alive; the round must be right either way).
    emit(rank, wrong=wrong, rounds=REUSE_ROUNDS, reused=reused,
         dropped_reused=dropped_reused, polled=polled)


def main():
    hvd.init()
    comm = MPI.COMM_WORLD
    rank, size = hvd.rank(), hvd.size()
    torch.cuda.set_device(DEV)
    scenario = sys.argv[1]
    if scenario == "gossip":
        gossip(comm, rank, size)
    elif scenario == "straggler":
        delay, rounds, tau, S, wa = (float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                     int(sys.argv[5]), sys.argv[6] == "1")
        straggler(rank, size, delay, rounds, tau, S, wa)
    elif scenario == "noncontig":
        noncontig(comm, rank, size)
    elif scenario == "reuse":
        reuse(comm, rank, size)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    main()
