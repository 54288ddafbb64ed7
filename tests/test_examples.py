"""Horovod's own example scripts (PyTorch MNIST, Keras MNIST) on generated MNIST-shaped
data, with the optimizer line swapped, run to the end under stragglers and learn.
They call Horovod collectives every epoch (PyTorch: metric_average's allreduce; Keras:
the metric average and warmup callbacks) beside WAGMA's wait-avoiding rounds."""
import json
import os
import subprocess
import sys

import pytest

from conftest import LAUNCHES, MPI_ENV

pytestmark = pytest.mark.slow
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(script, optimizer, out, *args, timeout=400):
    cmd = ["mpirun", "-np", "4", "--oversubscribe", sys.executable,
           os.path.join(ROOT, "examples", script), "--optimizer", optimizer,
           "--straggle", "0.02", "--json", str(out)] + list(args)
    LAUNCHES["mpi"] += 1
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **MPI_ENV))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text()), proc.stdout


def test_pytorch_mnist_swapped_line_learns_like_horovod(tmp_path):
    horovod, _ = run_example("pytorch_mnist.py", "horovod", tmp_path / "h.json",
                             "--epochs", "3", "--no-progress")
    wagma, stdout = run_example("pytorch_mnist.py", "wagma", tmp_path / "w.json",
                                "--epochs", "3", "--no-progress")
    assert wagma["steps"] == horovod["steps"] == 3 * 32
    assert stdout.count("Test set: Average loss") == 3  # metric_average every epoch
    assert horovod["accuracy"] > 0.85, horovod  # chance is 0.1
    assert wagma["accuracy"] > horovod["accuracy"] - 0.05, (horovod, wagma)


@pytest.mark.tf
@pytest.mark.extended  # Keras's fit with Horovod's callbacks: test_keras.py, test_no_deadlock.py
def test_keras_mnist_swapped_line_learns(tmp_path):
    wagma, stdout = run_example("keras_mnist.py", "wagma", tmp_path / "w.json",
                                "--epochs", "3", "--steps", "128",
                                "--checkpoint-dir", str(tmp_path))
    assert "finished gradual learning rate warmup" in stdout
    assert wagma["checkpoints"] == [f"checkpoint-{e}.h5" for e in (1, 2, 3)]
    assert wagma["accuracy"] > 0.85, wagma
