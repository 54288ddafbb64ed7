"""KerasCheckpointRecord: the Keras optimizer's WAGMA state in TensorFlow's object-based
checkpoints (``tf.train.Checkpoint``, ``model.save_weights`` in the TF format, and
``ModelCheckpoint`` writing that format); what it holds and the checks on loading are
common/optimizer/checkpoint.py's, shared with the PyTorch optimizer.

It is a child of the optimizer in the checkpoint's object graph, saved as three
tensors and restored through one Python hook, so a load is checked and applied as
one whole whichever way the checkpoint was restored:

- "record": the record without its variates (version, world size, resolved knobs),
  as JSON;
- "steps": the optimizer's step count, which numbers its rounds;
- "variates": every rank's drift variates, gathered by ``sync(checkpoint=True)``,
  flat in float64 (exact for every float dtype) in rank order, and "variates_steps":
  the step count at which they were gathered (-1: never). A record saved after
  another step carries no variates: the loading ranks start them at zero.

Loading (``_restore_from_tensors``, eager) raises CheckpointMismatch on every rank
before anything changes, then sets the step count, rebases the rounds (the engine's
keep their numbering: common/optimizer/checkpoint.rebased_round_base) and gives each
rank its own variates, or keeps them until the optimizer creates its variates at its
first step (a resumed job loads before it trains). The per-process round base is not
saved.
"""
import json

import numpy as np
import tensorflow as tf

from horovod_wagma.common.optimizer import checkpoint

_Trackable = tf.__internal__.tracking.Trackable


class KerasCheckpointRecord(_Trackable):
    def __init__(self, core, steps, round_base, drift):
        """``core``: the optimizer's OptimizerCore; ``steps``, ``round_base``: its step
        count and round base variables; ``drift``: its DriftCorrection or None."""
        self._core = core
        self._steps = steps
        self._round_base = round_base
        self._drift = drift
        with tf.init_scope():
            # Process-local, not children of this object: what sync(checkpoint=True)
            # gathered, and when.
            self._gathered = tf.Variable(tf.zeros([0], tf.float64), trainable=False,
                                         shape=tf.TensorShape([None]),
                                         name="wagma_gathered_variates")
            self._gathered_at = tf.Variable(-1, dtype=tf.int64, trainable=False,
                                            name="wagma_gathered_at")

    def gather(self, allgather):
        """sync(checkpoint=True)'s part: every rank's variates, in rank order, through
        ``allgather`` (Horovod's, which concatenates the ranks' tensors)."""
        if self._drift:
            self._gathered.assign(allgather(self._drift.flat_variates()))
        self._gathered_at.assign(self._steps.read_value())

    def _record_json(self):
        record = checkpoint.make_record(self._core, self._core.num_ranks(), 0, None)
        del record["steps"], record["variates"]  # saved as tensors of their own
        return json.dumps(record, sort_keys=True)

    def _serialize_to_tensors(self):
        return {"record": tf.constant(self._record_json()),
                "steps": self._steps.read_value(),
                "variates": self._gathered.read_value(),
                "variates_steps": self._gathered_at.read_value()}

    def _restore_from_tensors(self, restored_tensors):
        record = json.loads(restored_tensors["record"].numpy().decode())
        steps = int(restored_tensors["steps"].numpy())
        checkpoint.check_record(record, self._core, self._core.num_ranks(),
                                checkpoint.AFRESH_KERAS)
        base = checkpoint.rebased_round_base(int(self._steps.numpy()),
                                             int(self._round_base.numpy()), steps)
        self._steps.assign(steps)
        self._round_base.assign(base)
        self._gathered_at.assign(-1)
        if self._drift:
            variates = restored_tensors["variates"].numpy()
            gathered_at = int(restored_tensors["variates_steps"].numpy())
            if gathered_at == steps and variates.size:
                own = np.split(variates, self._core.num_ranks())[self._core.rank_in_set()]
                self._drift.restore_flat(own)
            else:
                self._drift.restore_flat(None)  # not gathered at this step: zero
        return tf.no_op()
