"""The op: the engine's C interface (engine_lib.py), init and process sets (basics.py),
stream knobs (config.py), groups (schedule.py), Gloo's rendezvous, per-stream
statistics (stats.py) and WagmaError (errors.py)."""
