"""init(): Horovod with MPI, process-set registration, lazy start after hvd.init()."""
import os
import pytest


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_op_works_after_plain_hvd_init(mpi, mode):
    env = {"HOROVOD_DYNAMIC_PROCESS_SETS": "1"} if mode == "dynamic" else {}
    run = mpi("plain_init.py", 4, mode, timeout=120, env=env)
    for rank, res in run.results.items():
        assert res["started_before"] is False and res["started_after"] is True
        assert res["round0"] == 1.5  # global average of 0..3
        if mode == "dynamic":
            assert res.get("ps_size") == 2.0, res  # a group of 2 in phase 0
        else:
            assert "not registered" in res["ps_error"], res


@pytest.mark.parametrize("P,S", [(6, 4), (6, 2), (3, 4), (8, 2)])
def test_every_phase_group_is_a_horovod_process_set(mpi, P, S):
    run = mpi("process_sets.py", P, S, timeout=120)
    for rank, res in run.results.items():
        assert res["sums"] == res["expected"], (rank, res)


def test_gloo_launch_is_refused_with_a_clear_error(tmp_path):
    """Gloo (and elastic Horovod, Ray, Spark, which run on it) is not supported: every
    rank gets the error naming the launch to use, and the job ends."""
    import subprocess
    import sys
    from conftest import read_results, WORKERS
    horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
    env = dict(os.environ, WAGMA_TEST_RESULTS=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.run([horovodrun, "--gloo", "-np", "2", "-H", "localhost:2",
                           sys.executable, os.path.join(WORKERS, "gloo_refused.py")],
                          capture_output=True, text=True, timeout=120, env=env)
    res = read_results(str(tmp_path))
    assert sorted(res) == [0, 1], (proc.stdout[-2000:], proc.stderr[-2000:])
    for r in res.values():
        for call in ("init", "group_allreduce"):
            err = r[call]["error"]
            assert "needs Horovod to run with MPI" in err and "Gloo is not supported" in err, err
