"""Errors raised by horovod_wagma."""


from horovod.common.exceptions import HorovodInternalError


class WagmaError(RuntimeError):
    """A group allreduce failed: mismatched streams, engine not running, shutdown."""


class WagmaMembershipChanged(WagmaError, HorovodInternalError):
    """Under Horovod elastic, a member was lost: Horovod's ``elastic.run`` catches it
    (a HorovodInternalError) and resets, and the engine restarts over the survivors."""


class WagmaFenced(WagmaError):
    """Under Horovod elastic, this rank's side of the job kept half or fewer of the
    member set (without rank 0): by the majority rule it stops rather than train alone.
    Not a HorovodInternalError, so ``hvd.elastic.run`` does not reset: the script ends
    with it."""


def engine_error(text):
    """The exception for an error text from the engine."""
    if "fenced:" in text:
        return WagmaFenced(text)
    if "membership changed:" in text:
        return WagmaMembershipChanged(text)
    return WagmaError(text)
