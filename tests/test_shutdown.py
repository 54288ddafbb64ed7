"""A process with passive rounds still pending exits cleanly; a shutdown that cannot
finish gives up after HOROVOD_WAGMA_SHUTDOWN_TIMEOUT seconds (docs/faults.md)."""
import os

import pytest

pytestmark = pytest.mark.ranks


def test_exit_with_passive_rounds_pending(mpi):
    run = mpi("shutdown.py", 4, timeout=120)
    assert run.results[1]["stats"]["passive_joins"] >= 1
    assert "gave up" not in run.stderr
    assert run.elapsed < 60


@pytest.mark.parametrize("timeout_s", [2, pytest.param(None, marks=pytest.mark.extended)])
def test_a_shutdown_that_cannot_finish_gives_up_after_its_timeout(mpi, timeout_s):
    """Rank 0 exits at once; rank 1 stays up, so rank 0's engine waits at its closing
    barrier for rank 1's. It gives up after HOROVOD_WAGMA_SHUTDOWN_TIMEOUT (2 s here;
    30 by default, the extended case), saying so, and rank 0's exit goes on: its
    atexit handler after the engine's ran that long after the script's end, not when
    rank 1 left (seconds later)."""
    env = {} if timeout_s is None else {"HOROVOD_WAGMA_SHUTDOWN_TIMEOUT": str(timeout_s)}
    limit = 30 if timeout_s is None else timeout_s
    stay_s = limit + 3
    run = mpi("shutdown.py", 2, "give_up", stay_s, timeout=120 + stay_s, env=env)
    assert f"[horovod_wagma rank 0] shutdown: gave up after {limit} s" in run.stderr, \
        run.stderr[-3000:]
    with open(os.path.join(run.results_dir, "exit_seconds")) as f:
        exit_s = float(f.read())
    # Given up at the limit (the loop checks it every pass), well before rank 1 left.
    assert limit - 0.1 < exit_s < limit + 3, exit_s
