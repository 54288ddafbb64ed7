"""A process with passive rounds still pending exits cleanly."""
import pytest

pytestmark = pytest.mark.ranks


def test_exit_with_passive_rounds_pending(mpi):
    run = mpi("shutdown.py", 4, timeout=120)
    assert run.results[1]["stats"]["passive_joins"] >= 1
    assert "gave up" not in run.stderr
    assert run.elapsed < 60
