"""How the benchmarks start themselves: ``python bench/X.py`` re-runs the same script
under ``mpirun --oversubscribe`` with the environment this machine needs (root, and
yield-when-idle: more ranks than cores, DESIGN.md §5)."""
import os
import sys

MPIRUN_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}


def under_mpirun():
    return "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ


def relaunch_under_mpirun(script, num_ranks, timeout, extra_env=None):
    """Unless already a rank of an MPI job, replaces this process by
    ``mpirun -np N ... python script <same args>``."""
    if under_mpirun():
        return
    cmd = ["mpirun", "-np", str(num_ranks), "--oversubscribe", "--timeout", str(timeout),
           sys.executable, os.path.abspath(script)] + sys.argv[1:]
    print("+ " + " ".join(cmd), flush=True)
    os.execvpe(cmd[0], cmd, dict(os.environ, **MPIRUN_ENV, **(extra_env or {})))
