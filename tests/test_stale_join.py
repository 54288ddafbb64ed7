"""Published values and the 'fresh' / 'paper' / 'local' rules with a genuinely stale
member. The three rules run in one launch per framework (workers/stale_join.py)."""
import pytest

import resident

pytestmark = pytest.mark.ranks

EXPECTED = {
    # rank 0 contributed its fresh 10.5, rank 1's engine its published 0.5 (s = 11).
    # fresh: y_i = (s - c_i + x_i) / 2; paper: y_i = (s + x_i) / 3;
    # local: y_i = s / 2 + (x_i - c_i).
    "fresh": {0: 11.0 / 2, 1: (11.0 - 0.5 + 100.5) / 2},
    "paper": {0: (11.0 + 10.5) / 3, 1: (11.0 + 100.5) / 3},
    "local": {0: 11.0 / 2, 1: 11.0 / 2 + (100.5 - 0.5)},
}


SCENARIOS = {fw: resident.item("stale_join.py", 2, *EXPECTED, framework=fw, timeout=300,
                              extended=fw == "tensorflow")
             for fw in ("torch", "tensorflow")}


# The rules are the engine's: make test runs them through torch, make test-all through
# TensorFlow too.
@pytest.fixture(scope="module", params=["torch", pytest.param(
    "tensorflow", marks=[pytest.mark.tf, pytest.mark.extended])])
def launch(request, transport):
    return SCENARIOS[request.param].scenarios()


@pytest.mark.parametrize("averaging", list(EXPECTED))
def test_late_member_result_follows_rule(launch, averaging):
    results = launch.results(averaging)
    for rank in (0, 1):
        res = results[rank]
        assert res["y0"] == 0.5
        assert res["y1"] == pytest.approx(EXPECTED[averaging][rank], abs=1e-12), res
    # Rank 0 did not wait for rank 1's 0.5 s sleep; rank 1 found its round done.
    assert results[0]["wait"] < 0.25
    assert results[1]["wait"] < 0.1
