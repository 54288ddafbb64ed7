"""WagmaStatus: a read-only snapshot of a DistributedWagmaOptimizer's WAGMA state,
the same fields in PyTorch and Keras (``opt.wagma_status()``).

Scripts, benchmarks and tests read it instead of the optimizers' private members,
e.g. to name a stream for ``hvd.stats``, or to know whether step counts agree across
ranks (blocking global rounds) or a lagging rank skipped rounds (wait-avoiding ones).
"""
import dataclasses
from typing import Optional

from horovod_wagma.common.optimizer.stream_names import stream_name


@dataclasses.dataclass(frozen=True)
class WagmaStatus:
    # The optimizer's stream prefix: its streams are "<name>.<role><i>", the i-th
    # fusion buffer of a role ("model" every step; "sync", "forced" at global rounds
    # and sync()).
    name: str
    sync_period: int      # tau as resolved (init's default filled in)
    global_rounds: str    # "wait_avoiding" or "blocking"
    steps: int            # this rank's own optimizer steps so far
    # The round that served the last step (-1 before the first). It equals steps - 1
    # with blocking global rounds; with wait-avoiding ones a lagging rank's is larger
    # (its engine served the rounds in between). None where the framework keeps the
    # reported round inside its graph (Keras).
    served_round: Optional[int]
    group_size: Optional[int] = None   # S of the model streams now (defaults resolved)
    # The model streams' averaging rule as resolved: by default "fresh" for an
    # Adam-family optimizer, "local" for the others (averaging_policy.py).
    averaging: Optional[str] = None

    @property
    def wait_avoiding_global(self):
        return self.global_rounds == "wait_avoiding"

    def stream(self, role="model", index=0):
        """The name of a stream, e.g. for ``hvd.stats(opt.wagma_status().stream())``."""
        return stream_name(self.name, role, index)
