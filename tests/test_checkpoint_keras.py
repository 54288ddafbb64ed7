"""Keras checkpoints that resume WAGMA's state (docs/api.md, "Checkpoints (Keras)"),
with real ranks: model.fit with WagmaGlobalSyncCallback(checkpoint=True) and, on rank
0, ModelCheckpoint (TensorFlow's format); every rank loads; the job restarted from
the file against the same job uninterrupted, with every round a blocking global one
(deterministic), drift correction on (tests/workers/checkpoint_resume_keras.py)."""
import os

import numpy as np
import pytest

from conftest import run_mpi

pytestmark = pytest.mark.tf

P, STEPS, SAVE_AT = 4, 10, 4


def weights(run):
    return {r: np.concatenate([np.array(w) for w in res["weights"]])
            for r, res in run.results.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ckpt") / "keras")
    out = {mode: run_mpi("checkpoint_resume_keras.py", P, mode, path, STEPS, SAVE_AT,
                         timeout=240) for mode in ("full", "saveplain")}
    assert os.path.exists(path + ".index") and os.path.exists(path + ".plain.index")
    for mode in ("resume", "plain"):
        out[mode] = run_mpi("checkpoint_resume_keras.py", P, mode, path, STEPS, SAVE_AT,
                            timeout=240)
    out["size"] = run_mpi("checkpoint_resume_keras.py", 2, "size", path, STEPS, SAVE_AT,
                          timeout=240)
    return out


def test_resumed_job_continues_the_uninterrupted_one_exactly(runs):
    full, resumed = weights(runs["full"]), weights(runs["resume"])
    for r in range(P):
        np.testing.assert_array_equal(resumed[r], full[r])
        res = runs["resume"].results[r]
        # The steps after the save point (the full job's losses are those alone).
        assert res["losses"] == runs["full"].results[r]["losses"], r
        # The step count goes on from the checkpoint's, the same on every rank.
        assert res["steps"] == STEPS, res["steps"]


def test_without_the_variates_the_resume_differs(runs):
    """The control: a record saved after sync() without checkpoint=True (the same
    training and the same sync, so the same model, state and step count; no
    variates: they restart at zero) gives another trajectory, so the exact match
    above is the variates' doing."""
    full, plain = weights(runs["full"]), weights(runs["plain"])
    for r in range(P):
        assert not np.array_equal(plain[r], full[r])
        assert runs["plain"].results[r]["steps"] == STEPS


def test_other_knobs_are_refused_on_every_rank(runs):
    for r in range(P):
        err = runs["resume"].results[r]["errors"]["knobs"]
        assert err is not None and err.startswith("CheckpointMismatch"), err
        assert "sync_period=1" in err and "sync_period=5" in err, err
        assert "tf.train.Checkpoint(model=model)" in err, err


def test_another_world_size_is_refused_on_every_rank(runs):
    for r in range(2):
        err = runs["size"].results[r]["errors"]["size"]
        assert err is not None and "saved by 4 ranks and is loaded by 2" in err, err
        assert runs["size"].results[r]["steps"] == 0  # nothing was loaded


def test_checkpoint_sync_callback_needs_a_wagma_optimizer(runs):
    for r in range(2):
        err = runs["size"].results[r]["errors"]["callback"]
        assert err is not None and "needs a model compiled with a DistributedWagmaOptimizer" \
            in err and "SGD" in err, err
