"""horovodrun for the suite: Horovod's own launcher, asked once whether it was built.

Before every launch horovodrun checks that Horovod was built with Gloo (or MPI) by
importing Horovod's first framework extension, TensorFlow's, in a forked child: about
3 s of one core per launch, and the suite makes tens of Gloo launches. `command()`
asks that question once per pytest session with Horovod's own check, and the ranks
are then launched by this script, which is horovodrun's `run_commandline` with the
answer given. Everything else (rendezvous, elastic driver, host discovery, the
ranks' environment) is horovodrun's own code.

Run as a script: `python tests/horovodrun_launcher.py HOROVODRUN_ARGS...`.
"""
import functools
import os
import subprocess
import sys

_ANSWER_VAR = "WAGMA_TESTS_HOROVOD_BUILT"  # "gloo,mpi": what Horovod's check said


@functools.cache
def _built():
    """Horovod's own answer, asked once, in a child process (it forks, and pytest's
    process holds threads)."""
    probe = ("from horovod.common.util import gloo_built, mpi_built;"
             "print(','.join(k for k, f in (('gloo', gloo_built), ('mpi', mpi_built))"
             " if f()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    lines = out.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def command():
    """The argv prefix that runs horovodrun, and the environment entry it needs."""
    return [sys.executable, os.path.abspath(__file__)], {_ANSWER_VAR: _built()}


def main():
    from horovod.runner import launch
    if _ANSWER_VAR in os.environ:  # else horovodrun asks itself
        built = set(os.environ[_ANSWER_VAR].split(","))
        launch.gloo_built = lambda verbose=False: "gloo" in built
        launch.mpi_built = lambda verbose=False: "mpi" in built
    sys.argv[0] = "horovodrun"
    sys.exit(launch.run_commandline())


if __name__ == "__main__":
    main()
