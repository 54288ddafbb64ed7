"""Uneven data through join(): no hang, no error, and the joined ranks' final models
keep taking part, exactly as docs/design.md, section 2.1, defines rounds."""
import numpy as np
import pytest

import resident

from reference import is_global, phase_of

pytestmark = pytest.mark.ranks


def expected_outputs(runs, size, sync_period=4):
    """Replays rounds without wait-avoidance: a rank that has joined contributes its
    last output to every later round it is in."""
    steps = {r: runs[r]["steps"] for r in range(size)}
    phases = runs[0]["phases"]
    final = {}
    expected = {r: [] for r in range(size)}
    for k in range(max(steps.values())):
        value = {}
        for r in range(size):
            value[r] = (np.array(runs[r]["inputs"][k]) if k < steps[r]
                        else np.array(final[r]))
        if is_global(k, sync_period):
            groups = [list(range(size))]
        else:
            groups = phases[phase_of(k, sync_period, len(phases))]
        for members in groups:
            mean = sum(value[m] for m in members) / len(members)
            for m in members:
                if k < steps[m]:
                    expected[m].append(mean)
        for r in range(size):
            if k == steps[r] - 1:
                final[r] = expected[r][-1]
    return expected


SCENARIOS = resident.item("uneven.py", 4, "op", "optimizer", "repeated_joins",
                          "horovod_collectives", timeout=300)


@pytest.fixture(scope="module")
def launch(transport):
    """The scenarios of workers/uneven.py, in the 4-rank resident launch."""
    return SCENARIOS.scenarios()


def test_join_serves_final_model_exactly(launch):
    res = launch.results("op")
    expected = expected_outputs(res, 4)
    for r in range(4):
        assert res[r]["last"] == 3, res[r]["last"]  # rank 3 has the most data
        got = np.array(res[r]["outputs"])
        np.testing.assert_allclose(got, np.array(expected[r]), rtol=0, atol=1e-12)
        assert res[r]["stats"]["errors"] == 0
    # The early joiners' engines kept serving: rank 0 ran 3 rounds itself, and its
    # engine joined the others' later rounds for it.
    assert res[0]["stats"]["rounds"] == 3
    # After join() every rank goes on from round 9 (rank 3 ran rounds 0-8): one more
    # call is that round's exact mean over its group, on every rank (a rank that went
    # on from its own count, or from round 8, would enter a round already over).
    k, phases = 9, res[0]["phases"]
    groups = [list(range(4))] if is_global(k, 4) else phases[phase_of(k, 4, len(phases))]
    for members in groups:
        mean = sum(np.array(res[m]["after_input"]) for m in members) / len(members)
        for m in members:
            np.testing.assert_allclose(res[m]["after_output"], mean, rtol=0, atol=1e-12)
    assert launch.seconds("op") < 100


def test_optimizer_join_with_uneven_batches(launch):
    res = launch.results("optimizer")
    assert {res[r]["last"] for r in range(4)} == {3}
    # Every rank continues from the furthest step any rank reached.
    assert {res[r]["round"] for r in range(4)} == {20 + 7 * 3}
    models = [np.array(res[r]["model"]) for r in range(4)]
    for m in models[1:]:
        np.testing.assert_array_equal(m, models[0])  # sync() after join: identical
    assert all(res[r]["finite"] for r in range(4))
    # Training goes on after join() (faults.md): the next 4 steps are rounds 41-44 on
    # every rank (wagma_status: served_round is steps - 1 with blocking global rounds);
    # round 44 is global (tau 5): the same model bits everywhere, and its duties
    # average the momentum, which the group rounds 41-43 had left each rank's own.
    for r in range(4):
        assert res[r]["served_after"] == [41, 42, 43, 44], (r, res[r]["served_after"])
        assert res[r]["steps_after"] == 45, r
    m43 = [np.array(res[r]["momentum_43"]) for r in range(4)]
    assert any(not np.array_equal(m, m43[0]) for m in m43[1:])  # local after round 43
    for key in ("model_44", "momentum_44"):
        values = [np.array(res[r][key]) for r in range(4)]
        for v in values[1:]:
            np.testing.assert_array_equal(v, values[0], err_msg=key)


def test_repeated_joins_leave_blocking_rounds_exact(launch):
    """150 joins, each after 3 blocking global rounds of a new stream: a rank's notice
    that it joined, arriving after the registrar's "all joined" had ended that join,
    once marked it joined for good (within 3-128 joins over Gloo, 3 of 3 runs, before the
    joins were numbered), and its published data then stood in for its contributions:
    averages of 2/3 instead of 1 at P=3."""
    res = launch.results("repeated_joins")
    for r in range(4):
        assert res[r]["wrong"] == [] and res[r]["passive"] == {}, (r, res[r])


def test_horovod_collectives_are_served_during_join(launch):
    """docs/faults.md: while rank 0 sits in join(), the others' Horovod allreduces
    complete (its Horovod join serves them, a joined rank counting zero), beside the
    WAGMA rounds its engine serves; every join returns the last rank, 3."""
    res = launch.results("horovod_collectives")
    for k in range(3):
        want = sum(r + 10 * k for r in (1, 2, 3))  # rank 0's share: zero
        for r in (1, 2, 3):
            assert res[r]["sums"][k] == want, (r, k, res[r]["sums"])
    assert {res[r]["last"] for r in range(4)} == {3}, res
    # Rank 0's engine joined the three WAGMA rounds it did not call.
    assert res[0]["stats"]["rounds"] == 1 and res[0]["stats"]["passive_joins"] == 3, res[0]
