"""OptimizerKnobs: the WAGMA arguments of a DistributedWagmaOptimizer, one dataclass
for both frameworks.

Validation depends on the arguments alone (no rank, no engine state), so every rank
raises the same error for the same call, before any stream exists; each message
names the argument. Knobs left at None take ``init()``'s value when the optimizer
resolves them into a stream configuration (OptimizerCore).
"""
import dataclasses
from typing import Optional

from horovod_wagma.common.optimizer import averaging_policy
from horovod_wagma.common.optimizer.second_moment_policy import MODES
from horovod_wagma.common.op.config import (AVERAGING_RULES, KNOBS, STATE_AVERAGING,
                                         WagmaConfig, validate_state_averaging)


@dataclasses.dataclass(frozen=True)
class OptimizerKnobs:
    """group_size S (None: init's when init() was given one, else the optimizers' own
    default, schedule.optimizer_group_size, resolved per call by OptimizerCore);
    sync_period tau (every tau-th round is global); averaging, the rule for stale
    contributions; wait_avoiding (False: group rounds wait for every member);
    global_rounds (None: "wait_avoiding", or "blocking" when wait_avoiding=False);
    max_staleness (None: sync_period); average_optimizer_state; drift_correction
    (alpha of the control variates, 0: off; None: common/optimizer/drift_policy.py's
    DEFAULT_ALPHA where the wrapped optimizer keeps a first moment and the state is
    averaged "on_sync", else off); second_moment ("group": Adam's second moment from
    the group's mean gradient, "local": each rank's own; None: "group" for the Adam
    family in PyTorch, resolved by the factory).

    The optimizers' defaults differ from init()'s op defaults ("fresh", blocking):
    "local" (SGD) and wait-avoiding global rounds won the time-to-accuracy matrix
    (docs/benchmarks.md, "How the optimizers' defaults were chosen"), while the op
    keeps its plain semantics. So does
    "on_sync" state averaging, the default in both frameworks."""
    group_size: Optional[int] = None
    sync_period: int = 10
    averaging: Optional[str] = None
    wait_avoiding: bool = True
    global_rounds: Optional[str] = None
    max_staleness: Optional[int] = None
    average_optimizer_state: str = "on_sync"
    drift_correction: Optional[float] = None
    second_moment: Optional[str] = None

    def __post_init__(self):
        if self.global_rounds is None:
            # Group rounds that wait for every member would wait for a slow rank at
            # global rounds anyway, so those are blocking too.
            object.__setattr__(self, "global_rounds",
                               "wait_avoiding" if self.wait_avoiding is True else "blocking")
        # ValueError naming the argument. A rule left at None is the factory's to
        # resolve; the others are checked here (an empty string too).
        WagmaConfig(**dict(self.stream_knobs(), averaging=averaging_policy.OTHER_DEFAULT
                           if self.averaging is None else self.averaging))
        if self.averaging == "delta":
            model_rules = ", ".join(repr(r) for r in AVERAGING_RULES if r != "delta")
            raise ValueError("averaging='delta' is for bookkeeping streams, not a model: "
                             f"use one of {model_rules}")
        validate_state_averaging(self.average_optimizer_state)
        if self.drift_correction is not None and not 0.0 <= self.drift_correction <= 1.0:
            raise ValueError(f"drift_correction must be in [0, 1], got "
                             f"{self.drift_correction!r}")
        if self.second_moment is not None and self.second_moment not in MODES:
            raise ValueError(f"second_moment must be 'group' or 'local', got "
                             f"{self.second_moment!r}")
        if self.drift_correction and self.average_optimizer_state != "on_sync":
            raise ValueError("drift_correction needs average_optimizer_state='on_sync' "
                             "(it learns from the state averaged at global rounds), got "
                             f"{self.average_optimizer_state!r}")

    @classmethod
    def from_arguments(cls, arguments, framework, state_modes=STATE_AVERAGING):
        """The knobs among a factory's ``locals()`` (one field list, not one per
        framework; a knob a framework's factory lacks keeps its default), checked against the state modes ``framework``
        implements (the PyTorch optimizer implements all of STATE_AVERAGING)."""
        knobs = cls(**{f.name: arguments[f.name] for f in dataclasses.fields(cls)
                       if f.name in arguments})
        mode = knobs.average_optimizer_state
        if mode not in state_modes:
            raise ValueError(f"average_optimizer_state={mode!r} is supported by the PyTorch "
                             f"DistributedWagmaOptimizer only; the {framework} one takes "
                             f"{' or '.join(repr(m) for m in state_modes)}")
        return knobs

    def stream_knobs(self):
        """The knobs of the model's streams, as the ops take them."""
        return {k: getattr(self, k) for k in KNOBS}
