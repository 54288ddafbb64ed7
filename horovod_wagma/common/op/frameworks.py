"""What each frontend needs installed, checked before it imports anything, so that a
missing piece is an ImportError naming it and saying how to get it (not Horovod's
or TensorFlow's own error from deep inside an import).

horovod_wagma builds its TensorFlow op only where TensorFlow is importable at build
time (setup.py), so a PyTorch-only environment gets a package whose
``horovod_wagma.torch`` works and whose TensorFlow and Keras modules say so.
"""
import importlib.util
import os
import sysconfig

REINSTALL = ("then build horovod_wagma again in that environment "
             "(pip install --no-build-isolation .)")


def require_modules(frontend, modules):
    """ImportError naming ``frontend`` and every module of ``modules`` ({import name:
    pip name}) that is not installed."""
    missing = [pip for name, pip in modules.items() if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(f"{frontend} needs {', '.join(missing)}, which this Python "
                          f"environment does not have: pip install {' '.join(missing)}, "
                          f"{REINSTALL}")


def tf_op_library(package_dir):
    """The path of the TensorFlow op library built into ``package_dir``; an ImportError
    when this installation was built without TensorFlow."""
    path = os.path.join(package_dir, "_tf_ops" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(path):
        raise ImportError(
            "horovod_wagma.tensorflow: this installation of horovod_wagma was built "
            f"without its TensorFlow op ({os.path.basename(path)} is missing): TensorFlow "
            f"was not importable when it was built. With TensorFlow installed, {REINSTALL}")
    return path
