"""README's recipe for an environment that already has PyTorch and Horovod, tried in
a second virtual environment with no TensorFlow (scripts/check_pip_env.sh, also
`make test-pip-env`): a wheel built with --no-build-isolation against that
environment's torch, installed there, then 4 ranks over MPI and over Gloo train,
run a Horovod collective mid-run and end with one model; `import
horovod_wagma.keras` names the missing TensorFlow. It builds a venv, a wheel and, the
first time on a machine, a PyTorch-only Horovod.

Unstable (make test-unstable, or make test-pip-env): it passed 3 of 4 first runs; the
one failure (inside make test-all, 2026-12-07) exited 1 right after installing the
cached Horovod wheel with nothing on stdout or stderr saying why, and did not recur
when rerun alone or under pytest. The script now prints each step it starts."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.unstable
def test_wheel_in_a_pytorch_only_environment():
    env_dir = os.path.join(ROOT, "build", "pip-env")
    proc = subprocess.run(["bash", os.path.join(ROOT, "scripts", "check_pip_env.sh"), env_dir],
                          capture_output=True, text=True, timeout=1800)
    out = proc.stdout + proc.stderr
    # pip's index warnings fill stderr: keep the lines that say what happened.
    said = [line for line in out.splitlines() if not line.startswith(("WARNING: Location",
                                                                      "Looking in"))]
    assert proc.returncode == 0, "\n".join(said[-80:])
    # Both launches ran from the installed wheel, not the source tree.
    installed = os.path.join(env_dir, "lib")
    checks = [line for line in out.splitlines() if "wagma smoke: 4 ranks" in line]
    assert len(checks) == 2 and all(installed in line for line in checks), out[-4000:]
    assert "[pip-env] ok" in out
