"""Framework-agnostic pieces shared by the torch and TensorFlow frontends."""
from horovod_wagma.common.errors import WagmaError
from horovod_wagma.common.config import WagmaConfig, AVERAGING_RULES
from horovod_wagma.common.schedule import groups, default_group_size
