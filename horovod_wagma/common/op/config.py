"""Configuration of WAGMA streams: defaults set by ``init`` and per-call overrides.

Every knob must match across ranks for a given stream; round 0 checks that they do.
Invalid values raise ``ValueError`` on the calling rank before anything is enqueued.
"""
import dataclasses
from typing import Optional

from horovod_wagma.common.op import engine_lib

# {name: code}: the engine's table (cpp_ops/engine/rounds/averaging_rule.cc says what each
# rule does), so that a rule added there is accepted here.
AVERAGING_RULES = engine_lib.averaging_rules()
# global_rounds=: "blocking" (the paper: every rank enters every global round) or
# "wait_avoiding" (global rounds activate and join like group rounds; docs/design.md §2.8).
GLOBAL_ROUNDS = {"blocking": 0, "wait_avoiding": 1}
# The knobs every call may override, in the order the engine's config takes them.
KNOBS = ("group_size", "sync_period", "averaging", "wait_avoiding", "global_rounds",
         "max_staleness")
# Rounds are tagged modulo a window; see cpp_ops/engine/transport/message_tags.h (kMaxSyncPeriod).
MAX_SYNC_PERIOD = 4096
# The engine holds group_size in an int32; any S >= P already means one group.
MAX_GROUP_SIZE = 2**31 - 1


def call_knobs(arguments):
    """The per-call knobs among an op's ``locals()``: the ops spell their knobs out in
    their signatures (for help() and positional calls), and KNOBS once here."""
    return {k: arguments[k] for k in KNOBS}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def validate_group_size(group_size):
    if group_size is not None and (not _is_int(group_size)
                                   or not 2 <= group_size <= MAX_GROUP_SIZE):
        raise ValueError(f"group_size must be an integer in [2, {MAX_GROUP_SIZE}] or None, "
                         f"got {group_size!r}")
    return group_size


def validate_sync_period(sync_period):
    if not _is_int(sync_period) or not 1 <= sync_period <= MAX_SYNC_PERIOD:
        raise ValueError(
            f"sync_period must be an integer in [1, {MAX_SYNC_PERIOD}], got {sync_period!r}")
    return sync_period


def validate_averaging(averaging):
    if not isinstance(averaging, str) or averaging not in AVERAGING_RULES:
        raise ValueError(
            f"averaging must be one of {sorted(AVERAGING_RULES)}, got {averaging!r}")
    return averaging


def validate_global_rounds(global_rounds):
    if not isinstance(global_rounds, str) or global_rounds not in GLOBAL_ROUNDS:
        raise ValueError(f"global_rounds must be one of {sorted(GLOBAL_ROUNDS)}, "
                         f"got {global_rounds!r}")
    return global_rounds


def validate_max_staleness(max_staleness):
    if max_staleness is not None and (not _is_int(max_staleness)
                                      or not 0 <= max_staleness <= MAX_SYNC_PERIOD):
        raise ValueError(f"max_staleness must be an integer in [0, {MAX_SYNC_PERIOD}] or "
                         f"None (= sync_period), got {max_staleness!r}")
    return max_staleness


def validate_name(name):
    """A stream name is a str (any length, any Unicode, empty allowed) or None. The
    engine keeps names as C strings, so a NUL would silently cut the name short and
    alias two streams: it is refused."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    if name is not None and "\x00" in name:
        raise ValueError(f"name must not contain NUL characters, got {name[:80]!r}")
    return name


@dataclasses.dataclass(frozen=True)
class WagmaConfig:
    """The knobs of a stream. ``group_size=None`` means the default S for P ranks:
    the smallest power of two >= sqrt(P); ``max_staleness=None`` means sync_period
    (it only matters with ``global_rounds="wait_avoiding"``)."""
    group_size: Optional[int] = None
    sync_period: int = 10
    averaging: str = "fresh"
    wait_avoiding: bool = True
    global_rounds: str = "blocking"
    max_staleness: Optional[int] = None

    def __post_init__(self):
        validate_group_size(self.group_size)
        validate_sync_period(self.sync_period)
        validate_averaging(self.averaging)
        if not isinstance(self.wait_avoiding, bool):
            raise ValueError(f"wait_avoiding must be a bool, got {self.wait_avoiding!r}")
        validate_global_rounds(self.global_rounds)
        validate_max_staleness(self.max_staleness)
        if self.global_rounds == "wait_avoiding" and not self.wait_avoiding:
            raise ValueError("global_rounds='wait_avoiding' needs wait_avoiding=True: group "
                             "rounds that wait for every member would wait for the slow "
                             "rank anyway")

    def override(self, **knobs):
        """A copy with the given (non-None) per-call overrides applied and validated."""
        changes = {k: v for k, v in knobs.items() if v is not None}
        unknown = set(changes) - set(KNOBS)
        if unknown:
            raise TypeError(f"unknown WAGMA knobs: {sorted(unknown)}")
        return dataclasses.replace(self, **changes) if changes else self

    def knobs(self):
        """The knobs as keyword arguments of the ops (for streams built from this
        configuration, e.g. an optimizer's)."""
        return dataclasses.asdict(self)

    @property
    def resolved_max_staleness(self):
        return self.sync_period if self.max_staleness is None else self.max_staleness

    def engine_fields(self, num_ranks):
        """The engine's stream configuration (cpp_ops/engine/c_api.h,
        wagma_stream_config) as 6 ints, with S resolved for ``num_ranks``."""
        wa_global = self.global_rounds == "wait_avoiding"
        return [self.resolved_group_size(num_ranks), self.sync_period,
                AVERAGING_RULES[self.averaging], int(self.wait_avoiding),
                GLOBAL_ROUNDS[self.global_rounds],
                self.resolved_max_staleness if wa_global else 0]

    def resolved_group_size(self, num_ranks):
        if self.group_size is not None:
            return self.group_size
        from horovod_wagma.common.op.schedule import default_group_size
        return default_group_size(num_ranks)


# average_optimizer_state= choices of the optimizers (see DistributedWagmaOptimizer):
#   "never"   - the paper: optimizer state (momentum, Adam moments) stays local;
#   "on_sync" - state is averaged at every global round;
#   "always"  - state is averaged with the parameters in every round, in the same buffers;
#   "quasi_global" - SGD momentum is rebuilt from the averaged model's change (nothing
#             extra is sent; Lin et al. 2021, horovod_wagma/common/optimizer/quasi_global.py).
STATE_AVERAGING = ("never", "on_sync", "always", "quasi_global")


def validate_state_averaging(value):
    if value not in STATE_AVERAGING:
        raise ValueError(f"average_optimizer_state must be one of {STATE_AVERAGING}, "
                         f"got {value!r}")
    return value
