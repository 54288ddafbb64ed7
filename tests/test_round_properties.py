"""Round properties (docs/semantics.md, docs/api.md, docs/elastic.md), checked by value
against tests/reference.py: every stateful call used once, twice and three times in
one run; the schedule's and the reductions' boundaries; each public function of
horovod_wagma.torch with its documented arguments away from their defaults.

tests/workers/round_properties.py runs the scenarios in the 3- and 4-rank resident
launches (and a 6-rank launch of its own for process sets of 5 and 3 ranks); the
elastic state's resets run in one process at size 1 (a child, like test_api_surface's).
"""
import json
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import resident
from conftest import run_scenarios
from horovod_wagma.common.op.schedule import groups as schedule_groups
from reference import GOSSIP_TOLERANCE, average_round, gossip_trajectory, is_global, phase_of

SCENARIOS = ["lockstep", "names", "join_generations", "optimizer_join", "sync_layouts",
             "optimizer_knobs", "wrappers"]
RESIDENT = {P: resident.item("round_properties.py", P, *SCENARIOS, timeout=240, last=True)
            for P in (3, 4)}
PS = [3, 4]


@pytest.fixture(scope="module")
def launches(transport):
    """P -> the scenarios of the P-rank resident launch."""
    return {P: RESIDENT[P].scenarios() for P in PS}


def groups(P, S):
    """hvd.groups(P, S) (the torch frontend's is this one, test_schedule checks)."""
    return schedule_groups(P, S)


# --- lockstep: the boundaries against the exact trajectory ----------------------------

def config_of(name):
    """The fields of a lockstep configuration's name (workers/round_properties.py)."""
    parts = name.split(".")
    # rp.<tag>.<i>.m<m>.S<S>.t<tau>.<dtype>.<mode>.<averaging>.n<n>.<form>
    return dict(m=int(parts[3][1:]), S=int(parts[4][1:]), tau=int(parts[5][1:]),
                dtype=parts[6], mode=parts[7], averaging=parts[8], n=int(parts[9][1:]),
                form=parts[10])


def check_lockstep(results, members_of):
    """Every configuration on every member: the exact trajectory within the dtype's
    tolerance, each async call served by its own round, the caller's tensor handed back
    by the in-place forms and left untouched by the others, the result's shape and
    dtype the input's. Returns the configurations seen."""
    seen = {}
    for rank, res in results.items():
        for name, got in res.items():
            c = config_of(name)
            seen[name] = c
            assert got["max_err"] <= GOSSIP_TOLERANCE[c["dtype"]], (rank, name, got)
            assert got["kept"], (rank, name, got)
            rounds = len(got["served"])
            if c["form"].startswith("async"):
                assert got["served"] == list(range(rounds)), (rank, name, got["served"])
    for name, c in seen.items():
        reporting = sorted(r for r, res in results.items() if name in res)
        assert reporting == members_of(name), (name, reporting)
    return seen


def check_coverage(seen, m):
    """The matrix holds what the docstring promises for a stream over m ranks."""
    pairs = {(c["averaging"], c["mode"]) for c in seen.values()}
    assert pairs == {(a, md) for a in ("fresh", "paper", "local", "delta")
                     for md in ("sync", "wa", "wag")}, pairs
    assert {c["tau"] for c in seen.values()} >= {1, 2, 5}
    assert {c["S"] for c in seen.values()} >= {2, 4, m, m + 1}
    assert {c["dtype"] for c in seen.values()} == set(GOSSIP_TOLERANCE)
    assert {c["form"] for c in seen.values()} == {
        f + pos for f in ("async", "async_", "blocking", "blocking_") for pos in ("", "-pos")}
    assert {0, 1, 2, 16384, 16385, 16386, 16387, 32769} <= {c["n"] for c in seen.values()}


@pytest.mark.ranks
def test_lockstep_matrix_matches_the_exact_trajectory(launches):
    """semantics.md: group rounds average within the rank's group of phase k mod L (P
    not a power of S included: a rank alone gets its own value back), global rounds
    every tau-th round, tau = 1 every round global; without stale contributions "fresh",
    "local" and "delta" give the group mean and "paper" (s + x)/(g + 1); wait-avoiding
    global rounds in lockstep give the blocking trajectory, each call served by its own
    round; S = P and S > P one group. api.md: float32, float64, float16, bfloat16; every
    op form with the knobs by keyword or by position; in-place forms return the caller's
    tensor. Sizes around the direct/scatter threshold (16384-16387 float32, 32768
    float16 / 32769 bfloat16, 8193 float64) and of 0, 1 and 2 elements."""
    for P in PS:
        results = launches[P].results("lockstep")
        seen = check_lockstep(results, lambda name: list(range(P)))
        check_coverage(seen, P)
        assert len(seen) == 36 + 7, len(seen)


@pytest.mark.ranks
@pytest.mark.gloo_heavy
def test_lockstep_matrix_over_process_sets_of_5_and_3_ranks(transport):
    """api.md: process_set: "groups are formed among its ranks": the matrix over a set
    of 5 ranks (S 2: five phases, each leaving a rank alone; S 4) and over ranks [1, 3,
    5] of a 6-rank job (the schedule over positions in the set, not world ranks), and
    over the 6-rank world with the global process set passed explicitly."""
    launch = run_scenarios("round_properties.py", 6, ["sets"], timeout=180)
    results = launch.results("sets")
    members = {"five": [0, 1, 2, 3, 4], "three": [1, 3, 5], "g": list(range(6))}
    seen = check_lockstep(results, lambda name: members[name.split(".")[1]])
    for tag, ranks in members.items():
        check_coverage({n: c for n, c in seen.items() if n.split(".")[1] == tag}, len(ranks))


# --- similar names --------------------------------------------------------------------

@pytest.mark.ranks
def test_streams_of_similar_names_are_separate(launches):
    """semantics.md: a stream is one name. Names one character apart ("rp.n", "rp.n2",
    "rp.n ", "rp.N", "rp.n\u00e9", "rp.n."), and two of 301 and 302 characters that
    share their first 301, interleaved: each stream's k-th call is its round k (round
    0 global: the mean over all ranks; tau 3, S 2), whatever ran on the others before."""
    for P in PS:
        results = launches[P].results("names")
        phases = groups(P, 2)
        streams = results[0]["streams"]
        assert len(set(streams)) == 8 and len(streams[6]) == 301, streams
        for name in streams:
            calls = [results[r]["calls"][name] for r in range(P)]
            assert len({len(c) for c in calls}) == 1, name
            for k in range(len(calls[0])):
                x = np.array([calls[r][k]["input"] for r in range(P)])
                want = average_round(x, k, phases, 3)
                for r in range(P):
                    assert calls[r][k]["round"] == k, (P, name, r, calls[r][k])
                    np.testing.assert_allclose(calls[r][k]["output"], want[r], rtol=0,
                                               atol=1e-12, err_msg=f"{P} {name!r} {r} {k}")
            for r in range(P):
                assert results[r]["rounds"][name] == len(calls[0]), (P, name, r)


# --- join() in generations ------------------------------------------------------------

def replay_generations(inputs, counts, phases, tau, size):
    """Expected outputs of rounds run in generations that each end in join():
    generation g starts at the round after the furthest any rank reached before; rank r
    runs counts[g][r] rounds with inputs[r][g][i]; a rank that has joined contributes
    its final model (its last expected output) to every later round it is in. Returns
    (expected[r][g] lists, the first round of each generation, the final models)."""
    expected = {r: [] for r in range(size)}
    final, starts, start = {}, [], 0
    for g, count in enumerate(counts):
        starts.append(start)
        for r in range(size):
            expected[r].append([])
        for i in range(max(count)):
            k = start + i
            value = {r: np.array(inputs[r][g][i]) if i < count[r] else final[r]
                     for r in range(size)}
            rnd = [list(range(size))] if is_global(k, tau) else \
                phases[phase_of(k, tau, len(phases))]
            for members in rnd:
                mean = sum(value[m] for m in members) / len(members)
                for m in members:
                    if i < count[m]:
                        expected[m][g].append(mean)
            for r in range(size):
                if i == count[r] - 1:
                    final[r] = expected[r][g][-1]
        start += max(count)
    return expected, starts, final


@pytest.mark.ranks
def test_join_in_three_generations_serves_final_models_and_returns_the_last_joiner(launches):
    """faults.md/api.md: join() serves every round with this rank's final model until
    every rank has joined, returns the last rank to join, and every rank goes on from
    the furthest round. Three generations on one stream: the last joiner rank 0 (the
    registrar itself), then the last rank, then rank 1 with rank 0 joining before any
    round of its own (its final model the previous generation's); join(device=-1)
    in the second. Every output exact, every call served by its round. Then a join
    whose last joiner (rank 1) is behind the furthest round: every rank goes on from
    the furthest."""
    for P in PS:
        res = launches[P].results("join_generations")
        counts, phases = res[0]["counts"], res[0]["phases"]
        inputs = {r: [g["inputs"] for g in res[r]["gens"]] for r in range(P)}
        expected, starts, final = replay_generations(inputs, counts, phases, 3, P)
        for r in range(P):
            for g, gen in enumerate(res[r]["gens"]):
                assert len(gen["outputs"]) == counts[g][r]
                np.testing.assert_allclose(np.array(gen["outputs"]).reshape(-1, 2),
                                           np.array(expected[r][g]).reshape(-1, 2),
                                           rtol=0, atol=1e-9, err_msg=f"P={P} r={r} g={g}")
                assert gen["served"] == list(range(starts[g], starts[g] + counts[g][r])), \
                    (P, r, g, gen["served"])
            assert [gen["last"] for gen in res[r]["gens"]] == [0, P - 1, 1], \
                (P, r, [gen["last"] for gen in res[r]["gens"]])
        # After the third join, one round on every rank: the round after the furthest.
        k = starts[-1] + max(counts[-1])
        x = np.array([res[r]["after"]["input"] for r in range(P)])
        want = average_round(x, k, phases, 3)
        for r in range(P):
            assert res[r]["after"]["round"] == k, (P, r, res[r]["after"])
            np.testing.assert_allclose(res[r]["after"]["output"], want[r], rtol=0, atol=1e-9)
        # The last joiner (rank 1, one round) behind the furthest round (4 or 5): every
        # rank goes on from the furthest (faults.md: "from the furthest round any rank
        # reached"), and every round before is exact, rank 1's final model in the
        # others' rounds.
        behind = {r: res[r]["behind"] for r in range(P)}
        counts = behind[0]["counts"]
        expected, _, _ = replay_generations({r: [behind[r]["inputs"]] for r in range(P)},
                                            [counts], phases, 100, P)
        for r in range(P):
            assert behind[r]["last"] == 1, (P, r, behind[r]["last"])
            assert behind[r]["served"] == list(range(counts[r])), (P, r, behind[r])
            np.testing.assert_allclose(np.array(behind[r]["outputs"]),
                                       np.array(expected[r][0]), rtol=0, atol=1e-12)
            assert behind[r]["after"]["round"] == max(counts), (P, r, behind[r]["after"])
        x = np.array([behind[r]["after"]["input"] for r in range(P)])
        want = average_round(x, max(counts), phases, 100)
        for r in range(P):
            np.testing.assert_allclose(behind[r]["after"]["output"], want[r], rtol=0,
                                       atol=1e-12)


@pytest.mark.ranks
def test_optimizer_join_twice_agrees_on_the_furthest_step(launches):
    """api.md: the optimizer's join() returns the last rank to join and, with blocking
    global rounds, sets every rank's step count to the furthest any rank reached; it
    can be called again in a later generation (the same Horovod name for the step
    agreement). Each step's model exact (S 2, tau 3), served rounds numbered on from
    the furthest step after each join, two more steps after the second."""
    for P in PS:
        res = launches[P].results("optimizer_join")
        counts, phases = res[0]["counts"], res[0]["phases"]
        inputs = {r: [g["inputs"] for g in res[r]["gens"]] for r in range(P)}
        expected, starts, _ = replay_generations(inputs, counts, phases, 3, P)
        ends = [starts[g] + max(counts[g]) for g in range(len(counts))]
        for r in range(P):
            for g, gen in enumerate(res[r]["gens"]):
                np.testing.assert_allclose(np.array(gen["outputs"]).reshape(-1, 3),
                                           np.array(expected[r][g]).reshape(-1, 3),
                                           rtol=0, atol=1e-9, err_msg=f"P={P} r={r} g={g}")
                assert gen["served"] == list(range(starts[g], starts[g] + counts[g][r]))
                assert gen["last"] == (0, P - 1)[g], (P, r, g, gen["last"])
                assert gen["steps"] == ends[g], (P, r, g, gen["steps"], ends)
            after = res[r]["after"]
            assert after["served"] == [ends[-1], ends[-1] + 1], (P, r, after["served"])
            assert res[r]["steps"] == ends[-1] + 2
        for i in range(2):
            x = np.array([res[r]["after"]["inputs"][i] for r in range(P)])
            want = average_round(x, ends[-1] + i, phases, 3)
            for r in range(P):
                np.testing.assert_allclose(res[r]["after"]["outputs"][i], want[r], rtol=0,
                                           atol=1e-9, err_msg=f"P={P} r={r} after {i}")


# --- sync() with several layouts ------------------------------------------------------

@pytest.mark.ranks
def test_sync_with_three_layouts_each_met_again_is_the_exact_mean(launches):
    """semantics.md/api.md: sync() averages the model (with its floating buffers, and
    the optimizer state) over all ranks; afterwards all models are identical. Five
    calls: before any state exists, with SGD's momentum, after the state was cleared
    (the first layout again), after add_param_group (a third), and that one again:
    each the exact mean of what every rank held (float32 and float64), the same bits
    everywhere, the integer buffer left alone; each layout its own streams (one per
    dtype), a layout met again going on with its stream."""
    for P in PS:
        res = launches[P].results("sync_layouts")
        for r in range(P):
            syncs = res[r]["syncs"]
            assert [len(s["after"]) for s in syncs] == [3, 5, 3, 4, 4], \
                [len(s["after"]) for s in syncs]
            for i, s in enumerate(syncs):
                assert s["identical"], (P, r, s["label"])
                for t, got in enumerate(s["after"]):
                    mean = np.mean([np.array(b[t]) for b in s["all_before"]], axis=0)
                    np.testing.assert_allclose(got, mean, rtol=2e-7, atol=2e-7,
                                               err_msg=f"P={P} r={r} {s['label']} {t}")
                    # Every rank had moved its tensors apart: sync() did move them.
                    assert not np.array_equal(np.array(got), np.array(s["before"][t]))
                assert s["count"] == 7 + r + i + 1, (P, r, s)
            assert res[r]["streams"] == {"forced0": 2, "forced1": 2, "forced.layout1.0": 1,
                                         "forced.layout1.1": 1, "forced.layout2.0": 2,
                                         "forced.layout2.1": 2}, res[r]["streams"]


# --- the optimizer's arguments --------------------------------------------------------

# Per case: S, tau, averaging and global_rounds the streams must have taken, and the
# model streams (fusion buckets) it makes.
OPTIMIZER_CASES = {
    "paper_S2_tau3_sync": (2, 3, "paper", "blocking", ["model0"]),
    "fresh_S2_tau2_wa_blocking": (2, 2, "fresh", "blocking", ["model0"]),
    "local_S4_tau5_wag": (4, 5, "local", "wait_avoiding", ["model0"]),
    "tau1_sync": (2, 1, "local", "blocking", ["model0"]),
    "init_group_size_2": (2, 4, "local", "blocking", ["model0"]),
    "num_groups_2": (2, 3, "local", "blocking", ["model0", "model1"]),
    "groups_v_alone": (2, 3, "local", "blocking", ["model0", "model1"]),
    "paper_S3_wag": (3, 3, "paper", "wait_avoiding", ["model0"]),
}


@pytest.mark.ranks
def test_optimizer_arguments_take_effect_step_by_step(launches):
    """api.md: DistributedWagmaOptimizer's group_size, sync_period, averaging,
    wait_avoiding, global_rounds, named_buffers, num_groups and groups, and init()'s
    group_size where the optimizer names none: eight steps each, every step's model the
    exact reference round of the rank's input (its model after the local SGD step:
    plain mean, or "paper"'s (s + x)/(g + 1) at group rounds; S > P: one group);
    wagma_status() reports the knobs; the floating buffer is the exact mean after each
    global round's duties and the rank's own after group rounds (blocking global
    rounds: the duties wait for nobody otherwise), the integer buffer never averaged;
    num_groups=2 and groups=[[v]] make two model streams, one round per step each."""
    for P in PS:
        res = launches[P].results("optimizer_knobs")
        assert set(res[0]) == set(OPTIMIZER_CASES)
        for case, (S, tau, averaging, global_rounds, models) in OPTIMIZER_CASES.items():
            phases = groups(P, S)
            runs = {r: res[r][case] for r in range(P)}
            for k in range(8):
                x = np.array([runs[r]["steps"][k]["input"] for r in range(P)])
                want = average_round(x, k, phases, tau, averaging)
                stat = np.array([runs[r]["steps"][k]["stat_before"] for r in range(P)])
                for r in range(P):
                    step = runs[r]["steps"][k]
                    np.testing.assert_allclose(step["output"], want[r], rtol=0, atol=1e-12,
                                               err_msg=f"P={P} {case} r={r} step {k}")
                    assert step["served"] == k, (P, case, r, step["served"])
                    assert step["ticks"] == 10 * r + k + 1, (P, case, r, step)
                    if global_rounds == "blocking":
                        stat_want = stat.mean(axis=0) if is_global(k, tau) else stat[r]
                        np.testing.assert_allclose(step["stat_after"], stat_want, rtol=0,
                                                   atol=1e-12,
                                                   err_msg=f"P={P} {case} r={r} stat {k}")
            duties = sum(is_global(k, tau) for k in range(8))
            for r in range(P):
                status = runs[r]["status"]
                assert status == dict(sync_period=tau, global_rounds=global_rounds,
                                      group_size=S, steps=8), (P, case, status)
                streams = runs[r]["streams"]
                assert {n for n in streams if n.startswith("model")} == set(models), streams
                assert all(streams[n] == 8 for n in models), (P, case, streams)
                assert streams.get("sync0") == duties, (P, case, streams, duties)


# --- the op's wrappers ----------------------------------------------------------------

def x0s(res, P, key):
    return np.array([res[r][key]["x0"] for r in range(P)])


@pytest.mark.ranks
def test_init_knobs_are_every_streams_defaults_and_calls_override_them(launches):
    """api.md: init()'s knobs are the defaults of every stream; a call's knobs override
    them (None keeps them). init(group_size=P, sync_period=2, averaging="paper"): a call
    naming none follows all three (one group of every rank, (s + x)/(g + 1) at group
    rounds 2 and 4); a call naming group_size 2, sync_period 3 and "fresh" follows its
    own. init(wait_avoiding=False): no passive join for a rank 50 ms late into every
    round, and passive joins once the call says wait_avoiding=True; init(sync_period=1,
    global_rounds="wait_avoiding"): global rounds joined passively for the late rank,
    none once the call says "blocking"; under init()'s own defaults, a call's
    wait_avoiding=False and global_rounds="wait_avoiding" take effect the same way."""
    for P in PS:
        res = launches[P].results("wrappers")
        cases = {
            "init_knobs": (groups(P, P), 2, "paper", 6),
            "call_overrides": (groups(P, 2), 3, "fresh", 6),
            "init_no_wait_avoiding": (groups(P, None), 50, "fresh", 4),
            "call_wait_avoiding": (groups(P, None), 50, "fresh", 4),
            "init_wa_global": (groups(P, None), 1, "fresh", 4),
            "call_blocking_global": (groups(P, None), 1, "fresh", 4),
            "call_no_wait_avoiding": (groups(P, None), 50, "fresh", 4),
            "call_wa_global": (groups(P, None), 1, "fresh", 4),
        }
        for key, (phases, tau, averaging, rounds) in cases.items():
            want = gossip_trajectory(x0s(res, P, key), phases, tau, rounds, averaging)
            for r in range(P):
                got = res[r][key]
                np.testing.assert_allclose(np.array(got["outputs"]), np.array(want)[:, r],
                                           rtol=0, atol=1e-12, err_msg=f"P={P} {key} r={r}")
                assert got["served"] == list(range(rounds)), (P, key, r, got["served"])
        joins = {key: [res[r][key]["passive_joins"] for r in range(P)] for key in cases}
        for key in ("init_no_wait_avoiding", "call_blocking_global", "call_no_wait_avoiding"):
            assert joins[key] == [0] * P, (P, key, joins[key])
        for key in ("call_wait_avoiding", "init_wa_global", "call_wa_global"):
            assert joins[key][P - 1] >= 1, (P, key, joins[key])


@pytest.mark.ranks
def test_handles_stats_and_the_schedules_functions(launches, transport):
    """api.md: a handle's round is set by synchronize (round 0 here), synchronize twice
    returns the same tensor and poll stays True; async + synchronize equals the
    blocking call bit for bit, round after round; stats(name) is that stream's entry of
    stats(), an unknown name a ValueError naming it; groups(P, S) honours S (S >= P: one
    group); default_group_size and optimizer_group_size; membership_changes() is empty
    outside elastic; group_process_set(phase) is this rank's group of every phase (on
    MPI: registered by init; on Gloo without dynamic sets: a WagmaError)."""
    for P in PS:
        res = launches[P].results("wrappers")
        for r in range(P):
            out = res[r]
            assert out["handle"] == dict(same_object=True, round=0, polled=True), out["handle"]
            assert out["async_equals_blocking"] == [True] * 5, out["async_equals_blocking"]
            st = out["stats"]
            assert st["one_rounds"] == 5 and st["same_keys"] and st["has_both"], st
            assert st["unknown"] and "rp.w.never" in st["unknown"], st
            assert out["membership_changes"] == []
            for s, phases in out["groups"].items():
                s = int(s)
                for phase in phases:
                    assert sorted(sum(phase, [])) == list(range(P)), (s, phases)
                    assert max(len(g) for g in phase) <= s, (s, phases)
                if s >= P:
                    assert phases == [[list(range(P))]], (s, phases)
            assert max(len(g) for ph in out["groups"]["2"] for g in ph) == 2
            assert out["default_group_size"] == 2 and out["optimizer_group_size"] == P
            ps = out["group_process_sets"]
            assert ps["phases"] == groups(P, 2)
            for phase, got in zip(ps["phases"], ps["sets"]):
                mine = next(g for g in phase if r in g)
                if transport == "gloo":
                    assert got["error"].startswith("WagmaError: the WAGMA groups are not "
                                                   "registered"), got
                    continue
                assert got["ranks"] == mine and got["sum"] == float(sum(mine)), (P, r, got)
                assert got["is_global"] is (len(mine) == P), got


# --- elastic: the PyTorch state reset twice, in one process ---------------------------

ELASTIC_CHILD = r"""
import json
import torch
import horovod_wagma.torch as hvd
from horovod_wagma.torch.elastic import WagmaState

hvd.init()
out = {}
for mode in ("blocking", "wait_avoiding"):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = hvd.DistributedWagmaOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        named_parameters=model.named_parameters(), sync_period=4, global_rounds=mode,
        drift_correction=0.0)
    state = WagmaState(model, opt, step=0)
    def steps(n):
        for _ in range(n):
            opt.zero_grad()
            model(torch.ones(2, 3)).sum().backward()
            opt.step()
        s = opt.wagma_status()
        stats = hvd.stats()
        return dict(steps=s.steps, served=s.served_round,
                    model=stats[s.stream()]["rounds"],
                    global_=stats[s.stream()]["global_rounds"],
                    duties=stats[s.stream("sync")]["rounds"])
    log = [steps(6)]
    for n in (5, 2):
        state.reset()
        log.append(dict(steps=opt.wagma_status().steps,
                        served=opt.wagma_status().served_round))
        log.append(steps(n))
    out[mode] = log
print("RESULT=" + json.dumps(out))
"""


def test_the_torch_state_reset_twice_rebases_the_rounds_and_never_the_steps():
    """README/elastic.md: after a reset the engine restarts over the new member set,
    whose rounds start at 0, and no step counter goes back. PyTorch's WagmaState reset
    twice, one process (size 1): 6 steps, reset, 5 steps, reset, 2 steps; after each
    reset the step count is kept and no round served yet (-1); the new engine's stream
    counts its own rounds (5, then 2; global ones 0 and 3, then 0), the duties run at
    its global rounds (tau 4), the steps go on (11, 13), with blocking and with
    wait-avoiding global rounds."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1", PYTHONUNBUFFERED="1")
    for var in ("HOROVOD_ELASTIC", "HOROVOD_DYNAMIC_PROCESS_SETS", "WAGMA_TIMELINE"):
        env.pop(var, None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(ELASTIC_CHILD)],
                          capture_output=True, text=True, timeout=240, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT=")]
    assert done.returncode == 0 and lines, (done.stdout[-3000:], done.stderr[-5000:])
    res = json.loads(lines[-1][len("RESULT="):])
    for mode in ("blocking", "wait_avoiding"):
        assert res[mode] == [
            dict(steps=6, served=5, model=6, global_=2, duties=2),
            dict(steps=6, served=-1),
            dict(steps=11, served=4, model=5, global_=2, duties=2),
            dict(steps=11, served=-1),
            dict(steps=13, served=1, model=2, global_=1, duties=1),
        ], (mode, res[mode])


class ElasticJob:
    """hvd for Membership.agree() and ElasticStateCore.sync() in one process: this
    process is `rank` of a member set whose gathered infos are `infos` (agree's
    allgather) and whose survivor flags are `survivors` (sync's); broadcast_object hands
    back `counters[root]`."""

    def __init__(self, rank, infos, survivors, counters):
        self._rank, self.infos, self.survivors, self.counters = rank, infos, survivors, counters
        self.broadcasts = []

    def rank(self):
        return self._rank

    def allgather_object(self, obj, name=None):
        gathered = list(self.survivors if name.endswith(".survivors") else self.infos)
        assert obj == gathered[self._rank], (name, obj, gathered[self._rank])
        return gathered

    def broadcast_object(self, obj, root_rank=0, name=None):
        self.broadcasts.append(root_rank)
        return dict(self.counters[root_rank])


def test_two_resets_judge_each_change_against_the_member_set_before_it(monkeypatch):
    """elastic.md/README: membership_changes() gives each change's new size, ranks lost
    (their ranks in the previous member set) and added; joiners take the survivors'
    average and the lowest-ranked survivor's counters. Three member sets in one process,
    through the same Membership and state as a survivor sees them: generation 1 (the
    start: Horovod's broadcast from rank 0), generation 2 (h3 lost, h4 joins: lost [3],
    added [3]), generation 3 (h1 lost, h5 joins): judged against generation 2's members
    (lost [1], added [3]), not generation 1's, which the second sync replaced."""
    from horovod_wagma.common.elastic import membership
    from horovod_wagma.common.elastic.elastic_state import ElasticStateCore
    fresh = membership.Membership()
    monkeypatch.setattr(membership, "MEMBERSHIP", fresh)

    class State(ElasticStateCore):
        def __init__(self, hvd, **counters):
            self.optimizer, self.averaged, self.broadcast_from = None, [], []
            super().__init__(hvd, basics=types.SimpleNamespace(ensure_started=lambda: None),
                             **counters)

        def _average_model(self, weight, survivors):
            self.averaged.append((weight, survivors))

        def _broadcast_model(self, root_rank):
            self.broadcast_from.append(root_rank)

    h = {i: (f"h{i}", 100 + i) for i in range(6)}

    def info(ident, generation, replica, members):
        return {"id": ident, "generation": generation, "replica": replica,
                "members": members}

    # Generation 1: four ranks start; this process is h0, rank 0.
    gen1 = [h[i] for i in range(4)]
    monkeypatch.setattr(membership.Membership, "identity", staticmethod(lambda: h[0]))
    job = ElasticJob(0, [info(i, 0, 0, []) for i in gen1], [False] * 4,
                     {0: {"step": 0}})
    assert fresh.agree(job) == "gen1.4."
    state = State(job, step=0)
    state.sync()
    assert state.broadcast_from == [0] and fresh.changes == []
    state.step = 30
    # Generation 2: h3 lost, h4 added (rank 3).
    gen2 = [h[0], h[1], h[2], h[4]]
    job = ElasticJob(0, [info(i, 1, 1, gen1) for i in gen2[:3]] + [info(h[4], 0, 0, [])],
                     [True, True, True, False], {0: {"step": 30}})
    assert fresh.agree(job) == "gen2.4."
    state._hvd = job
    state.sync()
    assert state.averaged == [(1.0, 3)] and state.step == 30
    state.step = 55
    # Generation 3: h1 (generation 2's rank 1) lost, h5 added; the others hold
    # generation 2's replica.
    gen3 = [h[0], h[2], h[4], h[5]]
    job = ElasticJob(0, [info(i, 2, 2, gen2) for i in gen3[:3]] + [info(h[5], 0, 0, [])],
                     [True, True, True, False], {0: {"step": 55}})
    assert fresh.agree(job) == "gen3.4."
    state._hvd = job
    state.sync()
    assert state.averaged == [(1.0, 3), (1.0, 3)] and state.step == 55
    changes = membership.membership_changes()
    assert [(c["generation"], c["size"], c["lost"], c["added"]) for c in changes] == [
        (2, 4, [3], [3]), (3, 4, [1], [3])], changes
    assert fresh.replica_generation == 3 and fresh.replica_members == gen3
