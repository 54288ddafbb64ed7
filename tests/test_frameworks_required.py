"""A frontend whose framework is missing is an ImportError naming it and the fix
(horovod_wagma/common/op/frameworks.py); the real PyTorch-only environment is
scripts/check_pip_env.sh (make test-pip-env)."""
import os
import subprocess
import sys

import pytest

from horovod_wagma.common.op import frameworks


def test_missing_modules_are_named_with_their_pip_names():
    with pytest.raises(ImportError) as e:
        frameworks.require_modules("horovod_wagma.keras", {
            "json": "json", "no_such_module_a": "pkg-a", "no_such_module_b": "pkg-b"})
    text = str(e.value)
    assert text.startswith("horovod_wagma.keras needs pkg-a, pkg-b,"), text
    assert "pip install pkg-a pkg-b" in text and "--no-build-isolation" in text
    frameworks.require_modules("x", {"json": "json"})  # present: no error


def test_a_build_without_tensorflow_says_so(tmp_path):
    with pytest.raises(ImportError, match="built without its TensorFlow op"):
        frameworks.tf_op_library(str(tmp_path))
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        return  # a build without TensorFlow (make test-newest-torch's): nothing to find
    here = os.path.join(os.path.dirname(frameworks.__file__), "..", "..", "tensorflow")
    assert os.path.exists(frameworks.tf_op_library(here))


@pytest.mark.parametrize("module,missing", [("horovod_wagma.keras", "tensorflow"),
                                            ("horovod_wagma.tensorflow", "tensorflow")])
def test_importing_a_tf_frontend_without_tensorflow(module, missing):
    """TensorFlow hidden from the import system (as in a PyTorch-only environment):
    the frontend's import fails with our message, before Horovod's."""
    code = ("import importlib.util, sys\n"
            "real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda n, *a: None if n == 'tensorflow' else real(n, *a)\n"
            f"import {module}\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert f"ImportError: {module} needs {missing}" in proc.stderr, proc.stderr[-2000:]


def test_a_build_without_its_tools_names_them(tmp_path):
    """setup.py names a missing mpicxx, cmake or g++ before building anything."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-temp",
                           str(tmp_path / "temp"), "--build-lib", str(tmp_path / "lib")],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PATH=str(tmp_path)))
    assert proc.returncode != 0
    assert "horovod_wagma cannot build its engine without: mpicxx (Open MPI" in proc.stderr, \
        proc.stderr[-2000:]
    assert "cmake (" in proc.stderr and "g++ (" in proc.stderr
    assert not (tmp_path / "lib").exists()


@pytest.mark.parametrize("missing,launcher", [("mpi", "mpi"), ("gloo", "gloo")])
def test_horovod_built_without_the_launchs_transport(missing, launcher):
    """Horovod built without MPI launched by mpirun, or without Gloo launched by
    horovodrun --gloo: init() names the transport on every rank."""
    import conftest
    conftest.CURRENT["transport"] = launcher
    try:
        run = conftest.run_mpi("horovod_built_without.py", 2, missing, timeout=120)
    finally:
        conftest.CURRENT["transport"] = "mpi"
    for r in range(2):
        err = run.results[r]["error"]
        assert err is not None and err.startswith("WagmaError: launched"), err
        assert f"this Horovod was built without {missing.upper() if missing == 'mpi' else 'Gloo'}" in err, err
