"""Configuration of WAGMA streams: defaults set by ``init`` and per-call overrides.

Every knob must match across ranks for a given stream; round 0 checks that they do.
Invalid values raise ``ValueError`` on the calling rank before anything is enqueued.
"""
import dataclasses
from typing import Optional

AVERAGING_RULES = {"fresh": 0, "paper": 1, "local": 2}
# Rounds are tagged modulo a window; see cpp_ops/engine/message_tags.h (kMaxSyncPeriod).
MAX_SYNC_PERIOD = 4096
# The engine holds group_size in an int32; any S >= P already means one group.
MAX_GROUP_SIZE = 2**31 - 1


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
    the smallest power of two >= sqrt(P)."""
    group_size: Optional[int] = None
    sync_period: int = 10
    averaging: str = "fresh"
    wait_avoiding: bool = True

    def __post_init__(self):
        validate_group_size(self.group_size)
        validate_sync_period(self.sync_period)
        validate_averaging(self.averaging)
        if not isinstance(self.wait_avoiding, bool):
            raise ValueError(f"wait_avoiding must be a bool, got {self.wait_avoiding!r}")

    def override(self, group_size=None, sync_period=None, averaging=None,
                 wait_avoiding=None):
        """A copy with the given (non-None) per-call overrides applied and validated."""
        if group_size is None and sync_period is None and averaging is None \
                and wait_avoiding is None:
            return self  # the common per-call path
        changes = {k: v for k, v in dict(group_size=group_size, sync_period=sync_period,
                                         averaging=averaging,
                                         wait_avoiding=wait_avoiding).items()
                   if v is not None}
        return dataclasses.replace(self, **changes) if changes else self

    def resolved_group_size(self, num_ranks):
        if self.group_size is not None:
            return self.group_size
        from horovod_wagma.common.schedule import default_group_size
        return default_group_size(num_ranks)


# average_optimizer_state= choices of the optimizers (see DistributedWagmaOptimizer):
#   "never"   - the paper: optimizer state (momentum, Adam moments) stays local;
#   "on_sync" - state is averaged at every global round;
#   "always"  - state is averaged with the parameters in every round, in the same buffers.
STATE_AVERAGING = ("never", "on_sync", "always")


def validate_state_averaging(value):
    if value not in STATE_AVERAGING:
        raise ValueError(f"average_optimizer_state must be one of {STATE_AVERAGING}, "
                         f"got {value!r}")
    return value
