"""StreamNames: the names of an optimizer's streams.

Streams are named by creation order, which every rank shares as long as every rank
builds its optimizers in the same order (as Horovod requires of its own named ops):
the n-th optimizer of a framework is ``<prefix><n>``, and its streams are
``<prefix><n>.<role><i>`` for the i-th fusion buffer of a role (model, sync, ...).
"""
import collections
import itertools

_counters = collections.defaultdict(itertools.count)  # prefix -> next index


def stream_name(name, role, index):
    """The i-th fusion buffer's stream of a role, of the optimizer named ``name``."""
    return f"{name}.{role}{index}"


class StreamNames:
    def __init__(self, prefix, name=None):
        """``name``: the user's, else the next ``prefix<n>``."""
        self.name = name or f"{prefix}{next(_counters[prefix])}"

    def stream(self, role, index):
        return stream_name(self.name, role, index)

    def join(self):
        """The Horovod allreduce that makes step counts agree at join()."""
        return f"{self.name}.join"
