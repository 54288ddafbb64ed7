"""Staleness bound (docs/design.md, section 2): global rounds block, so no rank ever gets more than
tau rounds ahead of another. Both taus run in one launch (workers/staleness.py)."""
import pytest

import resident
from reference import is_global

pytestmark = pytest.mark.ranks

TAUS = (3, 5)


def scenario(tau):
    return f"{tau},{4 * tau + 2}"


SCENARIOS = resident.item("staleness.py", 4, *[scenario(t) for t in TAUS], timeout=240)


@pytest.fixture(scope="module")
def launch(transport):
    return SCENARIOS.scenarios()


@pytest.mark.parametrize("tau", TAUS)
def test_no_rank_more_than_tau_rounds_ahead(launch, tau):
    rounds = 4 * tau + 2
    res = launch.results(scenario(tau))
    for a in res:
        for b in res:
            for r in range(rounds):
                # a left round r only after b entered the latest global round <= r ...
                g = max(q for q in range(r + 1) if is_global(q, tau))
                assert res[a]["leave"][r] >= res[b]["enter"][g], (a, b, r, g)
                # ... hence while a is in round r, b has entered at least round r - tau + 1.
                entered_by_b = sum(t <= res[a]["leave"][r] for t in res[b]["enter"])
                assert entered_by_b - 1 >= r - tau + 1, (a, b, r)
