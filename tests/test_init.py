"""init(): Horovod with MPI, process-set registration, lazy start after hvd.init()."""
import pytest

pytestmark = pytest.mark.ranks


@pytest.mark.parametrize("mode", [pytest.param("static", marks=pytest.mark.extended),
                                  "dynamic"])
def test_op_works_after_plain_hvd_init(mpi, mode):
    env = {"HOROVOD_DYNAMIC_PROCESS_SETS": "1"} if mode == "dynamic" else {}
    run = mpi("plain_init.py", 4, mode, timeout=120, env=env)
    for rank, res in run.results.items():
        assert res["started_before"] is False and res["started_after"] is True
        assert res["round0"] == 1.5  # global average of 0..3
        if mode == "dynamic":
            assert res.get("ps_size") == 2.0, res  # a group of 2 in phase 0
        else:
            # api.md: a WagmaError, naming the way out (dynamic process sets).
            assert res["ps_error"].startswith(
                "WagmaError: the WAGMA groups are not registered as Horovod process sets"), res
            assert "HOROVOD_DYNAMIC_PROCESS_SETS=1" in res["ps_error"], res


# On Gloo init() registers no group process sets (basics.py says why): MPI only.
@pytest.mark.mpi_only
@pytest.mark.parametrize("P,S", [(6, 4)] + [pytest.param(P, S, marks=pytest.mark.extended)
                                           for P, S in [(6, 2), (3, 4), (8, 2)]])
def test_every_phase_group_is_a_horovod_process_set(mpi, P, S):
    run = mpi("process_sets.py", P, S, timeout=120)
    for rank, res in run.results.items():
        assert res["sums"] == res["expected"], (rank, res)
