"""WagmaCheckpoint: what a DistributedWagmaOptimizer's checkpoint carries beyond the
wrapped optimizer's own state, and the checks a resumed job makes, for both
frameworks.

The recipe is Horovod's: every rank calls ``sync(checkpoint=True)``, one rank saves,
every rank loads the same file. After that sync() the models and the optimizer
state are the exact average, the same on every rank, so one copy of them resumes
every rank. Two things are not averaged and are carried here:

- the step count, which numbers the rounds (every rank resumes from the saver's);
- drift correction's control variates, one per rank: c_i learns how far rank i's
  data pulls its first moment from the mean, so rank i must get its own back. The
  sync gathers them (an allgather of every rank's variates, at checkpoint time only),
  and the record keeps them in the order of the optimizer's ranks.

A resumed job's engine numbers its rounds from 0 again: its first round is a global
one (round 0 validates every stream), and round r after the resume is the round the
uninterrupted job ran at step ``steps + r``, shifted by the resume point within the
period. With every round global (``sync_period=1``) the schedules are the same and a
deterministic run resumes exactly.

Record (a plain dict, so torch.save and pickle keep it):
    version       RECORD_VERSION
    world_size    ranks of the optimizer's process set when it was saved
    knobs         {knob: resolved value} of KNOBS
    steps         the saver's optimizer steps
    variates      one list of arrays per rank, in rank order (None: not gathered,
                  the record was made without sync(checkpoint=True) since the last
                  step, or drift correction is off)
"""
RECORD_KEY = "wagma"
RECORD_VERSION = 1
# The knobs a checkpoint's state depends on: its rounds' schedule and rules, and
# what the state and the variates mean. A resume with other values is refused.
KNOBS = ("group_size", "sync_period", "averaging", "wait_avoiding", "global_rounds",
         "max_staleness", "average_optimizer_state", "drift_correction", "second_moment")


class CheckpointMismatch(ValueError):
    """A checkpoint that does not fit the optimizer that loads it."""


def resolved_knobs(core):
    """{knob: value} of KNOBS for an OptimizerCore, defaults resolved as its streams
    use them (so a checkpoint saved with S left at None and one saved with the S it
    resolved to compare equal)."""
    stream = core.stream_knobs
    knobs = core.knobs
    return {
        "group_size": stream["group_size"],
        "sync_period": core.sync_period,
        "averaging": core.config.averaging,
        "wait_avoiding": core.config.wait_avoiding,
        "global_rounds": core.config.global_rounds,
        "max_staleness": core.config.resolved_max_staleness,
        "average_optimizer_state": knobs.average_optimizer_state,
        "drift_correction": float(knobs.drift_correction or 0.0),
        "second_moment": knobs.second_moment,
    }


def make_record(core, world_size, steps, variates):
    """The record of an optimizer with OptimizerCore ``core`` over ``world_size``
    ranks after ``steps`` steps; ``variates``: every rank's, or None."""
    return {"version": RECORD_VERSION, "world_size": int(world_size),
            "knobs": resolved_knobs(core), "steps": int(steps), "variates": variates}


# How a user starts WAGMA's state afresh instead, per framework (the refusals name it).
AFRESH_TORCH = f"drop the '{RECORD_KEY}' entry to start WAGMA's state afresh"
AFRESH_KERAS = ("restore the model alone (tf.train.Checkpoint(model=model)) to start "
                "the optimizer afresh")


def check_record(record, core, world_size, afresh=AFRESH_TORCH):
    """CheckpointMismatch naming the first difference between ``record`` and the
    loading optimizer, and ``afresh``; every rank loads the same file, so every rank
    raises alike."""
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION:
        found = record.get("version") if isinstance(record, dict) else type(record).__name__
        raise CheckpointMismatch(
            f"the checkpoint's WAGMA record has version {found!r}; this horovod_wagma "
            f"reads version {RECORD_VERSION}")
    if record["world_size"] != world_size:
        raise CheckpointMismatch(
            f"the checkpoint was saved by {record['world_size']} ranks and is loaded by "
            f"{world_size}: drift correction's variates are per rank. Resume with "
            f"{record['world_size']} ranks, or {afresh}")
    here = resolved_knobs(core)
    for knob in KNOBS:
        saved = record["knobs"].get(knob)
        if saved != here[knob]:
            raise CheckpointMismatch(
                f"the checkpoint was saved with {knob}={saved!r} and is loaded by an "
                f"optimizer with {knob}={here[knob]!r}; pass the same {knob}, or {afresh}")


def rebased_round_base(steps_before, round_base_before, resumed_steps):
    """The round base after a load: the engine's rounds go on from where they are
    (steps - base stays), while the step count becomes the checkpoint's. In a new
    process both are 0 and the base becomes the checkpoint's steps."""
    return resumed_steps - (steps_before - round_base_before)
