"""README's recipe for an environment that already has PyTorch and Horovod, tried in
a second virtual environment with no TensorFlow (scripts/check_pip_env.sh, also
`make test-pip-env`): a wheel built with --no-build-isolation against that
environment's torch, installed there, then 4 ranks over MPI and over Gloo train,
run a Horovod collective mid-run and end with one model; `import
horovod_wagma.keras` names the missing TensorFlow. Extended (make test-all): it
builds a venv, a wheel and, the first time on a machine, a PyTorch-only Horovod."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.extended
def test_wheel_in_a_pytorch_only_environment():
    env_dir = os.path.join(ROOT, "build", "pip-env")
    proc = subprocess.run(["bash", os.path.join(ROOT, "scripts", "check_pip_env.sh"), env_dir],
                          capture_output=True, text=True, timeout=1800)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    # Both launches ran from the installed wheel, not the source tree.
    installed = os.path.join(env_dir, "lib")
    checks = [line for line in out.splitlines() if "pip-env check: 4 ranks" in line]
    assert len(checks) == 2 and all(installed in line for line in checks), out[-4000:]
    assert "[pip-env] ok" in out
