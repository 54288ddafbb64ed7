"""Environments beyond make install's, each in a virtual environment of its own under
build/ (marked `optional`: they download gigabytes or install Ray, so make test and
make test-all leave them out; make test-optional runs them):

- the newest PyTorch on the index (scripts/check_newest_torch.sh, make
  test-newest-torch): Horovod and this package built against it, 4 ranks from the
  wheel over MPI and Gloo, then the quick loop's PyTorch part;
- Horovod on Ray (scripts/check_ray.sh, make test-ray): 4 RayExecutor workers on a
  two-node local cluster on 127.0.0.1, three runs in one executor, and the exact run's
  model equal to horovodrun's.
"""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.optional


def run_script(name, env_dir, timeout):
    proc = subprocess.run(["bash", os.path.join(ROOT, "scripts", name), env_dir],
                          capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    said = [line for line in out.splitlines()
            if not line.startswith(("WARNING: Location", "Looking in", "[20"))]
    assert proc.returncode == 0, "\n".join(said[-80:])
    return out


def test_newest_pytorch():
    out = run_script("check_newest_torch.sh", os.path.join(ROOT, "build", "torch-newest"),
                     timeout=3600)
    assert "[newest-torch] ok: torch==2.15.0" in out
    assert out.count("wagma smoke: 4 ranks") == 2, out[-4000:]  # MPI and Gloo


def test_horovod_on_ray():
    out = run_script("check_ray.sh", os.path.join(ROOT, "build", "ray-env"), timeout=1800)
    assert "[ray] Ray 2.60.0, 2 nodes, 4 CPUs" in out
    for run in ("default", "exact", "default again"):
        assert f"[ray] run '{run}': 4 workers" in out, out[-4000:]
    assert "the exact run under Ray equals horovodrun's" in out
