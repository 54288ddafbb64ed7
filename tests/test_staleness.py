"""Staleness bound (DESIGN.md §3): global rounds block, so no rank ever gets more than
tau rounds ahead of another."""
import pytest

from reference import is_global


@pytest.mark.parametrize("tau", [3, 5])
def test_no_rank_more_than_tau_rounds_ahead(mpi, tau):
    rounds = 4 * tau + 2
    run = mpi("staleness.py", 4, tau, rounds, timeout=120)
    res = run.results
    for a in res:
        for b in res:
            for r in range(rounds):
                # a left round r only after b entered the latest global round <= r ...
                g = max(q for q in range(r + 1) if is_global(q, tau))
                assert res[a]["leave"][r] >= res[b]["enter"][g], (a, b, r, g)
                # ... hence while a is in round r, b has entered at least round r - tau + 1.
                entered_by_b = sum(t <= res[a]["leave"][r] for t in res[b]["enter"])
                assert entered_by_b - 1 >= r - tau + 1, (a, b, r)
