"""Merge per-rank WAGMA timelines and draw them.

The engine writes one Chrome trace per rank (cpp_ops/engine/observe/timeline.h). Each can
be opened in chrome://tracing or ui.perfetto.dev on its own; this tool merges them
(pid = rank, one clock), optionally writes the merged trace, prints a per-rank
summary, and renders a PNG with one row per rank: the app lane above (calls,
coloured by round kind, with the time the app was blocked in red) and the engine
lane below (reductions, activations, passive joins).

    python -m horovod_wagma.timeline 'trace.*.json' -o timeline.png
    python -m horovod_wagma.timeline trace.0.json trace.1.json -o t.png --start-s 2 --end-s 3
    python -m horovod_wagma.timeline 'trace.*.json' --merged merged.json

The summary is the quick answer to "do fast ranks wait?": a rank's blocked time
should stay small next to its call count, and its passive joins show that others
pulled its value in without it waiting for them.
"""
import argparse
import glob
import json
import os
import sys

APP_TID = 0
ENGINE_TID = 1
# The last event of a trace whose rank shut down cleanly (see timeline.cc).
CLOSED_LABEL = "trace closed"


# ----------------------------------------------------------------------------- loading

def expand_paths(paths):
    """Files named by `paths`, expanding glob patterns; a pattern that matches nothing
    and is not a file is an error, since a silently missing rank would mislead."""
    out = []
    for p in paths:
        if os.path.exists(p):
            out.append(p)
            continue
        matches = sorted(glob.glob(p))
        if not matches:
            raise FileNotFoundError(f"no trace file matches {p!r}")
        out.extend(matches)
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


def parse_trace_text(text):
    """Events of one trace file's text. Accepts the array form, the object form
    ({"traceEvents": [...]}) and an array cut short by a killed process: the events
    that are complete are kept and a partial last one is dropped."""
    try:
        data = json.loads(text)
    except ValueError:
        return _parse_truncated(text)
    if isinstance(data, dict):
        data = data.get("traceEvents", [])
    return [e for e in data if isinstance(e, dict)]


def _parse_truncated(text):
    decoder = json.JSONDecoder()
    i = text.find("[")
    if i < 0:
        return []
    i += 1
    events = []
    n = len(text)
    while True:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n or text[i] == "]":
            break
        try:
            obj, i = decoder.raw_decode(text, i)
        except ValueError:
            break  # the unflushed or half-written tail
        if isinstance(obj, dict):
            events.append(obj)
    return events


def load_traces(paths):
    """All events of the given trace files (paths or glob patterns), merged into one
    list: metadata first, then by timestamp."""
    events = []
    for path in expand_paths(paths):
        # "replace": a name that is not valid UTF-8 (the engine passes bytes through),
        # or a tail cut inside a character, must not lose the whole rank.
        with open(path, encoding="utf-8", errors="replace") as f:
            events.extend(parse_trace_text(f.read()))
    events.sort(key=lambda e: (e.get("ph") != "M", e.get("ts", 0)))
    return events


def write_merged(events, path):
    """Writes the merged events as one trace file, one event a line."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(e, ensure_ascii=False) for e in events))
        f.write("\n]\n")


# ----------------------------------------------------------------------------- analysis

def _args(e):
    a = e.get("args")
    return a if isinstance(a, dict) else {}


def time_origin_us(events):
    """Timestamp of the earliest timed event: x = 0 in the plot."""
    stamps = [e["ts"] for e in events if e.get("ph") != "M" and "ts" in e]
    return min(stamps) if stamps else 0


def select_window(events, t0_us, start_s=None, end_s=None):
    """Timed events overlapping [start_s, end_s] (seconds after t0_us); spans are kept
    whole here and clipped where their durations are summed or drawn."""
    lo = -float("inf") if start_s is None else t0_us + start_s * 1e6
    hi = float("inf") if end_s is None else t0_us + end_s * 1e6
    out = []
    for e in events:
        if e.get("ph") == "M" or "ts" not in e:
            continue
        begin = e["ts"]
        end = begin + (e.get("dur", 0) if e.get("ph") == "X" else 0)
        if end >= lo and begin <= hi:
            out.append(e)
    return out, lo, hi


def ranks_of(events):
    return sorted({e["pid"] for e in events if isinstance(e.get("pid"), int)})


def summarize(events, lo=-float("inf"), hi=float("inf")):
    """{rank: stats} over timed events; durations clipped to [lo, hi] (microseconds)."""
    stats = {}

    def row(rank):
        return stats.setdefault(rank, {
            "calls": 0, "group_calls": 0, "global_calls": 0, "blocked_us": 0.0,
            "waits": 0, "passive_joins": 0, "passive_reductions": 0,
            "activations_sent": 0, "faults": 0, "closed": False})

    for e in events:
        rank = e.get("pid")
        if not isinstance(rank, int):
            continue
        s = row(rank)
        ph, cat, tid = e.get("ph"), e.get("cat"), e.get("tid")
        if ph == "M":
            if e.get("name") == "process_labels" and _args(e).get("labels") == CLOSED_LABEL:
                s["closed"] = True
            continue
        if ph == "X" and tid == APP_TID and cat == "app":
            s["calls"] += 1
            kind = _args(e).get("kind")
            if kind == "global":
                s["global_calls"] += 1
            elif kind == "group":
                s["group_calls"] += 1
        elif ph == "X" and tid == APP_TID and cat == "wait":
            s["waits"] += 1
            begin, end = e["ts"], e["ts"] + e.get("dur", 0)
            s["blocked_us"] += max(0.0, min(end, hi) - max(begin, lo))
        elif ph == "X" and cat == "reduction" and _args(e).get("passive"):
            s["passive_reductions"] += 1
        elif ph == "i" and cat == "join" and e.get("name") == "passive_join":
            s["passive_joins"] += 1
        elif ph == "i" and cat == "activation" and e.get("name") == "activation_sent":
            s["activations_sent"] += 1
        elif ph == "i" and cat == "fault":
            s["faults"] += 1
    return stats


def format_summary(stats, window_s=None):
    """The per-rank table printed to stdout."""
    lines = []
    if window_s is not None:
        lines.append(f"window: {window_s:.3f} s")
    lines.append(f"{'rank':>4} {'calls':>6} {'group':>6} {'global':>6} {'blocked_s':>10} "
                 f"{'blocked_ms/call':>15} {'passive_joins':>13} {'faults':>6}")
    for rank in sorted(stats):
        s = stats[rank]
        blocked_s = s["blocked_us"] / 1e6
        per_call = (s["blocked_us"] / 1e3 / s["calls"]) if s["calls"] else 0.0
        note = "" if s["closed"] else "  (trace incomplete: rank did not close it)"
        lines.append(f"{rank:>4} {s['calls']:>6} {s['group_calls']:>6} "
                     f"{s['global_calls']:>6} {blocked_s:>10.4f} {per_call:>15.3f} "
                     f"{s['passive_joins']:>13} {s['faults']:>6}{note}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- drawing

COLORS = {
    "group": "#4c9be8",      # app call, group round
    "global": "#1f3f99",     # app call, global round
    "other": "#9e9e9e",      # app call without a kind
    "wait": "#e0352b",       # app blocked waiting for the result
    "reduction": "#5cb85c",  # engine: a round the app had entered
    "passive": "#f0ad4e",    # engine: a round joined passively
}
LANE_H = 0.38   # height of one lane; a rank's row is 1.0 tall
APP_Y = 0.08    # offsets within the row (y grows downwards: rank 0 on top)
ENGINE_Y = 0.52


def _bars(events, lo, hi, t0):
    """(start_s, width_s) pairs, clipped to the window."""
    out = []
    for e in events:
        begin = max(e["ts"], lo)
        end = min(e["ts"] + e.get("dur", 0), hi)
        out.append(((begin - t0) / 1e6, max(end - begin, 0) / 1e6))
    return out


def plot(events, out_path, start_s=None, end_s=None):
    """Renders the timeline PNG; returns (ranks, window_start_s, window_end_s)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    t0 = time_origin_us(events)
    timed, lo, hi = select_window(events, t0, start_s, end_s)
    ranks = ranks_of(events)
    row_of = {r: i for i, r in enumerate(ranks)}

    ends = [e["ts"] + e.get("dur", 0) for e in timed]
    x_lo = 0.0 if start_s is None else start_s
    x_hi = end_s if end_s is not None else ((max(ends) - t0) / 1e6 if ends else 1.0)
    if end_s is None:
        x_hi *= 1.01  # room for a marker on the last event
    if x_hi <= x_lo:
        x_hi = x_lo + 1e-3

    height = min(2.0 + 0.55 * len(ranks), 40)
    fig, ax = plt.subplots(figsize=(14, height))

    # Group bars by (row, style) so that each group is one broken_barh call: a long
    # run has many thousands of spans.
    groups = {}
    markers = {}
    for e in timed:
        row = row_of.get(e.get("pid"))
        if row is None:
            continue
        ph, cat, tid, a = e.get("ph"), e.get("cat"), e.get("tid"), _args(e)
        if ph == "X":
            if tid == APP_TID and cat == "app":
                kind = a.get("kind") if a.get("kind") in ("group", "global") else "other"
                groups.setdefault((row, "app", kind), []).append(e)
            elif tid == APP_TID and cat == "wait":
                groups.setdefault((row, "wait", "wait"), []).append(e)
            elif cat == "reduction":
                style = "passive" if a.get("passive") else "reduction"
                groups.setdefault((row, "engine", style), []).append(e)
        elif ph == "i":
            name = e.get("name")
            if cat == "activation" and name in ("activation_sent", "activation_received"):
                key = name
            elif cat == "join" and name == "passive_join":
                key = name
            elif cat == "fault":
                key = "fault"
            else:
                continue
            x = (e["ts"] - t0) / 1e6
            markers.setdefault(key, []).append((x, row + ENGINE_Y + LANE_H / 2))

    for (row, lane, style), evs in groups.items():
        bars = _bars(evs, lo, hi, t0)
        if lane == "app":
            ax.broken_barh(bars, (row + APP_Y, LANE_H), facecolors=COLORS[style],
                           edgecolor="none", zorder=2)
        elif lane == "wait":
            # Narrower and on top: the part of a call during which the app was blocked.
            ax.broken_barh(bars, (row + APP_Y + LANE_H * 0.2, LANE_H * 0.6),
                           facecolors=COLORS["wait"], edgecolor="none", zorder=3)
        else:
            hatch = "////" if style == "passive" else None
            ax.broken_barh(bars, (row + ENGINE_Y, LANE_H), facecolors=COLORS[style],
                           edgecolor="#7a5310" if hatch else "none", hatch=hatch,
                           linewidth=0.0, zorder=2)

    marker_style = {
        "activation_sent": dict(marker=">", color="black", s=14),
        "activation_received": dict(marker="<", color="#555555", s=14),
        "passive_join": dict(marker="v", color="#b35900", s=22),
        "fault": dict(marker="X", color="#c00000", s=40),
    }
    for key, pts in markers.items():
        xs, ys = zip(*pts)
        ax.scatter(xs, ys, zorder=4, linewidths=0, **marker_style[key])

    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(len(ranks), 0)
    ticks, labels = [], []
    for r, row in row_of.items():
        ticks += [row + APP_Y + LANE_H / 2, row + ENGINE_Y + LANE_H / 2]
        labels += [f"rank {r} app", "engine"]
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=7 if len(ranks) > 8 else 9)
    for row in range(1, len(ranks)):
        ax.axhline(row, color="#dddddd", linewidth=0.8, zorder=1)
    ax.set_xlabel("seconds since the first event")
    ax.set_title(f"WAGMA timeline: {len(ranks)} rank{'s' if len(ranks) != 1 else ''}, "
                 f"{x_lo:.3f} s to {x_hi:.3f} s")

    legend = [
        Patch(color=COLORS["group"], label="call, group round"),
        Patch(color=COLORS["global"], label="call, global round"),
        Patch(color=COLORS["wait"], label="app blocked (wait)"),
        Patch(color=COLORS["reduction"], label="reduction"),
        Patch(facecolor=COLORS["passive"], edgecolor="#7a5310", hatch="////",
              label="reduction, passive join"),
    ]
    for key, label in (("activation_sent", "activation sent"),
                       ("activation_received", "activation received"),
                       ("passive_join", "passive join"), ("fault", "fault")):
        st = marker_style[key]
        legend.append(Line2D([], [], linestyle="none", marker=st["marker"],
                             color=st["color"], label=label))
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.005, 1.0),
              fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)
    return ranks, x_lo, x_hi


# ----------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m horovod_wagma.timeline",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="per-rank trace files or glob patterns")
    ap.add_argument("-o", "--output", help="PNG to write")
    ap.add_argument("--merged", help="also write the merged trace here")
    ap.add_argument("--start-s", type=float, help="window start, seconds after the first event")
    ap.add_argument("--end-s", type=float, help="window end, seconds after the first event")
    args = ap.parse_args(argv)

    try:
        events = load_traces(args.traces)
    except OSError as exc:
        print(f"horovod_wagma.timeline: {exc}", file=sys.stderr)
        return 2
    if args.merged:
        write_merged(events, args.merged)

    t0 = time_origin_us(events)
    timed, lo, hi = select_window(events, t0, args.start_s, args.end_s)
    metadata = [e for e in events if e.get("ph") == "M"]
    stats = summarize(metadata + timed, lo, hi)
    ends = [e["ts"] + e.get("dur", 0) for e in timed]
    win_lo = max(lo, t0)
    win_hi = min(hi, max(ends)) if ends else win_lo
    print(format_summary(stats, (win_hi - win_lo) / 1e6))

    if args.output:
        plot(events, args.output, args.start_s, args.end_s)
        print(f"wrote {args.output}")
    if args.merged:
        print(f"wrote {args.merged} ({len(events)} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
