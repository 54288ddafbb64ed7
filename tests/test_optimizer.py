"""DistributedWagmaOptimizer (multi-rank, through mpirun). The scenarios share one
4-rank launch (workers/optimizer_checks.py); the process-set one starts the engine
differently and has its own."""
import numpy as np
import pytest

import resident
from horovod_wagma.common.op.schedule import groups
from reference import average_round, is_global

pytestmark = pytest.mark.ranks

SCENARIOS = ["identical_after_global", "lr0", "passes", "fp16", "fp16_values", "state_values",
             "state_after_sync_first_and_reload", "hooks", "fusion_groups", "drift_groups",
             "bad_args", "drift", "wa_lr0", "wa_straggler_join"]  # the one that calls join() runs last


RESIDENT = resident.item("optimizer_checks.py", 4, *SCENARIOS, timeout=420)


@pytest.fixture(scope="module")
def checks(transport):
    return RESIDENT.scenarios()


def test_models_identical_after_every_global_round(checks):
    results = checks.results("identical_after_global")
    for res in results.values():
        assert res["identical"] == [True] * 5  # global rounds 0, 2, 5, 8, 11 of 12 steps
        assert res["bn_identical"]  # named_buffers averaged at global rounds
        assert res["differ_after_group_round"]
        assert res["identical_after_sync"]


def test_lr0_converges_to_average_of_initial_models(checks):
    results = checks.results("lr0")
    for res in results.values():
        assert max(res["errors"]) < 1e-6, res["errors"]


def test_backward_passes_per_step(checks):
    results = checks.results("passes")
    for res in results.values():
        assert res["rounds"] == 8  # one averaging round per real step, not per pass
        assert res["stream_rounds"] == 8, res  # the model stream's own count: step k, round k
        assert res["identical"] == [True, True, True]  # steps 0, 3, 7
        # api.md: wagma_status() through PyTorch; with blocking global rounds the round
        # that served the last step is steps - 1.
        assert res["status"] == {"sync_period": 4, "global_rounds": "blocking",
                                 "served_round": 7}, res["status"]


def test_fp16_compression_halves_traffic(checks):
    results = checks.results("fp16")
    for res in results.values():
        assert res["fp16"]["identical"] == res["none"]["identical"] == [True, True, True]
        assert res["fp16"]["bytes"] * 2 == res["none"]["bytes"], res
        # api.md: sparse_as_dense does nothing (no gradient is allreduced): the same
        # bytes as without compression, not fp16's.
        assert res["sparse"]["bytes"] == res["none"]["bytes"], res
        assert res["sparse"]["identical"] == [True, True, True], res


def test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds(checks):
    """Steps 0 and 3 and 7 are global (tau 4): the model becomes the fp16 average; at
    the others it keeps its own full-precision residual, x + (avg16 - fp16(x)), which
    differs from the average itself."""
    for res in checks.results("fp16_values").values():
        assert res["exact"] == [True] * 8, res
        assert res["residual_kept"] == [True] * 5, res


def test_optimizer_state_averaging_modes_and_sync(checks):
    """average_optimizer_state, value by value (P=4, S=2, tau=100: round 0 global, then
    group rounds that wait for every member). m_local is each rank's momentum after its
    own SGD step: "always" averages it in every round (the exact group mean of
    reference.average_round, global at round 0); "on_sync" only at global rounds
    (round 0); "never" in none. sync() averages it over all ranks exactly unless
    "never", which leaves it untouched; "quasi_global"'s rebuilt momentum is state
    too, averaged by sync(). "never" still averages named_buffers at global rounds;
    Adam's two moments are averaged at the global round and by sync()."""
    results = checks.results("state_values")
    phases = groups(4, 2)
    for mode in ("always", "on_sync", "never"):
        local = np.array([results[r][mode]["local"] for r in range(4)])  # (P, step, n)
        after = np.array([results[r][mode]["after"] for r in range(4)])
        for step in range(4):
            averaged = mode == "always" or (mode == "on_sync" and step == 0)
            want = average_round(local[:, step], step, phases, 100) if averaged \
                else local[:, step]
            err = np.abs(after[:, step] - want).max()
            assert err < 1e-5, (mode, step, err)
        # The group mean is far from each rank's own momentum: the check can fail.
        assert np.abs(average_round(local[:, 1], 1, phases, 100) - local[:, 1]).max() > 1e-2
        before = np.array([results[r][mode]["before_sync"] for r in range(4)])
        synced = np.array([results[r][mode]["after_sync"] for r in range(4)])
        if mode == "never":
            assert np.array_equal(synced, before), mode
        else:
            assert np.abs(synced - before.mean(axis=0)).max() < 1e-6, mode
            assert all(np.array_equal(synced[r], synced[0]) for r in range(4)), mode
        assert np.abs(before - before.mean(axis=0)).max() > 1e-2, mode  # ranks differed
    # "quasi_global" keeps state (its rebuilt momentum): sync() averages it too, since
    # only "never" leaves the state out (api.md).
    before = np.array([results[r]["quasi_global"]["before_sync"] for r in range(4)])
    synced = np.array([results[r]["quasi_global"]["after_sync"] for r in range(4)])
    assert np.abs(before - before.mean(axis=0)).max() > 1e-4  # ranks differed
    assert np.abs(synced - before.mean(axis=0)).max() < 1e-5
    assert all(np.array_equal(synced[r], synced[0]) for r in range(4))
    # "never" keeps the state local but not the named_buffers (api.md: averaged at
    # global rounds): the BatchNorm running mean after round 0 (global) is the exact
    # mean of the ranks' own, the same bits everywhere; after the group rounds 1-3 it
    # is each rank's own, untouched.
    bn_own = np.array([results[r]["never"]["bn_own"] for r in range(4)])  # (P, step, 16)
    bn_after = np.array([results[r]["never"]["bn_after"] for r in range(4)])
    assert np.abs(bn_own[:, 0] - bn_own[:, 0].mean(axis=0)).max() > 1e-3  # ranks differed
    assert np.abs(bn_after[:, 0] - bn_own[:, 0].mean(axis=0)).max() < 1e-6
    assert all(np.array_equal(bn_after[r, 0], bn_after[0, 0]) for r in range(4))
    assert np.array_equal(bn_after[:, 1:], bn_own[:, 1:])
    # Adam (on_sync, the default) at the rounds: both moments (Adam keeps two state
    # tensors per parameter) are averaged at the global round 0, exp_avg_sq included,
    # and stay local at the group round 1. Torch's Adam from zero moments: exp_avg =
    # (1 - b1) g, exp_avg_sq = (1 - b2) g^2, then m <- b m + (1 - b) g' per step; with
    # second_moment="group" (the Adam default) exp_avg_sq's g^2 is the round's mean
    # gradient's: the world's at round 0, the pair's at round 1.
    b1, b2 = 0.9, 0.999
    g = np.array([results[r]["adam"]["grads"] for r in range(4)])  # (P, step, n)
    got = {key: np.array([[results[r]["adam"]["moments"][s][key] for s in range(2)]
                          for r in range(4)]) for key in ("exp_avg", "exp_avg_sq")}
    own0 = {"exp_avg": (1 - b1) * g[:, 0], "exp_avg_sq": (1 - b2) * g[:, 0] ** 2}
    want0 = {"exp_avg": own0["exp_avg"].mean(axis=0),
             "exp_avg_sq": (1 - b2) * g[:, 0].mean(axis=0) ** 2}
    for key, own in own0.items():
        scale = np.abs(own).max()
        assert np.abs(own - own.mean(axis=0)).max() > 1e-2 * scale, key  # ranks differed
        err = np.abs(got[key][:, 0] - want0[key]).max()
        assert err <= 1e-5 * scale, (key, err, scale)
        assert all(np.array_equal(got[key][r, 0], got[key][0, 0]) for r in range(4)), key
    want1 = {"exp_avg": b1 * got["exp_avg"][:, 0] + (1 - b1) * g[:, 1],
             "exp_avg_sq": b2 * got["exp_avg_sq"][:, 0]
             + (1 - b2) * average_round(g[:, 1], 1, phases, 100) ** 2}
    for key, want in want1.items():
        scale = np.abs(want).max()
        err = np.abs(got[key][:, 1] - want).max()
        assert err <= 1e-5 * scale, (key, err, scale)
    # Adam (on_sync, the default): sync() averages both moments, exp_avg_sq included.
    for key in ("exp_avg", "exp_avg_sq"):
        before = np.array([results[r]["adam"]["before_sync"][key] for r in range(4)])
        synced = np.array([results[r]["adam"]["after_sync"][key] for r in range(4)])
        # Relative to the moment's scale (exp_avg_sq is ~g² / 1000 after 3 steps): the
        # ranks' moments differ by a good part of it, float32's averaging by 1e-7 of it.
        scale = np.abs(before).max()
        assert np.abs(before - before.mean(axis=0)).max() > 1e-2 * scale, key
        err = np.abs(synced - before.mean(axis=0)).max()
        assert err <= 1e-4 * scale, (key, err, scale)
        assert all(np.array_equal(synced[r], synced[0]) for r in range(4)), key


def test_state_averaged_after_a_sync_before_the_first_step_and_after_load_state_dict(checks):
    """api.md: sync() averages "the model (and buffers, and state unless never)", and
    the state modes act at their rounds, whenever the state's tensors were made. A
    sync() before the first step (no state yet) must not freeze the averaged tensors
    to the model alone; load_state_dict() (a checkpoint's copy) replaces the state's
    tensors, and the rounds after it must average the new ones."""
    results = checks.results("state_after_sync_first_and_reload")
    first = {r: results[r]["sync_first"] for r in range(4)}
    # on_sync: the global round 0 averages the momentum (SGD's buffer starts at g).
    g0 = np.array([first[r]["grads"][0] for r in range(4)])
    after0 = np.array([first[r]["after"][0] for r in range(4)])
    assert np.abs(g0 - g0.mean(axis=0)).max() > 1e-2  # ranks differed
    assert np.abs(after0 - g0.mean(axis=0)).max() < 1e-6
    before = np.array([first[r]["before_sync"] for r in range(4)])
    synced = np.array([first[r]["after_sync"] for r in range(4)])
    assert np.abs(before - before.mean(axis=0)).max() > 1e-2  # round 1 left it local
    assert np.abs(synced - before.mean(axis=0)).max() < 1e-6
    assert all(first[r]["c_count"] == first[r]["n_params"] > 0 for r in range(4))
    # always, reloaded before step 2: the group round 2 averages the loaded momentum.
    phases = groups(4, 2)
    local = np.array([results[r]["reload"]["local"] for r in range(4)])
    after = np.array([results[r]["reload"]["after"] for r in range(4)])
    for step in range(4):
        err = np.abs(after[:, step] - average_round(local[:, step], step, phases, 100)).max()
        assert err < 1e-5, (step, err)
    assert np.abs(average_round(local[:, 2], 2, phases, 100) - local[:, 2]).max() > 1e-2
    before = np.array([results[r]["reload"]["before_sync"] for r in range(4)])
    synced = np.array([results[r]["reload"]["after_sync"] for r in range(4)])
    assert np.abs(before - before.mean(axis=0)).max() > 1e-2
    assert np.abs(synced - before.mean(axis=0)).max() < 1e-6


def test_groups_and_num_groups_only_split_the_fusion_buffers(checks):
    """api.md: groups / num_groups only split the fusion buffers, an int K into K
    contiguous buckets, a list of lists into those buckets and every other parameter
    alone; one stream per buffer. Net has 6 float32 parameters: num_groups=2 gives
    streams model0, model1; groups=[[fc2.weight, fc1.weight]] gives that bucket and 4
    single ones, model0..model4. The models are those of one bucket (same rounds,
    deterministic values; only the engine's summation order may differ)."""
    for rank, res in checks.results("fusion_groups").items():
        assert res["default"]["streams"] == ["model0"], (rank, res["default"]["streams"])
        assert res["num_groups"]["streams"] == ["model0", "model1"], (rank, res)
        assert res["groups"]["streams"] == [f"model{i}" for i in range(5)], (rank, res)
        base = np.array(res["default"]["model"])
        for variant in ("num_groups", "groups"):
            err = np.abs(np.array(res[variant]["model"]) - base).max()
            assert err < 1e-5, (rank, variant, err)


def test_drift_correction_default_alpha_per_group_scale_and_adam(checks):
    """api.md: drift_correction=None is 0.25 where the optimizer keeps a first moment
    (SGD with momentum, the Adam family) and the state is on_sync; at each global round
    c_i += alpha k (mean_j m_j - m_i), k per parameter group (design.md: (1 - beta) /
    (1 - dampening) for SGD's momentum buffer, 1 for Adam's exp_avg), the ranks'
    variates summing to zero; c_i is added to the gradients of every later step.
    workers/optimizer_checks.py drift_groups: rank i's first gradient is -a_i, so after
    round 0 c_i = 0.25 k (a_i - mean a), exactly (float64)."""
    results = checks.results("drift_groups")
    a = np.array([results[r]["a"] for r in range(4)])
    bias = a - a.mean(axis=0)  # (P, 10): w's 6, then v's 4
    assert np.abs(bias).max() > 0.5
    # c_i / (alpha bias_i) per parameter: SGD's k (m_i = g_i); Adam's k = 1 times
    # exp_avg's 0.1 (m_i = 0.1 g_i).
    for run, k_w, k_v in (("sgd", 0.1, 0.5 / 0.8), ("adam", 0.1, 0.1)):
        c = np.array([np.concatenate(results[r][run]["c"]) for r in range(4)])
        for r in range(4):
            assert results[r][run]["alpha"] == 0.25, (run, results[r][run]["alpha"])
            want = 0.25 * np.concatenate([k_w * bias[r, :6], k_v * bias[r, 6:]])
            np.testing.assert_allclose(c[r], want, rtol=0, atol=1e-12, err_msg=f"{run} {r}")
        assert np.abs(c.sum(axis=0)).max() < 1e-12, run
    # SGD, step 1 (a group round: the momentum stays local): the buffer, averaged at
    # round 0 to -mean(a), takes the gradient plus c_i; the model after round 0 is
    # 0.05 * mean(a) everywhere (lr 0.05, first buffer -a_i, a global mean).
    for r in range(4):
        g1 = 0.05 * a.mean(axis=0) - a[r] + np.concatenate(results[r]["sgd"]["c"])
        want_w = 0.9 * -a.mean(axis=0)[:6] + g1[:6]
        want_v = 0.5 * -a.mean(axis=0)[6:] + 0.8 * g1[6:]
        m1 = results[r]["sgd"]["m1"]
        np.testing.assert_allclose(m1[0], want_w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(m1[1], want_v, rtol=0, atol=1e-12)


def test_process_set_subset(mpi):
    run = mpi("optimizer_checks.py", 4, "process_set", timeout=180)
    assert run.results[0]["subset_identical"]
    assert run.results[3]["outsider_untouched"] is True
    # group_size=None on a set: the optimizers' default for the set's 3 ranks, every
    # rank (api.md: every rank up to 8), not the world's 4.
    assert [run.results[r]["default_S"] for r in range(4)] == [3, 3, 3, None], run.results


def test_horovod_hooks_and_state(checks):
    results = checks.results("hooks")
    for res in results.values():
        assert res["broadcast_identical"] and res["has_momentum"]
        assert res["param_groups"] == 1 and res["class_name"] == "SGD"
        assert res["default_S"] == 4 and res["named_S"] == 2   # P=4: the op's default is 2
        assert res.get("skip_synchronize_raises") == "'raised inside skip_synchronize'", res


def test_bad_arguments(checks):
    results = checks.results("bad_args")
    for res in results.values():
        assert res["adasum"].startswith("ValueError") and "Adasum" in res["adasum"]
        assert res["sum"].startswith("ValueError") and "Average" in res["sum"]
        assert res["passes"].startswith("ValueError")
        assert res["state"].startswith("ValueError") and "average_optimizer_state" in res["state"]
        assert "quasi_global" in res["state"]  # the message lists every choice
        for key in ("group_size", "sync_period", "averaging", "global_rounds",
                    "max_staleness"):
            assert res[key].startswith("ValueError") and key in res[key], res[key]
        assert res["wa_needs_wa_groups"].startswith("ValueError")
        assert "wait_avoiding=True" in res["wa_needs_wa_groups"]
        assert res["dup_names"].startswith("ValueError") and "unique" in res["dup_names"]
        for key in ("drift_range", "drift_state", "drift_no_moment",
                    "drift_adagrad"):
            assert res[key].startswith("ValueError") and "drift_correction" in res[key], res
        assert "[0, 1]" in res["drift_range"] and "'never'" in res["drift_state"]
        assert "momentum" in res["drift_no_moment"] and "Adagrad" in res["drift_adagrad"]
        assert res["predivide"].startswith("warning") and "no effect" in res["predivide"]
        assert res["positional"] is None


def test_drift_correction_removes_a_non_iid_bias(checks):
    """Each rank's quadratic pulls it to its own a_i: without drift correction the ranks'
    models stay apart from the optimum mean(a) between global rounds; with it each
    control variate learns a_i - mean(a) (summing to zero over ranks) and every model
    sits at the optimum. With blocking global rounds exactly; with the default
    wait-avoiding ones, where random delays make engines serve many state rounds with
    published state, to within 5e-3 after 400 steps (measured 2e-6..3e-6 there, under
    two busy-looping processes as on an idle host; at 300 steps about 1e-4, and 5.2e-3
    once in CI; the variates' own round average once subtracted there left errors of
    3-4)."""
    results = checks.results("drift")
    for res in results.values():
        assert res["off"]["far"] > 0.1, res
        assert res["on"]["far"] < 1e-3 and res["on"]["c_error"] < 1e-3, res
        assert res["on"]["c_sum"] < 1e-9, res
        assert res["wa_off"]["far"] > 0.5, res
        assert res["wa_on"]["far"] < 5e-3 and res["wa_on"]["c_error"] < 5e-3, res
        assert res["wa_on"]["c_sum"] < 5e-3, res
        assert res["wa_passive"] > 0, res  # the rounds that once misled the variates


def test_wait_avoiding_global_rounds_lockstep_equals_blocking(checks):
    """lr=0 (input = previous output), ranks in step: the wait-avoiding mode's model
    trajectory is bit-identical to the blocking mode's, passive joins included."""
    results = checks.results("wa_lr0")
    for res in results.values():
        assert res["same_trajectory"]
        assert res["blocking_round"] == res["wait_avoiding_round"] == 10
    assert sum(r["passive_joins"] for r in results.values()) > 0


def test_wait_avoiding_global_rounds_straggler_and_join(checks):
    """An 8x slower rank with a quarter of the steps: it skips rounds (its step counter
    still counts its own steps), global-round duties and the fp16 rule follow the
    served rounds, and join() ends every rank although their step counts differ 4x;
    training then goes on from the newest round, and a second sync() gives one model."""
    results = checks.results("wa_straggler_join")
    slow = results[3]
    assert slow["own_steps"] == 6
    assert slow["skipped"] > 0 and slow["served"][-1] > 6, slow["served"]
    assert slow["sync_rounds"] > 0  # on_sync state/buffer averaging ran on the slow rank
    for rank, res in results.items():
        assert res["identical_after_sync"] and res["bn_identical_after_sync"]
        assert res["age_max"] <= 4  # max_staleness defaults to sync_period
        # semantics.md: the duties run at every step since whose last one any served
        # or skipped round was global: one round of the state's stream each, on every
        # rank (the slow one skips global rounds that were not the ones serving it).
        prev, due = -1, 0
        for served in res["served"]:
            due += any(is_global(r, 4) for r in range(prev + 1, served + 1))
            prev = served
        assert res["sync_rounds"] == due, (rank, res["served"], res["sync_rounds"])
        if rank != 3:
            assert res["own_steps"] == 24
        # The fp16 rule follows the round that served each step (semantics.md: "the
        # duties of global rounds (..., the fp16 rule)" by the served rounds): the
        # model is exactly fp16 values (x <- avg16) after the steps served by a global
        # round, and keeps its fp32 residual after the others.
        assert res["fp16_exact"] == [is_global(s, 4) for s in res["served"]], (
            rank, res["served"], res["fp16_exact"])
    # Training after join() (faults.md: with wait-avoiding global rounds each rank keeps
    # its own step count and the rounds continue from the newest): every rank's next 4
    # steps, taken in step, are served by the 4 rounds after the furthest any app had
    # reached, on every rank, whatever its own count; their duties and the fp16 rule
    # follow those rounds; sync() again gives one model.
    newest = max(res["served"][-1] for res in results.values())
    for rank, res in results.items():
        assert res["served_after"] == [newest + 1 + j for j in range(4)], (
            rank, newest, res["served_after"])
        assert res["own_steps_after"] == res["own_steps"] + 4, rank
        prev, due = res["served"][-1], 0
        for served in res["served_after"]:
            due += any(is_global(r, 4) for r in range(prev + 1, served + 1))
            prev = served
        assert res["sync_rounds_after"] == due, (rank, res["served"][-1],
                                                 res["served_after"], res["sync_rounds_after"])
        assert res["fp16_exact_after"] == [is_global(s, 4) for s in res["served_after"]], (
            rank, res["served_after"], res["fp16_exact_after"])
        assert res["identical_after_second_sync"], rank
