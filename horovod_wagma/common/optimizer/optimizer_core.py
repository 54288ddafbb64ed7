"""OptimizerCore: what the PyTorch and Keras DistributedWagmaOptimizer do alike,
with no framework in it: the streams' configuration and names, which round served a
call, the duties of global rounds, the fusion plan and join()'s step agreement.

Steps and rounds: the optimizer counts its own steps k = 0, 1, 2, ...; step k enters
round k of each model stream. With blocking global rounds round k serves step k, so
a step's round is known before the call (rounds.py decides whether it is global).
With wait-avoiding global rounds a lagging rank's engine serves rounds for it while
it computes, and its next call is served by the newest such round r >= k, which the
op reports after the call.
"""
from horovod_wagma.common.optimizer.optimizer_status import WagmaStatus
from horovod_wagma.common.op.schedule import optimizer_group_size
from horovod_wagma.common.optimizer.rounds import global_round_between, is_global_round
from horovod_wagma.common.optimizer.stream_names import StreamNames

# A stream whose every round is global and blocking: an exact average, identical on
# every rank (sync() and the Keras sync callbacks).
BLOCKING_GLOBAL = {"sync_period": 1, "global_rounds": "blocking"}


class OptimizerCore:
    def __init__(self, knobs, basics, process_set, fusion_plan, stream_prefix, name=None):
        """``knobs``: OptimizerKnobs; ``basics``: the framework's WagmaBasics (init's
        defaults fill the knobs left at None; the engine starts here). Its averaging
        rule is resolved for the wrapped optimizer (averaging_policy.resolve): init's
        op default must not fill it in."""
        if knobs.averaging is None:
            raise ValueError("OptimizerKnobs.averaging must be resolved for the wrapped "
                             "optimizer (averaging_policy.resolve) before OptimizerCore")
        self.knobs = knobs
        # Neither the call nor init() chose S: the optimizers' own default, resolved
        # for the ranks of each call (Horovod elastic changes them between resets).
        self._default_group = knobs.group_size is None and basics.config.group_size is None
        self._ranks = lambda: basics.num_ranks(process_set)
        self._rank_in_set = lambda: basics.rank_in_set(process_set)
        self.process_set = process_set
        self.config, _, _ = basics.stream_config(process_set, **self._knobs(
            knobs.stream_knobs()))
        self._stream_knobs = dict(self.config.knobs(), process_set=process_set)
        self.sync_period = self.config.sync_period
        self.wait_avoiding_global = self.config.global_rounds == "wait_avoiding"
        self.fusion_plan = fusion_plan
        self.names = StreamNames(stream_prefix, name)
        self._join = basics.join

    def _knobs(self, knobs):
        if self._default_group:
            knobs = dict(knobs, group_size=optimizer_group_size(self._ranks()))
        return knobs

    def num_ranks(self):
        """The ranks of the optimizer's process set now."""
        return self._ranks()

    def rank_in_set(self):
        """This rank's position in the optimizer's process set."""
        return self._rank_in_set()

    @property
    def stream_knobs(self):
        """The model streams' knobs, as the ops take them."""
        return self._knobs(self._stream_knobs)

    def served_round(self, step, reported_round):
        """The round that served step ``step``: the step's own round with blocking
        global rounds, else the round the op reported (``reported_round``)."""
        return reported_round if self.wait_avoiding_global else step

    def served_global(self, step, reported_round):
        """Whether the round that served the step is global (the fp16 rule's test).
        Python ints or integer tensors (rounds.is_global_round)."""
        return is_global_round(self.served_round(step, reported_round), self.sync_period)

    def duties_due(self, step, last_served, served):
        """Whether this step runs a global round's duties (averaging buffers and
        state): its own round is global (blocking global rounds), or some round in
        (last_served, served] was (wait-avoiding: the rounds skipped were served by
        the engine, and the other ranks ran their duties there)."""
        if self.wait_avoiding_global:
            return global_round_between(last_served, served, self.sync_period)
        return is_global_round(step, self.sync_period)

    def global_stream_knobs(self, blocking=False):
        """Knobs of a stream whose every round is global (sync_period=1), for buffers
        and state. Blocking ones are exact and identical everywhere; wait-avoiding
        ones (with wait-avoiding global rounds, unless ``blocking``) wait for nobody:
        a rank that skipped its model's global rounds contributes its published state
        there, left out when older than max_staleness rounds of this stream (at most
        one per global model round)."""
        if blocking:
            return dict(self.stream_knobs, **BLOCKING_GLOBAL)
        knobs = dict(self.stream_knobs, sync_period=1)
        if self.wait_avoiding_global:
            knobs["max_staleness"] = self.config.resolved_max_staleness
        return knobs

    def drift_stream_knobs(self):
        """Knobs of drift correction's stream (common/optimizer/drift_policy.py): the state's
        global rounds, with the "delta" rule, whose moves sum to zero over a round."""
        return dict(self.global_stream_knobs(), averaging="delta")

    def join(self, steps, max_over_ranks):
        """join(): serves the other ranks' rounds until every rank has joined, then
        agrees on step counts. With blocking global rounds step numbers are round
        numbers, so every rank takes the furthest: steps <- max over ranks of steps
        (``max_over_ranks(steps, name)``, a Horovod allreduce). With wait-avoiding
        ones each rank keeps its own count. Returns (last rank to join, steps)."""
        last = self._join()
        if not self.wait_avoiding_global:
            steps = max_over_ranks(steps, self.names.join())
        return last, steps

    def status(self, steps, served_round):
        """The optimizer's WagmaStatus, given its own step count and the round that
        served its last step (None where the framework does not track it)."""
        return WagmaStatus(self.names.name, self.sync_period, self.config.global_rounds,
                           int(steps), None if served_round is None else int(served_round),
                           self.stream_knobs["group_size"], self.config.averaging)
