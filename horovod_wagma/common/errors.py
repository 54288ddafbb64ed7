"""Errors raised by horovod_wagma."""


class WagmaError(RuntimeError):
    """A group allreduce failed: mismatched streams, engine not running, shutdown."""
