"""Errors raised by horovod_wagma."""


from horovod.common.exceptions import HorovodInternalError


class WagmaError(RuntimeError):
    """A group allreduce failed: mismatched streams, engine not running, shutdown."""


class WagmaMembershipChanged(WagmaError, HorovodInternalError):
    """Under Horovod elastic, a member was lost: Horovod's ``elastic.run`` catches it
    (a HorovodInternalError) and resets, and the engine restarts over the survivors."""


def engine_error(text):
    """The exception for an error text from the engine."""
    if "membership changed:" in text:
        return WagmaMembershipChanged(text)
    return WagmaError(text)
