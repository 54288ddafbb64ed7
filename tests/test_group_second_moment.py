"""Adam's second moment from the group's mean gradient (docs/design.md §3, "Adam's
second moment"; horovod_wagma/torch/group_second_moment.py): with
second_moment="group" (the default for the Adam family) each rank's exp_avg_sq after a
step is beta2 v + (1 - beta2) g_mean^2, the mean gradient's, as in Horovod's Adam;
with "local" it is the rank's own gradient's. One 4-rank launch per framework, exact
rounds (groups of the whole world, wait_avoiding=False)."""
import pytest

from conftest import run_mpi

pytestmark = pytest.mark.ranks
P = 4
GLOBAL_STEPS = (0, 3)   # sync_period 4: the state is averaged there ("on_sync")


WORKERS = {"torch": "group_second_moment.py", "tensorflow": "group_second_moment_keras.py"}


@pytest.fixture(scope="module", params=["torch", pytest.param("tensorflow",
                                                             marks=pytest.mark.tf)])
def launch(request):
    return run_mpi(WORKERS[request.param], P, "group", "default", "local", "refused",
                   timeout=180)


def test_group_mode_moves_v_to_the_mean_gradients(launch):
    for rank, res in launch.results.items():
        for mode in ("group", "default"):
            assert res[mode]["knob"] == "group", (rank, mode)
            diffs = res[mode]["diffs"]
            assert len(diffs) == 6
            # Every step, drift correction on (its variates sum to zero over the ranks,
            # so the mean gradient is unchanged); one rank's own gradient is 0.4-1.3
            # away. float32: v + (1 - beta2)(g_G^2 - g_i^2) cancels where g_i >> g_G
            # (measured up to 2.2e-5 relative in Keras).
            assert all(d["group"] < 1e-3 for d in diffs), (rank, mode, diffs)
            assert max(d["local"] for d in diffs) > 0.05, (rank, mode, diffs)
    # The same v on every rank (each moved its own v by its own g_i^2 to the mean's).
    v0 = launch.results[0]["group"]["v"]
    for res in launch.results.values():
        assert res["group"]["v"] == pytest.approx(v0, rel=1e-5)


def test_local_mode_keeps_each_ranks_own_second_moment(launch):
    for rank, res in launch.results.items():
        diffs = res["local"]["diffs"]
        assert res["local"]["knob"] == "local"
        for step, d in enumerate(diffs):
            if step not in GLOBAL_STEPS:
                assert d["local"] < 1e-3, (rank, step, d)
        assert max(d["group"] for d in diffs) > 0.05, (rank, diffs)


def test_group_mode_needs_an_adam_family_optimizer(launch):
    for rank, res in launch.results.items():
        out = res["refused"]
        assert out["sgd"]["type"] == "ValueError", (rank, out)
        assert "second_moment='group' needs an Adam-family optimizer" in out["sgd"]["error"]
        assert "got SGD" in out["sgd"]["error"]
        assert out["unknown"]["error"] == "second_moment must be 'group' or 'local', got 'global'"
        assert out["sgd_default"] == "local"
