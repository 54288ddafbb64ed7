"""The twins: PyTorch and Keras features that docs/api.md promises alike, and the
data-sharing helpers, checked as properties over knob matrices against small models
of the documented rules.

- Optimizer parity (workers/twin_properties.py, one 3-rank launch per framework, S=2,
  tau 3, exact rounds): for each knob case both frameworks give the model and the
  optimizer state that a numpy simulation of the documented rules gives, after every
  step and after sync(), and the same stream statistics; which factory accepts which
  optimizer type and knob (drift correction, state modes) follows the docs.
- Keras callbacks: WagmaGlobalSyncCallback's output is the ranks' mean of its input,
  MetricAverageCallback's the mean of the metrics, WagmaStatsCallback's counts the
  epoch's own rounds.
- BalancedDistributedSampler, BalancedBatchSampler and BalancedSequence: over shuffle,
  drop_last, seeds, dataset sizes not divisible by P, min_share, dead_band, extreme and
  unmeasured speeds and 3 epochs, every rank's indices are exactly the documented cut of
  the documented permutation (the samplers in this process, the sequence on rank 0 of
  the TensorFlow launch, their allgathers faked).
- The step clock: the median cycle, reset at every epoch, a slow outlier moves neither
  the throughput nor the shares; fed by PyTorch's optimizer step hooks and by the
  sequence's batch requests.
"""
import math
import statistics

import numpy as np
import pytest
import torch

import resident
from horovod_wagma.common.op.schedule import groups
from reference import average_round
from reference import is_global as reference_is_global
from twin_cases import (CASES, HYPER, KERAS_ONLY, STEPS, TAU, TORCH_ONLY, W, fake_gather,
                        start, targets)

P, S = 3, 2
TORCH_PARITY = resident.item("twin_properties.py", P, "parity", "acceptance",
                             framework="torch", timeout=180)
KERAS_PARITY = resident.item("twin_properties.py", P, "parity", "acceptance", "sequence",
                             "callbacks", framework="tensorflow", timeout=300)


def is_global(k):
    return reference_is_global(k, TAU)


def fp16_average(sent, members):
    """The engine's fp16 average of a group: accumulated in float32, stored as fp16."""
    acc = np.zeros_like(sent[0], dtype=np.float32)
    for i in members:
        acc = acc + sent[i].astype(np.float32)
    return (acc / np.float32(len(members))).astype(np.float16).astype(np.float32)


def simulate(framework, kind, mode, alpha, fp16):
    """The documented rules for P=3, S=2, tau 3 with exact rounds (semantics.md, "The
    optimizers"; api.md): per step, g_i = (x_i - a_i) w (+ c_i with drift correction);
    the wrapped optimizer's step; the model averaged over the round's group (the whole
    world at global rounds; fp16 on the wire: replaced by the fp16 average at global
    rounds, corrected by it at group rounds); "always" (PyTorch) averages the state with
    the model; at global rounds "on_sync" averages the state (PyTorch also
    "quasi_global"'s rebuilt buffers) and drift correction moves c_i by alpha k (m̄ -
    m_i); "quasi_global" rebuilds m = beta m_old + (1 - beta)(x_before - x_after)/lr.
    sync(): the model's world mean, and the state's unless "never" (PyTorch) / with
    "on_sync" only (Keras). Adam's v moves after each round by (1 - beta_2)(g_G^2 -
    g_i^2), g_G the round's mean gradient (second_moment="group"). The state is in
    PyTorch's units (SGD's buffer, Adam's m, v).
    Returns (models per step, states per step, synced model, synced state)."""
    phases = groups(P, S)
    dtype = np.float32 if kind == "sgd" else np.float64
    h = HYPER[kind]
    x = np.array([start(r) for r in range(P)], dtype=dtype)
    a = np.array([targets(r) for r in range(P)])
    names = {"sgd": [], "sgdm": ["buf"], "adam": ["m", "v"]}[kind]
    state = {n: np.zeros_like(x) for n in names}
    c = np.zeros_like(x)
    averaged_at_global = mode == "on_sync" or (mode == "quasi_global" and framework == "torch")
    models, states = [], []
    for k in range(STEPS):
        before = x.copy()
        g = ((x.astype(np.float64) - a) * W).astype(dtype) + c
        if kind == "sgd":
            half = x - dtype(h["lr"]) * g
        elif kind == "sgdm":
            old = state["buf"].copy()
            state["buf"] = h["momentum"] * state["buf"] + g
            half = x - h["lr"] * state["buf"]
        else:
            b1, b2, t = h["beta_1"], h["beta_2"], k + 1
            state["m"] = b1 * state["m"] + (1 - b1) * g
            state["v"] = b2 * state["v"] + (1 - b2) * g * g
            half = x - h["lr"] * (state["m"] / (1 - b1 ** t)) / np.sqrt(
                state["v"] / (1 - b2 ** t))
        if fp16:
            sent = half.astype(np.float16)
            members = [list(range(P))] if is_global(k) else \
                phases[(k - 1 - k // TAU) % len(phases)]
            x = np.empty_like(half)
            for group in members:
                avg = fp16_average(sent, group)
                for i in group:
                    x[i] = avg if is_global(k) else half[i] + (avg - sent[i].astype(np.float32))
        else:
            x = average_round(half, k, phases, TAU).astype(dtype)
        if kind == "adam":
            # second_moment="group" (the Adam default in both): the gradient rides the
            # model's round; v moves to the round's mean gradient's.
            g_mean = average_round(g, k, phases, TAU)
            state["v"] = np.maximum(state["v"] + (1 - h["beta_2"]) * (g_mean ** 2 - g ** 2), 0)
        if mode == "always":
            state = {n: average_round(s, k, phases, TAU) for n, s in state.items()}
        if mode == "quasi_global":
            beta = h["momentum"]
            state["buf"] = beta * old + (1 - beta) * (before - x) / h["lr"]
        if is_global(k) and averaged_at_global:
            first = state["buf" if kind == "sgdm" else "m"] if names else None
            if alpha:
                scale = 1 - h["momentum"] if kind == "sgdm" else 1.0
                c = c + alpha * scale * (first.mean(axis=0) - first)
            state = {n: np.repeat(s.mean(axis=0, keepdims=True), P, axis=0)
                     for n, s in state.items()}
        models.append(x.copy())
        states.append({n: s.copy() for n, s in state.items()})
    synced = np.repeat(x.mean(axis=0, keepdims=True), P, axis=0)
    state_synced = mode != "never" if framework == "torch" else mode == "on_sync"
    synced_state = {n: (np.repeat(s.mean(axis=0, keepdims=True), P, axis=0)
                        if state_synced else s) for n, s in state.items()}
    return models, states, synced, synced_state


def reported_state(framework, kind, state):
    """A rank's reported state in PyTorch's units: Keras's SGD velocity v = -lr m."""
    if not state:
        return {}
    if framework == "torch":
        return ({"buf": state["momentum_buffer"]} if kind == "sgdm"
                else {"m": state["exp_avg"], "v": state["exp_avg_sq"]})
    return ({"buf": [-v / HYPER["sgdm"]["lr"] for v in state["velocity"]]}
            if kind == "sgdm" else {"m": state["m"], "v": state["v"]})


def tolerance(kind, fp16):
    if fp16:
        return 2e-3  # one fp16 rounding of the average either way
    return 1e-6 if kind == "sgd" else 1e-10


@pytest.fixture(scope="module")
def torch_launch(transport):
    return TORCH_PARITY.scenarios()


@pytest.fixture(scope="module")
def keras_launch(transport):
    return KERAS_PARITY.scenarios()


def check_case(framework, name, results):
    """Every rank's model and state after each step and after sync() against the
    simulation; returns the stacked models per step (P x 5)."""
    kind, mode, alpha, fp16, _ = CASES[name]
    models, states, synced, synced_state = simulate(framework, kind, mode, alpha, fp16)
    tol = tolerance(kind, fp16)
    got = [np.array([results[r][name]["models"][k] for r in range(P)]) for k in range(STEPS)]
    for k in range(STEPS):
        err = np.abs(got[k] - models[k]).max()
        assert err <= tol * (1 + np.abs(models[k]).max()), (framework, name, k, got[k],
                                                             models[k])
        for r in range(P):
            rep = reported_state(framework, kind, results[r][name]["states"][k])
            assert rep.keys() == states[k].keys(), (framework, name, k, rep.keys())
            for n, want in states[k].items():
                err = np.abs(np.array(rep[n]) - want[r]).max()
                assert err <= tol * (1 + np.abs(want).max()), (framework, name, k, r, n,
                                                               rep[n], want[r])
    for r in range(P):
        res = results[r][name]
        assert np.abs(np.array(res["synced"]) - synced[r]).max() <= tol * (
            1 + np.abs(synced).max()), (framework, name, r, res["synced"], synced[r])
        rep = reported_state(framework, kind, res["synced_state"])
        for n, want in synced_state.items():
            assert np.abs(np.array(rep[n]) - want[r]).max() <= tol * (
                1 + np.abs(want).max()), (framework, name, r, n, rep[n], want[r])
        assert res["steps"] == STEPS, res["steps"]
    # The global rounds leave one model everywhere, the same bits; group rounds do not.
    for k in range(STEPS):
        same = all(results[r][name]["models"][k] == results[0][name]["models"][k]
                   for r in range(P))
        assert same == is_global(k), (framework, name, k)
    return got


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_torch_and_keras_optimizers_follow_the_same_documented_trajectory(torch_launch,
                                                                          keras_launch):
    """Each knob case (SGD with momentum, Adam and plain SGD; state "never", "on_sync",
    "quasi_global", PyTorch's "always"; drift correction 0.5; fp16 on the wire; Keras
    eager and inside a tf.function) through both frameworks: every rank's model and
    state after each of 7 steps and after sync() equal the simulation of the documented
    rules; the frameworks agree with each other (float64: 1e-12; plain SGD in float32,
    fp16 included: the same bits)."""
    torch_res, keras_res = torch_launch.results("parity"), keras_launch.results("parity")
    for name in CASES:
        got = {}
        if name not in KERAS_ONLY:
            got["torch"] = check_case("torch", name, torch_res)
        if name not in TORCH_ONLY:
            got["keras"] = check_case("keras", name, keras_res)
        # "quasi_global" differs on purpose: PyTorch also averages the rebuilt buffers
        # at global rounds (each side is checked against its own rule above).
        if len(got) == 2 and CASES[name][1] != "quasi_global":
            kind = CASES[name][0]
            for k in range(STEPS):
                diff = np.abs(got["torch"][k] - got["keras"][k]).max()
                assert diff <= (0.0 if kind == "sgd" else 1e-12), (name, k, diff)
    # Keras in a tf.function gives eager Keras's models.
    for graph, eager in (("sgdm.on_sync.drift.graph", "sgdm.on_sync.drift"),
                         ("sgd.fp16.graph", "sgd.fp16")):
        for r in range(P):
            assert keras_res[r][graph]["models"] == keras_res[r][eager]["models"], (graph, r)


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_compression_and_state_modes_change_what_they_promise(torch_launch, keras_launch):
    """fp16 on the wire: the model differs from the fp32 run, by less than fp16's
    precision; at global rounds it is an fp16 value on every rank, at group rounds not
    (each rank keeps its full-precision residual). The state is the same bits on every
    rank after a global round under "on_sync" (and PyTorch's "quasi_global" and
    "always"), never after a group round, never under "never" (nor Keras's
    "quasi_global"); sync() averages it unless "never"
    (PyTorch) / with "on_sync" only (Keras)."""
    for framework, results in (("torch", torch_launch.results("parity")),
                               ("keras", keras_launch.results("parity"))):
        for k in range(STEPS):
            x16 = np.array([results[r]["sgd.fp16"]["models"][k] for r in range(P)])
            x32 = np.array([results[r]["sgd.fp32"]["models"][k] for r in range(P)])
            assert 0 < np.abs(x16 - x32).max() < 1e-2, (framework, k)
            representable = (x16.astype(np.float16).astype(np.float64) == x16).all()
            assert representable == is_global(k), (framework, k, x16)
        for name, (kind, mode, alpha, fp16, _) in CASES.items():
            if kind == "sgd" or name in (KERAS_ONLY if framework == "torch" else TORCH_ONLY):
                continue
            averaged = mode in ("on_sync", "always") or (mode == "quasi_global"
                                                         and framework == "torch")
            for k in range(STEPS):
                states = [results[r][name]["states"][k] for r in range(P)]
                same = all(s == states[0] for s in states)
                assert same == (is_global(k) and averaged), (framework, name, k)
            synced = [results[r][name]["synced_state"] for r in range(P)]
            want = mode != "never" if framework == "torch" else mode == "on_sync"
            assert all(s == synced[0] for s in synced) == want, (framework, name)


STAT_KEYS = {"rounds", "global_rounds", "activations_sent", "passive_joins",
             "staleness_mean", "staleness_max", "group_wait_s", "global_wait_s",
             "bytes_sent", "errors", "rounds_skipped", "rounds_left_out",
             "rounds_kept_ahead", "grace_held", "grace_caught", "contribution_age_mean",
             "contribution_age_max",
             "contribution_age_histogram"}


def expected_streams(framework, kind, mode, alpha):
    """Stream -> (rounds, global rounds) of one case: 7 model rounds (3 global), a
    state round per global round where the state is averaged there (a separate stream;
    Keras's SGD without momentum has a floating variable to average too), a drift
    round beside it, one sync() round."""
    streams = {"model0": (STEPS, 3), "forced0": (1, 1)}
    has_state = kind != "sgd" or framework == "keras"
    if has_state and (mode == "on_sync" or (mode == "quasi_global" and framework == "torch")):
        streams["sync0"] = (3, 3)
    if alpha:
        streams["drift0"] = (3, 3)
    return streams


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_stream_statistics_are_the_same_in_both_frameworks(torch_launch, keras_launch):
    """stats(): per case, the optimizer's streams, each with the documented keys, its
    rounds and global rounds as the case runs them, nothing passive, aged or left out,
    and the same bytes in both frameworks."""
    torch_res, keras_res = torch_launch.results("parity"), keras_launch.results("parity")
    for name, (kind, mode, alpha, fp16, _) in CASES.items():
        for framework, results in (("torch", torch_res), ("keras", keras_res)):
            if name in (KERAS_ONLY if framework == "torch" else TORCH_ONLY):
                continue
            want = expected_streams(framework, kind, mode, alpha)
            for r in range(P):
                stats = results[r][name]["stats"]
                assert set(stats) == set(want), (framework, name, r, sorted(stats))
                for stream, (rounds, global_rounds) in want.items():
                    s = stats[stream]
                    assert set(s) == STAT_KEYS, (framework, name, stream, sorted(s))
                    assert (s["rounds"], s["global_rounds"]) == (rounds, global_rounds), \
                        (framework, name, r, stream, s)
                    assert s["passive_joins"] == s["errors"] == s["rounds_skipped"] == \
                        s["rounds_left_out"] == s["contribution_age_max"] == 0, s
        if name in KERAS_ONLY or name in TORCH_ONLY:
            continue
        for r in range(P):
            # sync() of "quasi_global" sends the buffers too in PyTorch only.
            for stream in ("model0", "drift0") + (("forced0",) if mode != "quasi_global"
                                                   else ()):
                if stream in torch_res[r][name]["stats"]:
                    assert torch_res[r][name]["stats"][stream]["bytes_sent"] == \
                        keras_res[r][name]["stats"][stream]["bytes_sent"], (name, r, stream)


# What docs/api.md says each factory takes. drift_correction: a first moment (SGD with
# momentum; PyTorch: the Adam family; Keras: Adam, AdamW, Nadam), with "on_sync";
# default None: PyTorch 0.25 where it can, Keras off. "quasi_global": SGD with momentum.
# "always": PyTorch only.
FIRST_MOMENT = {"sgdm", "adam", "adamw", "nadam"}
# averaging: "follow" for the Adam family by default, "local" for the others; a given
# rule stays.
ADAM_FAMILY = {"adam", "adamw", "nadam"}


def expected_acceptance(framework, kind, variant):
    moment = kind in FIRST_MOMENT
    if variant in ("default", "local"):   # "local": only the averaging rule given
        return 0.25 if framework == "torch" and moment else 0.0
    if variant in ("on_sync.0.5", "on_sync.1"):
        return float(variant.split(".", 1)[1]) if moment else "drift_correction needs"
    if variant == "never.0.5":
        return "needs average_optimizer_state='on_sync'"
    if variant == "quasi_global":
        return 0.0 if kind == "sgdm" else "'quasi_global' needs"
    if variant == "always":
        return 0.0 if framework == "torch" else "PyTorch DistributedWagmaOptimizer only"
    return 0.0  # on_sync.0, never


def expected_averaging(kind, variant):
    return "follow" if kind in ADAM_FAMILY and variant != "local" else "local"


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_both_factories_accept_and_refuse_the_documented_optimizers(torch_launch,
                                                                    keras_launch):
    """Seven optimizer types x nine knob variants per framework: the resolved
    drift_correction alpha and averaging rule, or a ValueError whose text says what is
    needed."""
    for framework, launch in (("torch", torch_launch), ("keras", keras_launch)):
        rows = launch.results("acceptance")[0]
        assert len(rows) == 7 * 9, sorted(rows)
        for key, got in rows.items():
            kind, variant = key.split(".", 1)
            want = expected_acceptance(framework, kind, variant)
            if isinstance(want, float):
                assert got == {"alpha": want,
                               "averaging": expected_averaging(kind, variant)}, \
                    (framework, key, got)
            else:
                assert want in got.get("error", ""), (framework, key, got, want)


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_keras_callbacks_average_their_inputs_and_count_the_epochs_rounds(keras_launch):
    """model.fit, 3 epochs of 3 steps, tau 3: WagmaGlobalSyncCallback leaves every
    variable (BatchNorm's statistics included) at the ranks' mean of what it found;
    MetricAverageCallback leaves the ranks' mean of each metric; WagmaStatsCallback logs
    the epoch's own rounds: 3 model rounds, the state's rounds at the epoch's global
    steps (0 and 2, then 5, then 8), the sync callback's and the metrics' round:
    7, 6, 6; no passive join, staleness 0, the engine's running maximum."""
    results = keras_launch.results("callbacks")
    for e in range(3):
        for v in range(len(results[0]["before_sync"][e])):
            mean = np.mean([results[r]["before_sync"][e][v] for r in range(P)], axis=0)
            for r in range(P):
                np.testing.assert_allclose(results[r]["after_sync"][e][v], mean, rtol=1e-6,
                                           atol=1e-7, err_msg=f"epoch {e} variable {v}")
        for key in ("loss", "accuracy"):
            mean = sum(results[r]["own_logs"][e][key] for r in range(P)) / P
            for r in range(P):
                assert results[r]["averaged_logs"][e][key] == pytest.approx(mean, rel=1e-9)
    own = [results[r]["own_logs"][0]["loss"] for r in range(P)]
    assert max(own) - min(own) > 1e-6, own  # the ranks' own metrics differ
    for r in range(P):
        res = results[r]
        assert res["steps"] == 9
        assert res["rounds_before_sync"] == [5, 4, 4], res["rounds_before_sync"]
        assert res["rounds_after_stats"] == [7, 6, 6], res["rounds_after_stats"]
        for e, logs in enumerate(res["stats_logs"]):
            assert sorted(k for k in logs if k.startswith("wagma_")) == [
                "wagma_max_staleness", "wagma_mean_staleness", "wagma_passive_joins",
                "wagma_rounds", "wagma_wait_s"], logs
            assert logs["wagma_rounds"] == res["rounds_after_stats"][e], (e, logs)
            assert logs["wagma_passive_joins"] == 0 and logs["wagma_mean_staleness"] == 0
            assert logs["wagma_max_staleness"] == res["staleness_max"], (e, logs)
            assert 0 <= logs["wagma_wait_s"] < 30, logs


# --- the samplers and the sequence ----------------------------------------------------

def model_shares(total, weights, min_share, dead_band):
    """docs/api.md's cut, written from the rule: unmeasured throughputs (not finite, or
    <= 0) count as the measured ones' mean (all equal if none is); those within
    dead_band of their median count as the median; every share at least
    min(total // n, int(min_share * total / n)); above it, water-filling in proportion
    to the weights, then the largest remainders get the leftover, ties to the lower
    rank; the shares sum to total."""
    n = len(weights)
    ok = [w for w in weights if math.isfinite(w) and w > 0]
    w = [x if math.isfinite(x) and x > 0 else (sum(ok) / len(ok) if ok else 1.0)
         for x in weights]
    med = statistics.median(w)
    w = [med if abs(x - med) <= dead_band * med else x for x in w]
    floor = min(total // n, int(min_share * total / n))
    fixed = [False] * n
    while True:
        free = [i for i in range(n) if not fixed[i]]
        budget = total - floor * (n - len(free))
        exact = {i: budget * w[i] / sum(w[j] for j in free) for i in free}
        below = [i for i in free if exact[i] < floor]
        if not below or len(below) == len(free):
            break
        for i in below:
            fixed[i] = True
    shares = [floor if fixed[i] else math.floor(exact[i]) for i in range(n)]
    order = sorted(free, key=lambda i: (math.floor(exact[i]) - exact[i], i))
    for k in range(total - sum(shares)):
        shares[order[k % len(order)]] += 1
    return shares


def torch_total(n, p, drop_last):
    """torch's DistributedSampler's total_size."""
    sampler = torch.utils.data.distributed.DistributedSampler(range(n), num_replicas=p,
                                                              rank=0, drop_last=drop_last)
    return sampler.total_size


def torch_order(n, seed, epoch, shuffle):
    if not shuffle:
        return list(range(n))
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    return torch.randperm(n, generator=g).tolist()


def pad_or_cut(order, total):
    """torch's padding (repeat from the start) or truncation."""
    while len(order) < total:
        order = order + order[:total - len(order)]
    return order[:total]


SPEED_SEQUENCES = [
    [[1.0, 1.0, 1.0, 1.0], [1.0, 3.0, 3.0, 3.0]],
    [[1e-6, 1.0, 1.0, 1.0], [5.0, 1.0, 0.0, float("nan")]],  # extreme, unmeasured
    [[1.0, 1.04, 0.97, 1.02], [0.0] * 4],  # within the dead band; nothing measured
]
SAMPLER_MATRIX = [(p, n, shuffle, drop_last, seed, min_share, band, speeds)
                  for p, n in ((2, 23), (3, 31), (4, 42), (4, 40))
                  for shuffle, drop_last in ((True, False), (False, False), (True, True),
                                             (False, True))
                  for seed, min_share, band, speeds in (
                      (0, 0.25, 0.1, SPEED_SEQUENCES[0]), (5, 0.0, 0.0, SPEED_SEQUENCES[1]),
                      (9, 0.6, 0.1, SPEED_SEQUENCES[1]), (9, 1.0, 0.0, SPEED_SEQUENCES[2]))]


def test_balanced_sampler_deals_the_documented_cut_of_torchs_permutation():
    """BalancedDistributedSampler on P = 2..4 ranks (one sampler per rank here), over
    shuffle x drop_last x seed x min_share x dead_band x speeds (equal, 3x, a million
    times slower, unmeasured 0 and NaN, within the dead band), 3 epochs each: every
    rank's shares, len() and indices are the documented cut (model_shares) of torch's
    permutation (seed + epoch, padded or truncated to torch's total_size), the same on
    every rank; together the ranks hold torch's DistributedSampler's indices; a second
    pass over an epoch repeats it; epochs and seeds change the order."""
    from horovod_wagma.torch import BalancedDistributedSampler
    for p, n, shuffle, drop_last, seed, min_share, band, speeds in SAMPLER_MATRIX:
        case = (p, n, shuffle, drop_last, seed, min_share, band)
        samplers = [BalancedDistributedSampler(range(n), num_replicas=p, rank=r,
                                               shuffle=shuffle, seed=seed,
                                               drop_last=drop_last, min_share=min_share,
                                               dead_band=band) for r in range(p)]
        total = torch_total(n, p, drop_last)
        orders = []
        for epoch, gathered in enumerate([[0.0] * p] + [s[:p] for s in speeds]):
            for s in samplers:
                fake_gather(s, gathered)
                s.set_epoch(epoch)
            want = model_shares(total, gathered, min_share, band)
            order = pad_or_cut(torch_order(n, seed, epoch, shuffle), total)
            start = 0
            for r, s in enumerate(samplers):
                assert s.shares == want and len(s) == want[r], (case, epoch, s.shares, want)
                np.testing.assert_array_equal(s.throughputs, gathered, err_msg=str(case))
                dealt = list(s)
                assert dealt == order[start:start + want[r]], (case, epoch, r)
                assert list(s) == dealt, (case, epoch, r)  # the same epoch, the same order
                start += want[r]
            union = sorted(i for s in samplers for i in s)
            theirs = []
            for r in range(p):
                t = torch.utils.data.distributed.DistributedSampler(
                    range(n), num_replicas=p, rank=r, shuffle=shuffle, seed=seed,
                    drop_last=drop_last)
                t.set_epoch(epoch)
                theirs += list(t)
            assert union == sorted(theirs), (case, epoch)
            if drop_last or n % p == 0:
                assert len(set(union)) == len(union) == total, (case, epoch)
            else:
                assert set(union) == set(range(n)) and len(union) == total, (case, epoch)
            orders.append([i for s in samplers for i in s])
        assert (orders[0] != orders[1]) == shuffle, case
    a = BalancedDistributedSampler(range(50), num_replicas=2, rank=0, seed=1)
    b = BalancedDistributedSampler(range(50), num_replicas=2, rank=0, seed=2)
    for s in (a, b):
        fake_gather(s, [0.0, 0.0])
        s.set_epoch(0)
    assert list(a) != list(b)


def test_balanced_batch_sampler_deals_the_documented_batches():
    """BalancedBatchSampler (LB-BSP) over batch sizes 1, 3, 8, P = 2..4, shuffle,
    drop_last, min_share and speeds, 3 epochs: equal steps on every rank
    (ceil(n / G), or n // G with drop_last), every rank's batch the documented cut of
    the global batch G = P b (floor: min_share of an equal batch and at least 1), each
    step's batches contiguous in torch's permutation padded (or cut) to whole global
    batches, loss_weight = P b_r / G."""
    from horovod_wagma.torch import BalancedBatchSampler
    for p, n, batch in ((2, 23, 3), (3, 31, 1), (4, 42, 8), (3, 90, 5)):
        for shuffle, drop_last in ((True, False), (False, True)):
            for seed, min_share, band, speeds in ((0, 0.25, 0.1, SPEED_SEQUENCES[0]),
                                                  (5, 0.0, 0.0, SPEED_SEQUENCES[1]),
                                                  (9, 0.6, 0.1, SPEED_SEQUENCES[2])):
                case = (p, n, batch, shuffle, drop_last, seed, min_share, band)
                samplers = [BalancedBatchSampler(range(n), batch, num_replicas=p, rank=r,
                                                 shuffle=shuffle, seed=seed,
                                                 drop_last=drop_last, min_share=min_share,
                                                 dead_band=band) for r in range(p)]
                g = p * batch
                steps = n // g if drop_last else -(-n // g)
                for epoch, gathered in enumerate([[0.0] * p] + [s[:p] for s in speeds]):
                    for s in samplers:
                        fake_gather(s, gathered)
                        s.set_epoch(epoch)
                    floor = min(1.0, max(min_share, 1.0 / batch))
                    sizes = model_shares(g, gathered, floor, band)
                    order = pad_or_cut(torch_order(n, seed, epoch, shuffle), steps * g)
                    for r, s in enumerate(samplers):
                        assert s.batch_sizes == sizes and len(s) == steps, (case, epoch)
                        assert min(sizes) >= 1
                        start = sum(sizes[:r])
                        want = [order[k * g + start:k * g + start + sizes[r]]
                                for k in range(steps)]
                        assert list(s) == want, (case, epoch, r)
                        assert s.loss_weight == pytest.approx(p * sizes[r] / g), case


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_balanced_sequence_deals_the_documented_cut_of_numpys_permutation(keras_launch):
    """BalancedSequence (rank 0 of the TensorFlow launch builds every rank's, their
    allgather faked) over P = 2, 3, n not divisible by P, shuffle x drop_last, seeds,
    min_share, dead_band, extreme and unmeasured speeds, 3 epochs: each rank's shares
    are the documented cut of numpy's RandomState(seed + epoch) permutation, padded as
    torch pads or truncated with drop_last; len() is ceil(share / batch); the batches
    served are the share in order, x and y matching; where a rank reports it trained
    without WAGMA (one rank of two) the shares stay equal (equal_steps_needed)."""
    out = keras_launch.results("sequence")[0]
    assert len(out["cases"]) == 12
    for case in out["cases"]:
        p, n, batch = case["p"], case["n"], case["batch"]
        total = torch_total(n, p, case["drop_last"])
        gathered_per_epoch = [None] + case["speeds"]
        for epoch, record in enumerate(case["epochs"]):
            gathered = gathered_per_epoch[epoch]
            if gathered is None or case.get("synchronous"):
                want = [total // p] * p
            else:
                want = model_shares(total, gathered, case["min_share"], case["dead_band"])
            order = (np.random.RandomState(case["seed"] + epoch).permutation(n).tolist()
                     if case["shuffle"] else list(range(n)))
            order = pad_or_cut(order, total)
            start = 0
            for r in range(p):
                label = (case, epoch, r)
                assert record["shares"][r] == want and record["epoch"][r] == epoch, label
                assert record["len"][r] == -(-want[r] // batch), label
                share = order[start:start + want[r]]
                assert record["batches"][r] == [share[i:i + batch]
                                                for i in range(0, want[r], batch)], label
                start += want[r]
            assert record["x_matches_y"], case
            if "equal_steps_needed" in record:
                anyone = any(case.get("synchronous", [0]))
                assert record["equal_steps_needed"] == [anyone] * p, (case, epoch)
        assert len(case["epochs"]) == 3


# --- the step clock ----------------------------------------------------------------

class FakeTime:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def run_torch_epoch(clock_time, gaps, batch, sampler):
    """Plain torch.optim.SGD steps (the global step hooks feed the sampler's clock), the
    fake time advanced by each gap before a step; each step takes one batch of the
    sampler's share."""
    w = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w], lr=0.0)
    it = iter(sampler)
    for gap in gaps:
        clock_time.t += gap
        for _ in range(batch):
            next(it)
        w.grad = torch.zeros(1)
        opt.step()


@pytest.mark.parametrize("outliers", [0, 1, 4])
def test_step_clock_is_the_epochs_median_and_an_outlier_moves_no_share(outliers):
    """The throughput a sampler sends is samples / (cycles + 1) / the median cycle of
    the epoch, from PyTorch's optimizer step hooks: up to 4 cycles of 2 s among 12 of
    10 ms leave it (and so the shares) where 10 ms put it, the mean would not; the next
    epoch measures afresh (after a reset: its 40 ms cycles, not the 5 s pause at the
    boundary nor epoch 0's cycles)."""
    from horovod_wagma.torch import BalancedDistributedSampler
    from horovod_wagma.torch.step_hooks import step_clock
    now = FakeTime()
    clock = step_clock()
    saved = clock._now
    clock._now = now
    try:
        sampler = BalancedDistributedSampler(range(400), num_replicas=2, rank=0)
        sent = []

        def echo(row):
            sent.append(float(row[0][1]))
            other = row.copy()
            other[0, 1] = 500.0  # the other rank: 500 samples/s
            return np.concatenate([row, other])
        sampler._exchange._allgather = echo
        sampler.set_epoch(0)  # resets the clock; nothing measured yet
        gaps = [0.01] * 13
        for i in range(outliers):
            gaps[2 + 3 * i] = 2.0
        run_torch_epoch(now, gaps, 10, sampler)
        sampler.set_epoch(1)
        cycles = gaps[1:]
        assert clock.steps() == 0  # reset by the exchange
        assert sent[1] == pytest.approx(130 / 13 / statistics.median(cycles), rel=1e-9)
        assert sent[1] == pytest.approx(1000.0, rel=1e-9), sent
        assert statistics.mean(cycles) > 0.1 or outliers == 0
        # 1000 against 500 samples/s: 2 to 1, whatever the outliers.
        assert sampler.shares == model_shares(400, [1000.0, 500.0], 0.25, 0.1) == [267, 133]
        now.t += 5.0  # a pause at the epoch boundary
        run_torch_epoch(now, [0.04] * 13, 10, sampler)
        sampler.set_epoch(2)
        assert sent[2] == pytest.approx(250.0, rel=1e-9), sent
        assert sampler.shares == model_shares(400, [250.0, 500.0], 0.25, 0.1) == [133, 267]
    finally:
        clock._now = saved
        clock.reset()


def test_step_clock_median_of_even_and_odd_cycle_counts():
    """StepClock alone: the median (mean of the two middle cycles for an even count),
    cycles start to start, the first step after a reset starts a cycle and counts none,
    nested steps count once, a gradient-allreduce step's duration and a wait between
    steps are taken out."""
    from horovod_wagma.common.optimizer.step_clock import StepClock
    for cycles in ([0.01, 0.03], [0.05, 0.01, 0.02], [0.01, 0.01, 9.0, 0.02],
                   [0.3, 0.1, 0.2, 0.4, 7.0, 0.1]):
        now = FakeTime()
        clock = StepClock(now)
        clock.step_begin()
        clock.step_end()
        for c in cycles:
            now.t += c
            clock.step_begin()
            clock.step_begin()  # a wrapped optimizer's own step
            clock.step_end()
            clock.step_end()
        assert clock.steps() == len(cycles)
        assert clock.seconds_per_step() == pytest.approx(statistics.median(cycles))
        clock.reset()
        assert clock.steps() == 0 and clock.seconds_per_step() is None
        now.t += 3.0
        clock.step_begin()
        clock.step_end()
        assert clock.steps() == 0
    now = FakeTime()
    clock = StepClock(now)
    for work, wait, inside in ((0.01, 0.002, 0.5), (0.02, 0.0, 0.1), (0.03, 0.004, 0.2)):
        now.t += work + wait
        clock.add_wait(wait)
        clock.step_begin(waits_for_others=True)
        now.t += inside
        clock.step_end()
    # The cycles are the work between the allreduce steps: 0.02 and 0.03.
    assert clock.seconds_per_step() == pytest.approx(0.025) and clock.synchronous


@pytest.mark.ranks
@pytest.mark.tf
@pytest.mark.slow
def test_sequence_clock_is_the_epochs_median_and_resets(keras_launch):
    """BalancedSequence's cycle is the time between batch requests: 9 batches of 4,
    10 ms apart but one 2 s gap, send 36 / 9 / 0.01 = 400 samples/s; the next epoch,
    after a 5 s pause, 40 ms apart: 100 (only its own cycles). No WAGMA optimizer
    stepped between: equal steps needed."""
    clock = keras_launch.results("sequence")[0]["clock"]
    assert clock["sent"] == pytest.approx([400.0, 100.0], rel=1e-9), clock
    assert clock["equal_steps_needed"] is True
