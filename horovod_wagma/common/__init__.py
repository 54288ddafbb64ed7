"""Framework-agnostic pieces shared by the torch and TensorFlow frontends.

The op: config.py (knobs), schedule.py (groups), basics.py (init, process sets, join),
engine_lib.py (the engine's C interface), stats.py, errors.py.
The optimizers' core: optimizer_knobs.py (their arguments), horovod_arguments.py
(Horovod's), optimizer_core.py (streams, served rounds, join), rounds.py,
stream_names.py, fp16_rule.py, fusion_plan.py, wrapped_class.py, quasi_global.py.
"""
from horovod_wagma.common.errors import WagmaError
from horovod_wagma.common.config import WagmaConfig, AVERAGING_RULES
from horovod_wagma.common.schedule import groups, default_group_size, optimizer_group_size
