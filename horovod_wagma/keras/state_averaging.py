"""average_optimizer_state="on_sync" for Keras: the global rounds' duties.

At each step whose served round is global, or (wait-avoiding global rounds) after
which a skipped round was (OptimizerCore.duties_due), the optimizer's floating-point
state (SGD's velocities, Adam's moments, ...) is averaged through the "sync" stream,
whose every round is global; the drift correction, if any, sends the moments read
before it on its own "drift" stream and learns from their moves. The PyTorch optimizer runs the same duties (torch/optimizer.py).

The test is on tensors: inside model.fit's graph the round that served a step is
known only when the step runs, so the averaging sits in a tf.cond.
"""
import tensorflow as tf

from horovod_wagma.keras.fusion import average_globally


class StateAveraging:
    def __init__(self, core, drift=None):
        """``core``: the optimizer's OptimizerCore; ``drift``: a DriftCorrection or None."""
        self._core = core
        self.drift = drift
        with tf.init_scope():
            # The round that served the last step (-1: none yet; reset by rebase()).
            self._last_served = tf.Variable(-1, dtype=tf.int64, trainable=False,
                                            name="wagma_last_served")

    @staticmethod
    def state_variables(optimizer):
        """The optimizer's floating-point state, in the same order on every rank (the
        step counter, equal everywhere, is not averaged)."""
        return [v for v in optimizer.variables if v.dtype.is_floating]

    def build(self, optimizer, all_variables, variables):
        """Before the first step: the state and the control variates exist."""
        with tf.init_scope():
            optimizer.build(all_variables)
        if self.drift:
            self.drift.create_variates(variables)

    def run_due(self, optimizer, variables, step, reported_round):
        """Averages the state (and updates the variates) if this step runs a global
        round's duties; ``step``: this step's round number, ``reported_round``: the
        round the model's op reported."""
        core = self._core
        served = core.served_round(step, reported_round)
        due = core.duties_due(step, self._last_served.read_value(), served)
        self._last_served.assign(served)

        def average():
            before = self.drift.before_average(optimizer, variables) if self.drift else None
            average_globally(self.state_variables(optimizer),
                             lambda i: core.names.stream("sync", i),
                             core.global_stream_knobs())
            if self.drift:
                self.drift.after_average(before)
            return tf.constant(True)

        return tf.cond(due, average, lambda: tf.constant(False))

    def rebase(self):
        """Horovod elastic: the engine's rounds start at 0 again."""
        self._last_served.assign(-1)
