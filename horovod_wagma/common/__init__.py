"""Framework-agnostic pieces shared by the torch and TensorFlow frontends, in rooms:

op/         the engine's C interface, init, process sets, stream knobs, groups, stats;
optimizer/  the optimizers' core: arguments, streams, served rounds and policies;
elastic/    elastic state, membership agreement, join();
balance/    speed-balanced shares of batches and epochs.
"""
from horovod_wagma.common.op.errors import WagmaError
from horovod_wagma.common.op.config import WagmaConfig, AVERAGING_RULES
from horovod_wagma.common.op.schedule import groups, default_group_size, optimizer_group_size
