"""Membership: elastic state with no rollback (elastic_state.py), agreement on who is
in the job (membership.py) and join() across the engine and Horovod (join_both.py)."""
