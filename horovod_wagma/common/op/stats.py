"""Per-stream statistics of this rank's engine, shared by the frontends' ``stats()``.

For each stream (one name = one tensor):
  rounds, global_rounds     rounds the app entered and collected;
  activations_sent          activation messages this rank sent;
  passive_joins             rounds its engine joined for it, with its published value;
  staleness_mean/_max       how many rounds old those published values were;
  group_wait_s, global_wait_s  time the app was blocked collecting results;
  bytes_sent                reduction payload sent;
  errors                    rounds that ended in an error;
  rounds_skipped            (wait-avoiding global rounds) rounds the app skipped
                            because its engine had served them, and a newer one,
                            while it computed;
  rounds_left_out           (wait-avoiding global rounds) rounds this engine joined
                            with a value older than max_staleness rounds while its
                            app was also more than max_staleness steps behind the
                            round's most advanced member: the value was left out of
                            the average, and this rank still received it. Nobody
                            ever waits for a rank's app in this mode;
  rounds_kept_ahead         (wait-avoiding global rounds) rounds joined with a value
                            older than max_staleness rounds that still counted,
                            because its app was not that far behind in steps (it
                            waited, e.g. in a Horovod collective, while a lagging
                            rank drove the rounds);
  grace_held, grace_caught  passive joins this engine held back a little for its
                            app (the grace window, HOROVOD_WAGMA_GRACE_FRACTION),
                            and of those the rounds its app entered in time, with
                            its fresh value;
  contribution_age_mean/_max/_histogram
                            passive joins whose value entered the average, by age:
                            rounds between the app's last entry into the stream and
                            the round joined, or (wait-avoiding global rounds) the
                            steps its app was behind the round's most advanced
                            member if fewer (never above max_staleness then).
"""
from horovod_wagma.common.op import engine_lib


def _readable(raw):
    joins = raw["passive_joins"]
    ages = {int(k): v for k, v in raw["age_histogram"].items()}
    aged = sum(ages.values())
    return {
        "rounds": raw["rounds"],
        "global_rounds": raw["global_rounds"],
        "activations_sent": raw["activations_sent"],
        "passive_joins": joins,
        "staleness_mean": raw["staleness_sum"] / joins if joins else 0.0,
        "staleness_max": raw["staleness_max"],
        "group_wait_s": raw["group_wait_us"] / 1e6,
        "global_wait_s": raw["global_wait_us"] / 1e6,
        "bytes_sent": raw["bytes_sent"],
        "errors": raw["errors"],
        "rounds_skipped": raw["rounds_skipped"],
        "rounds_left_out": raw["rounds_left_out"],
        "rounds_kept_ahead": raw["rounds_kept_ahead"],
        "grace_held": raw["grace_held"],
        "grace_caught": raw["grace_caught"],
        "contribution_age_mean": sum(a * n for a, n in ages.items()) / aged if aged else 0.0,
        "contribution_age_max": max(ages) if ages else 0,
        "contribution_age_histogram": dict(sorted(ages.items())),
    }


def stream_stats(name=None):
    """All streams as {name: stats}, or one stream's stats when ``name`` is given."""
    if not engine_lib.started():
        streams = {}
    else:
        streams = {k: _readable(v) for k, v in engine_lib.stats_json()["streams"].items()}
    if name is None:
        return streams
    if name not in streams:
        raise ValueError(f"no WAGMA stream named {name!r} on this rank; known: "
                         f"{sorted(streams)}")
    return streams[name]
