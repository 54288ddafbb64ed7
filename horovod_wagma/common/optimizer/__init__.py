"""The optimizers' framework-agnostic core: their arguments (optimizer_knobs.py,
horovod_arguments.py), streams and served rounds (optimizer_core.py, stream_names.py,
fusion_plan.py, rounds.py), the averaging, drift, quasi-global and second-moment
policies, the fp16 rule, the step clock, the wrapped class and the status snapshot."""
