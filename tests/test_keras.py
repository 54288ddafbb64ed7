"""Keras: graph and eager modes, callbacks, the Keras 2 guard (the drop-in swap of
Horovod's Keras example is in test_examples.py). The multi-rank scenarios run in one
launch on 3 ranks (workers/keras_checks.py): TensorFlow's imports cost about 10 s per
rank, and no check here depends on the rank count."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import resident

pytestmark = [pytest.mark.ranks, pytest.mark.tf, pytest.mark.slow]
SCENARIOS = ["fit", "eager", "fp16_values", "uneven", "drift", "wa_fit_straggler",
             "balanced_horovod", "balanced", "state_on_sync", "state_on_sync_wa",
             "op_in_function", "process_set", "quasi_global", "keras_join"]


RESIDENT = resident.item("keras_checks.py", 3, *SCENARIOS, framework="tensorflow", timeout=600)


@pytest.fixture(scope="module")
def launch(transport):
    return RESIDENT.scenarios()


def test_fit_graph_mode_with_callbacks(launch):
    """WagmaGlobalSyncCallback leaves one model on every rank at every epoch end (the
    BatchNorm statistics, which the optimizer never averages, included) and at train
    end; MetricAverageCallback averages the loss and the accuracy over the ranks."""
    results = launch.results("fit")
    for res in results.values():
        assert res["identical_at_epoch_ends"] == [True, True, True], res
        assert res["identical_after_sync"]
        assert res["loss_averaged"]
        # ... to the ranks' mean, each epoch's loss and accuracy (computed in float64:
        # a half-precision average is off by about 1e-3 of the value).
        for epoch, logged in enumerate(res["logged_metrics"]):
            for k in range(2):
                mean = sum(results[r]["own_metrics"][epoch][k] for r in results) / len(results)
                assert abs(logged[k] - mean) <= 1e-9 * max(1.0, abs(mean)), \
                    (epoch, k, logged, mean)
        assert res["stats_keys"] == ["wagma_max_staleness", "wagma_mean_staleness",
                                     "wagma_passive_joins", "wagma_rounds", "wagma_wait_s"]
        assert all(r >= 8 for r in res["rounds"])  # 8 steps per epoch, one round each
        # WagmaStatsCallback's counts are the epoch's own, not the run's so far: every
        # epoch runs the same rounds (cumulative counts would grow 1x, 2x, 3x).
        assert max(res["rounds"]) < 1.5 * min(res["rounds"]), res["rounds"]
        # wagma_wait_s is the epoch's application wait in seconds: the engine's own
        # counter over the epoch (read by a callback after it), not a multiple of it.
        for logged, engine in zip(res["wait_s"], res["engine_wait_s"]):
            assert engine > 0 and abs(logged - engine) <= 0.1 * engine + 1e-4, \
                (res["wait_s"], res["engine_wait_s"])
    # api.md: MetricAverageCallback averages the epoch's scalar metrics, so also the
    # validation metrics of the one epoch that has them (validation_freq=2: epoch 1),
    # between epochs without: the logs' keys differ from epoch to epoch.
    for res in results.values():
        assert [e for e, *_ in res["own_val"]] == [1], res["own_val"]
        for k in range(2):  # val_loss, val_accuracy
            mean = sum(results[r]["own_val"][0][1 + k] for r in results) / len(results)
            assert res["logged_val"][k] == pytest.approx([mean], rel=1e-9, abs=1e-12), \
                (k, res["logged_val"], mean)
    # Each rank validated its own data: the average is not the rank's own value.
    own_val_losses = [results[r]["own_val"][0][1] for r in results]
    assert max(own_val_losses) - min(own_val_losses) > 1e-6, own_val_losses


def test_eager_gradient_tape(launch):
    results = launch.results("eager")
    for res in results.values():
        assert res["identical_at_global_rounds"] == [True, True, True]
        assert res["identical_after_sync"]


def test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds(launch):
    """Keras's twin of test_optimizer.py's: the fp32 model becomes the fp16 average only
    at global rounds (steps 0, 3, 7 of tau 4); at group rounds it keeps its own
    full-precision residual."""
    for res in launch.results("fp16_values").values():
        assert res["exact"] == [True] * 8, res
        assert res["residual_kept"] == [True] * 5, res


def test_keras3_first_is_a_clear_error():
    code = textwrap.dedent("""
        import os
        os.environ.pop("TF_USE_LEGACY_KERAS", None)
        import tensorflow as tf
        tf.keras.layers  # resolves tf.keras to Keras 3
        try:
            import horovod_wagma.keras
        except ImportError as e:
            print("ImportError:", e)
    """)
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=dict(env, TF_CPP_MIN_LOG_LEVEL="3"))
    assert "ImportError:" in out.stdout and "TF_USE_LEGACY_KERAS" in out.stdout, out


def test_uneven_batches_with_join(launch):
    results = launch.results("uneven")
    for r, res in results.items():
        assert res["last"] == 2, res  # rank 2 has the most batches
        assert res["round"] == 4 + 3 * 2  # everyone continues from the furthest step
        assert res["identical_after_sync"]
    # Rank 0 stopped first; its engine then served the others' rounds.
    assert results[0]["joins"] > 0


def test_wait_avoiding_global_rounds_fit_with_straggler_and_join(launch):
    """model.fit in graph mode, global_rounds="wait_avoiding", fp16 on the wire: the 4x
    slower rank with a quarter of the batches skips rounds (its step counter counts
    its own 4 steps), no contribution is older than sync_period, and join() + sync()
    end every rank with identical models although the step counts differ 4x."""
    results = launch.results("wa_fit_straggler")
    slow = results[2]
    assert slow["own_steps"] == 4 and slow["skipped"] > 0, slow
    for rank, res in results.items():
        assert res["identical_after_sync"]
        assert res["age_max"] <= 4
        if rank != 2:
            assert res["own_steps"] == 16
    # api.md: WagmaStatsCallback logs the epoch's own passive joins and their mean
    # staleness, and the engine's running maximum. Its reads lie between the engine's
    # counters read just before and just after it (a callback on each side); earlier
    # scenarios and epoch 0 counted again would overshoot the epoch's upper bound.
    for rank, res in results.items():
        logged, before, after = res["logged_stats"], res["before"], res["after"]
        for e, joins in enumerate(logged["wagma_passive_joins"]):
            fewest = before["end"][e]["passive_joins"] - after["begin"][e]["passive_joins"]
            most = after["end"][e]["passive_joins"] - before["begin"][e]["passive_joins"]
            assert fewest <= joins <= most, (rank, e, logged, before, after)
            assert before["end"][e]["staleness_max"] <= logged["wagma_max_staleness"][e] \
                <= after["end"][e]["staleness_max"], (rank, e, logged, before, after)
            if fewest == most:  # no join during the reads: the mean is the epoch's
                total = (after["end"][e]["staleness_sum"]
                         - before["begin"][e]["staleness_sum"])
                assert logged["wagma_mean_staleness"][e] == pytest.approx(
                    total / max(1, joins)), (rank, e, logged, before, after)
    # The straggler's engine joined rounds for its busy app: the bounds are not
    # vacuous there.
    assert sum(slow["logged_stats"]["wagma_passive_joins"]) > 0, slow


def test_on_sync_state_and_drift_correction_remove_a_non_iid_bias(launch):
    """Keras average_optimizer_state="on_sync" with drift_correction=0.5: each
    rank's quadratic pulls it to its own a_i; without correction the models stay apart
    from the optimum mean(a), with it every model sits there and each control variate
    has learnt a_i - mean(a). Eager with blocking global rounds, and inside a
    tf.function with wait-avoiding ones under random delays (state rounds served
    passively)."""
    results = launch.results("drift")
    for res in results.values():
        assert res["off"]["far"] > 0.1 and res["wa_off"]["far"] > 0.1, res
        assert res["on"]["far"] < 1e-3 and res["on"]["c_error"] < 1e-3, res
        assert res["on"]["c_sum"] < 1e-9, res
        assert res["wa_on"]["far"] < 5e-3 and res["wa_on"]["c_error"] < 5e-3, res
        assert res["wa_on"]["c_sum"] < 5e-3, res
    assert sum(res["wa_passive"] for res in results.values()) > 0, results
    for res in results.values():
        # Keras's default is off (SGD with momentum, Adam); a given alpha is kept;
        # plain SGD, or state "never": off.
        assert res["defaults"] == [0.0, 0.0, 0.25, 0.5, 0.0, 0.0], res
        assert "drift_correction" in res["adagrad_error"] and "Adagrad" in res["adagrad_error"]


def _balanced_epochs_cover_every_sample_once(results, epochs, n=483):
    for e in range(epochs):
        shares = results[0]["epochs"][e]["shares"]
        ids = [i for r in range(3) for i in results[r]["ids"][e]]
        assert len(ids) == results[0]["total"] and set(ids) == set(range(n))
        for r in range(3):
            res = results[r]["epochs"][e]
            assert res["shares"] == shares  # the same cut everywhere
            assert len(results[r]["ids"][e]) == shares[r]
            # Keras took this rank's own steps: len(sequence) batches of 8.
            assert res["steps"] == res["length"] == -(-shares[r] // 8)
        losses = [results[r]["epochs"][e]["loss"] for r in range(3)]
        assert max(losses) - min(losses) < 1e-6  # MetricAverageCallback averaged


def test_balanced_sequence_follows_speeds_in_fit(launch):
    """BalancedSequence under DistributedWagmaOptimizer: every sample once per epoch,
    Keras takes len(sequence) steps per rank, epoch 0 equal, then shares within one
    batch of the injected speeds (rank 0 2x slower, then rank 1 from epoch 2)."""
    results = launch.results("balanced")
    _balanced_epochs_cover_every_sample_once(results, 4)
    total = results[0]["total"]
    assert len(set(results[0]["epochs"][0]["shares"])) == 1
    for e, slow in ((1, 0), (2, 0), (3, 1)):
        shares = results[0]["epochs"][e]["shares"]
        for r in range(3):
            want = total * (0.2 if r == slow else 0.4)  # weights 1/2, 1, 1
            assert abs(shares[r] - want) <= 8, (e, shares, results[0]["epochs"][e])
    # api.md: `throughputs`, gathered at the last epoch end, are samples per second of
    # each rank's own work: batches of 8 per injected cycle of 80 ms (slow) or 40 ms,
    # about 100 and 200 samples/s (generous bounds: Keras's prefetch burst shortens a
    # few cycles, load lengthens them). Batches per second, 8x fewer, cut the same
    # shares.
    for e, slow in ((1, 0), (2, 0), (3, 1)):
        got = results[0]["epochs"][e]["throughputs"]
        assert len(got) == 3, (e, got)
        for r in range(3):
            nominal = 8 / (0.080 if r == slow else 0.040)
            assert 0.3 * nominal < got[r] < 3 * nominal, (e, r, got)


def test_balanced_sequence_keeps_equal_shares_for_horovods_optimizer(launch):
    """With Horovod's DistributedOptimizer (equal steps needed) the shares stay equal
    despite the slow rank, and fit finishes; bad arguments are clear errors."""
    results = launch.results("balanced_horovod")
    _balanced_epochs_cover_every_sample_once(results, 2)
    for e in range(2):
        assert len(set(results[0]["epochs"][e]["shares"])) == 1
    # Recognised at epoch 0's end (the record is taken before it, so at epoch 1).
    assert all(results[r]["epochs"][1]["equal_steps_needed"] is True for r in range(3))
    for res in results.values():  # bad input: a clear error on every rank
        batch, lengths, rank, band = res["bad_input"]
        assert "batch_size must be a positive int" in batch
        assert "x has 10 samples but y has 9" in lengths
        assert "Invalid rank 3" in rank and "dead_band must be in [0, 1)" in band
    wagma = launch.results("balanced")
    assert all(wagma[r]["epochs"][1]["equal_steps_needed"] is False for r in range(3))


def test_on_sync_averages_optimizer_state_at_global_rounds_and_sync(launch):
    """docs/api.md, Keras: "on_sync" averages the optimizer's floating-point state,
    SGD's velocities (eager) and Adam's moments (in a tf.function), at the global
    rounds (steps 0 and 3 of tau 4): the same bits on every rank there, each rank's own
    after the group rounds; sync(variables) averages it too. "never" leaves it local,
    also through sync(), which still makes the models identical."""
    for rank, res in launch.results("state_on_sync").items():
        # SGD's velocity per trainable variable, Adam's m and v: 227 and 2 x 227 floats.
        assert res["sgd.on_sync"]["state_size"] == 227, res
        assert res["adam.on_sync"]["state_size"] == 2 * 227, res
        for label in ("sgd", "adam"):
            on = res[f"{label}.on_sync"]
            assert on["same"] == [True, False, False, True, False, False], (rank, label, on)
            assert on["same_after_sync"] is True and on["model_after_sync"], (rank, label, on)
        never = res["sgd.never"]
        assert never["state_size"] == 227 and never["same"] == [False] * 6, (rank, never)
        assert never["same_after_sync"] is False and never["model_after_sync"], (rank, never)


def test_on_sync_with_wait_avoiding_global_rounds_averages_only_there(launch):
    """docs/api.md: "on_sync" averages the state at the global rounds' duties, also
    with wait-avoiding global rounds (the default), where the step that passed a global
    round runs them: in lockstep over 8 steps of tau 4 that is steps 0, 3 and 7, so the
    state's stream runs its rounds there and nowhere else (not at every step once the
    first global round is past)."""
    for rank, res in launch.results("state_on_sync_wa").items():
        assert res["mode"] == "wait_avoiding", res
        # Each count is taken before the next step's barrier, so no peer's later
        # duty can have reached this rank's engine yet.
        assert res["sync_rounds"] == [1, 1, 1, 2, 2, 2, 2, 3], (rank, res)


def test_module_join_serves_rounds_and_returns_the_last_rank(launch):
    """hvd.join() from horovod_wagma.keras, not the optimizer's: every rank gets the
    last rank to join (the one that called it last: usually rank 2, which has the most
    batches and waits 0.3 s; calls within 50 ms are a tie); each keeps its own step
    count (wait-avoiding global rounds); rank 0's joined engine served the others'
    rounds with its final model: no age, none left out, though it ends 14 steps
    behind (under Horovod's join every one of them is aged or left out); sync() then
    leaves one model."""
    results = launch.results("keras_join")
    (last,) = {res["last"] for res in results.values()}
    joined_at = {rank: res["joined_at"] for rank, res in results.items()}
    assert joined_at[last] >= max(joined_at.values()) - 0.05, (last, joined_at)
    for rank, res in results.items():
        assert res["steps"] == (2, 10, 16)[rank], res
        assert res["identical_after_sync"], res
    r0 = results[0]
    assert r0["after"]["passive"] >= 4, r0  # at least the rounds up to rank 1's end
    assert r0["after"]["aged"] == 0 and r0["after"]["left_out"] == 0, r0


def test_a_second_sync_is_again_the_exact_mean_with_wait_avoiding_global_rounds(launch):
    """docs/api.md (Keras): sync(variables) averages them over all ranks now, through
    blocking global rounds (semantics.md: afterwards all models are identical), also
    where the optimizer's own global rounds are wait-avoiding (keras_join's) and also
    the second time: after join() and a first sync(), every rank moves its model by
    its own amount and syncs again, rank 0 0.5 s late. Every rank then holds the exact
    mean of the moved models, the same bits everywhere (a second round through the
    optimizer's wait-avoiding global knobs would average rank 0's previous value and
    leave rank 0 a model of its own)."""
    for rank, res in launch.results("keras_join").items():
        second = res["second_sync"]
        assert second["identical"] and second["error"] < 1e-5, (rank, second)


def test_drift_correction_learns_from_adams_first_moment(launch):
    """docs/api.md, Keras drift_correction: the first moment is Adam's m (not its
    second moment v). One eager Adam step from x = 0 (rank i's gradient -a_i), on_sync,
    blocking global rounds, alpha 0.5: round 0 averages both of Adam's state tensors,
    m to (1 - beta_1)(-mean a) and v to (1 - beta_2)(mean a)^2 (second_moment="group",
    the Adam default: the mean gradient's square, not mean(a^2)), and the variate learns
    m's move: c_i = 0.5 (mean_j m_j - m_i) = 0.5 (1 - beta_1)(a_i - mean a), exactly
    (float64)."""
    results = launch.results("drift")
    a = np.array([results[r]["adam"]["a"] for r in sorted(results)])
    b1, b2 = 0.9, 0.999
    assert np.abs(a - a.mean(axis=0)).max() > 0.5  # the ranks' biases differ
    for rank, res in results.items():
        adam = res["adam"]
        np.testing.assert_allclose(adam["m"], -(1 - b1) * a.mean(axis=0), rtol=1e-9,
                                   atol=1e-12, err_msg=f"m, rank {rank}")
        np.testing.assert_allclose(adam["v"], (1 - b2) * a.mean(axis=0) ** 2, rtol=1e-9,
                                   atol=1e-12, err_msg=f"v, rank {rank}")
        np.testing.assert_allclose(adam["c"], 0.5 * (1 - b1) * (a[rank] - a.mean(axis=0)),
                                   rtol=0, atol=1e-12, err_msg=f"c, rank {rank}")


def test_tf_op_inside_tf_function_runs_one_round_per_call(launch):
    """docs/api.md: the TensorFlow group_allreduce works inside tf.function, where each
    execution of the op is one round; return_round=True returns the round as an int64
    scalar. A function that calls the op twice on the same input runs two rounds per
    execution, in program order (rounds 2k and 2k + 1 of 4 executions), each result
    the exact gossip average of its round (reference.average_round)."""
    for rank, res in launch.results("op_in_function").items():
        assert res["rounds"] == [[2 * k, 2 * k + 1] for k in range(4)], (rank, res)
        assert res["err"] < 1e-9, (rank, res)
        assert res["round_dtype"] == "int64" and res["round_ndims"] == 0, (rank, res)


def test_op_and_optimizer_over_a_process_set_average_its_ranks_only(launch):
    """docs/api.md: the op's process_set forms groups among the set's ranks, and the
    Keras optimizer's restricts WAGMA to the set (Horovod's arguments "as for
    PyTorch"): over phase 0's groups of groups(3, 2), [0, 1] and [2], one stream name
    for both sets, round 0 (global) gives each rank the mean over its set alone, for
    the op and for the optimizer's model after an SGD(0) step. MPI only: on Gloo
    init() registers no group process sets."""
    if launch.transport == "gloo":
        pytest.skip("on Gloo init() registers no group process sets (test_api.py checks it)")
    results = launch.results("process_set")
    assert sorted(tuple(res["members"]) for res in results.values()) == [(0, 1), (0, 1), (2,)]
    for rank, res in results.items():
        members = res["members"]
        assert rank in members, (rank, members)
        mean = sum(members) / len(members)
        assert res["op"] == pytest.approx([mean, 10 * mean], abs=1e-12), (rank, res["op"])
        want = np.mean([results[m]["own"] for m in members], axis=0)
        assert np.abs(np.array(res["model"]) - want).max() < 1e-12, (rank, res, want)


def test_quasi_global_rebuilds_the_velocity_and_does_not_average_it(launch):
    """docs/api.md, Keras "quasi_global": the velocity is rebuilt after each step's
    averaging, v = beta v_old + (1 - beta)(x_after - x_before), and the buffers are not
    averaged at global rounds (semantics.md: PyTorch also averages them; Keras does
    not): after the global rounds 0 and 2 of tau 3 the ranks' velocities differ, each
    its own rule's. With "never" the velocity is SGD's own and the rule does not hold
    (the check can fail). 3 ranks, group rounds that wait for every member, 4 eager
    steps."""
    for rank, res in launch.results("quasi_global").items():
        qgm, never = res["quasi_global"], res["never"]
        assert qgm["moved"] > 1e-3 and qgm["residual"] < 1e-5, (rank, qgm)
        assert qgm["same_at_global"] == [False, False], (rank, qgm)
        assert never["residual"] > 1e-3, (rank, never)
