"""The Chrome-trace timeline: the C++ writer (cpp_ops/engine/observe/timeline.cc, compiled
here on its own with g++, no MPI needed) and horovod_wagma.timeline, which merges
and draws the per-rank files."""
import collections
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENGINE = os.path.join(ROOT, "cpp_ops", "engine")
VIEWER = [sys.executable, "-m", "horovod_wagma.timeline"]   # the package's viewer

RANK = 3
THREADS = 4
ITERS = 150
# Stream names are arbitrary user strings; each of these has broken a naive writer.
NAMES = [
    "plain",
    'quote"inside',
    "back\\slash\\",
    "new\nline\r\tand\x01\x1f\x7f",
    "grüße/模型/🚀",
    "L" * 10_000,
    "",
]


def load_plot_module():
    import horovod_wagma.timeline
    return horovod_wagma.timeline


def cpp_literal(s):
    # Octal escapes take at most three digits, so (unlike \x) they never swallow the
    # character that follows.
    return '"' + "".join("\\%03o" % b for b in s.encode("utf-8")) + '"'


DRIVER = r"""
#include "observe/timeline.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

using wagma::Timeline;

static const std::vector<std::string> kNames = {NAMES_INIT};

static int failures = 0;
#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "CHECK failed line %d: %s\n", __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

static long FileSize(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];

  CHECK(wagma::TimelinePath("trace.json", 3) == "trace.3.json");
  CHECK(wagma::TimelinePath("a.b/trace", 3) == "a.b/trace.3");
  // api.md: '.<rank>' goes before the FILE name's extension: a dot in any directory,
  // not only the first, is not one.
  CHECK(wagma::TimelinePath("/tmp/run.1/trace", 3) == "/tmp/run.1/trace.3");
  CHECK(wagma::TimelinePath("/tmp/run.1/logs/trace.json", 3) == "/tmp/run.1/logs/trace.3.json");
  CHECK(wagma::TimelinePath("d/.trace", 3) == "d/.trace.3");
  CHECK(wagma::TimelinePath("t{rank}/x_{rank}.json", 12) == "t12/x_12.json");
  CHECK(wagma::JsonEscape(std::string("a\"b\\c\n\x01", 7)) == "a\\\"b\\\\c\\u000a\\u0001");

  {  // Disabled: no file, calls are no-ops.
    Timeline t;
    CHECK(t.Open("", RANK).empty());
    CHECK(!t.enabled());
    t.Span(Timeline::kApp, "app", "x", 1, 2);
    t.Close();
  }
  {  // An unopenable path is reported, not fatal.
    Timeline t;
    const std::string err = t.Open(dir + "/no/such/dir/trace.json", RANK);
    CHECK(!err.empty());
    CHECK(!t.enabled());
    std::printf("open error: %s\n", err.c_str());
  }
  {  // {rank} substitution, and a span whose clock stepped backwards.
    Timeline t;
    CHECK(t.Open(dir + "/sub_{rank}_trace.json", RANK).empty());
    CHECK(t.path() == dir + "/sub_3_trace.json");
    t.Span(Timeline::kEngine, "reduction", "backwards", 100, 50);
  }  // the destructor closes

  Timeline t;
  const std::string err = t.Open(dir + "/trace.json", RANK);
  CHECK(err.empty());
  CHECK(t.enabled());
  const std::string path = t.path();
  std::printf("path: %s\n", path.c_str());
  const long header_size = FileSize(path);
  CHECK(header_size > 0);  // metadata is on disk at once

  std::vector<std::thread> threads;
  for (int th = 0; th < THREADS; ++th) {
    threads.emplace_back([&t, th] {
      for (int i = 0; i < ITERS; ++i) {
        const std::string& name = kNames[(th + i) % kNames.size()];
        const std::string args = "\"thread\":" + std::to_string(th) + ",\"i\":" +
                                 std::to_string(i);
        const int64_t now = Timeline::NowUs();
        const auto lane = (i % 2) ? Timeline::kEngine : Timeline::kApp;
        t.Span(lane, "app", name, now, now + i, args);
        t.Instant(lane, "activation", name, now, i % 3 ? args : "");
      }
    });
  }
  for (auto& th : threads) th.join();

  // Before Close: most events are on disk already (several flushes), and the file is
  // what a killed process would leave behind.
  const long before_close = FileSize(path);
  std::printf("size before close: %ld\n", before_close);
  CHECK(before_close > 4 * 64 * 1024);
  {
    std::ifstream in(path, std::ios::binary);
    std::ofstream out(dir + "/partial.json", std::ios::binary);
    out << in.rdbuf();
  }

  t.Close();
  CHECK(!t.enabled());
  const long closed_size = FileSize(path);
  t.Close();  // idempotent
  t.Span(Timeline::kApp, "app", "after close", 1, 2);
  t.Instant(Timeline::kApp, "app", "after close", 1);
  CHECK(FileSize(path) == closed_size);
  return failures == 0 ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not available")
    build = tmp_path_factory.mktemp("timeline_build")
    src = build / "driver.cc"
    source = (f"#define RANK {RANK}\n#define THREADS {THREADS}\n#define ITERS {ITERS}\n"
              + DRIVER.replace("NAMES_INIT", ", ".join(cpp_literal(n) for n in NAMES)))
    src.write_text(source)
    exe = build / "driver"
    cmd = ["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread",
           "-I", ENGINE, str(src), os.path.join(ENGINE, "observe", "timeline.cc"), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return exe


@pytest.fixture(scope="module")
def trace_run(driver, tmp_path_factory):
    out = tmp_path_factory.mktemp("timeline_out")
    proc = subprocess.run([str(driver), str(out)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


def expected_events():
    """Multiset of (ph, tid, name) the driver writes."""
    c = collections.Counter()
    for th in range(THREADS):
        for i in range(ITERS):
            name = NAMES[(th + i) % len(NAMES)]
            c[("X", i % 2, name)] += 1
            c[("i", i % 2, name)] += 1
    return c


def test_writer_output_is_valid_chrome_trace(trace_run):
    out, stdout = trace_run
    assert f"path: {out}/trace.3.json" in stdout
    assert "open error: cannot open timeline file" in stdout
    assert not (out / "trace.json").exists()

    with open(out / "trace.3.json", encoding="utf-8") as f:
        events = json.load(f)
    assert isinstance(events, list)

    meta = [e for e in events if e["ph"] == "M"]
    timed = [e for e in events if e["ph"] != "M"]
    for e in events:
        assert {"ph", "pid", "tid"} <= e.keys(), e
        assert e["pid"] == RANK
    for e in timed:
        assert isinstance(e["ts"], int) and e["ts"] > 1.6e15, e  # microseconds since 1970
        assert e["cat"] in ("app", "activation")
        if e["ph"] == "X":
            assert e["dur"] >= 0
        else:
            assert e["ph"] == "i" and e["s"] == "t"

    meta_by = {(e["name"], e["tid"]): e["args"] for e in meta}
    assert meta_by[("process_name", 0)] == {"name": "rank 3"}
    assert meta_by[("process_sort_index", 0)] == {"sort_index": 3}
    assert meta_by[("thread_name", 0)] == {"name": "app"}
    assert meta_by[("thread_name", 1)] == {"name": "engine"}
    assert events[-1]["ph"] == "M"  # the closing event

    got = collections.Counter((e["ph"], e["tid"], e["name"]) for e in timed)
    assert got == expected_events()

    # Arguments survive, and each span's name matches the thread/iteration that wrote it.
    for e in timed:
        if "args" in e:
            th, i = e["args"]["thread"], e["args"]["i"]
            assert e["name"] == NAMES[(th + i) % len(NAMES)]
            if e["ph"] == "X":
                assert e["dur"] == i
        else:
            assert e["ph"] == "i"


def test_rank_placeholder_and_backwards_clock(trace_run):
    out, _ = trace_run
    with open(out / "sub_3_trace.json", encoding="utf-8") as f:
        events = json.load(f)
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == 1 and spans[0]["name"] == "backwards"
    assert spans[0]["ts"] == 100 and spans[0]["dur"] == 0


def test_truncated_trace_still_loads(trace_run, tmp_path):
    out, _ = trace_run
    plot = load_plot_module()
    full = plot.load_traces([str(out / "trace.3.json")])
    n_full = sum(e["ph"] != "M" for e in full)
    assert n_full == sum(expected_events().values())

    # What the file looked like before Close (no final "]"): a prefix of the events.
    partial = plot.load_traces([str(out / "partial.json")])
    n_partial = sum(e["ph"] != "M" for e in partial)
    assert 0 < n_partial <= n_full
    with pytest.raises(ValueError):
        with open(out / "partial.json", encoding="utf-8") as f:
            json.load(f)

    # Cut in the middle of an event, as a killed process can leave it.
    text = (out / "trace.3.json").read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) * 2 // 3])
    events = plot.load_traces([str(cut)])
    assert 0 < sum(e["ph"] != "M" for e in events) < n_full
    assert all(e["pid"] == RANK for e in events)
    names = {e["name"] for e in events if e["ph"] != "M"}
    assert names <= set(NAMES)


# ----------------------------------------------------------------------------- plotting

def synthetic_rank(rank, t0, rounds, slow, tau=4):
    """One rank's events in the engine's vocabulary. Rank `slow` computes longer, so
    the fast rank waits only at global rounds and joins the slow rank's group rounds
    passively."""
    ev = [
        {"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}},
        {"ph": "M", "name": "thread_name", "pid": rank, "tid": 0, "args": {"name": "app"}},
        {"ph": "M", "name": "thread_name", "pid": rank, "tid": 1, "args": {"name": "engine"}},
    ]
    step = 3000 if rank == slow else 1000
    t = t0
    stream = "grad/\"w\""
    waits = joins = 0
    for r in range(rounds):
        kind = "global" if (r + 1) % tau == 0 else "group"
        call = 200
        if kind == "global" and rank != slow:
            call = 2000
        ev.append({"ph": "X", "cat": "app", "name": stream, "pid": rank, "tid": 0, "ts": t,
                   "dur": call, "args": {"round": r, "kind": kind}})
        if call > 200:
            ev.append({"ph": "X", "cat": "wait", "name": stream, "pid": rank, "tid": 0,
                       "ts": t + 100, "dur": call - 150, "args": {"round": r}})
            waits += call - 150
        passive = kind == "group" and rank != slow and r % 2 == 1
        ev.append({"ph": "X", "cat": "reduction", "name": stream, "pid": rank, "tid": 1,
                   "ts": t + 10, "dur": call - 20,
                   "args": {"round": r, "kind": kind, "passive": passive, "members": [0, 1]}})
        if passive:
            joins += 1
            ev.append({"ph": "i", "s": "t", "cat": "join", "name": "passive_join", "pid": rank,
                       "tid": 1, "ts": t + 10, "args": {"stream": stream, "round": r, "staleness": 1}})
        elif kind == "group":
            ev.append({"ph": "i", "s": "t", "cat": "activation", "name": "activation_sent",
                       "pid": rank, "tid": 1, "ts": t + 5, "args": {"stream": stream, "round": r, "to": [1 - rank]}})
        t += step + call
    ev.append({"ph": "i", "s": "t", "cat": "fault", "name": "stall_warning", "pid": rank,
               "tid": 1, "ts": t, "args": {}})
    return ev, waits, joins


def write_trace_file(path, events, closed=True):
    lines = [json.dumps(e, ensure_ascii=False) for e in events]
    if closed:
        lines.append(json.dumps({"ph": "M", "name": "process_labels", "pid": events[0]["pid"],
                                 "tid": 0, "args": {"labels": "trace closed"}}))
        path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    else:  # as left by a killed rank
        path.write_text("[\n" + "".join(line + ",\n" for line in lines), encoding="utf-8")


def test_plot_two_ranks(tmp_path):
    t0 = 1_760_000_000_000_000
    rounds = 20
    ev0, wait0, joins0 = synthetic_rank(0, t0, rounds, slow=1)
    ev1, wait1, joins1 = synthetic_rank(1, t0 + 50, rounds, slow=1)
    # Two more faults per rank (a hold report, a failed round) beside the stall
    # warning: the summary counts them, 3 each.
    for rank, ev in ((0, ev0), (1, ev1)):
        for k, name in enumerate(("hold", "round_failed")):
            ev.append({"ph": "i", "s": "t", "cat": "fault", "name": name, "pid": rank,
                       "tid": 1, "ts": t0 + 5000 * (k + 1),
                       "args": {"stream": "w", "round": k}})
    write_trace_file(tmp_path / "trace.0.json", ev0)
    write_trace_file(tmp_path / "trace.1.json", ev1, closed=False)

    png = tmp_path / "out.png"
    merged = tmp_path / "merged.json"
    proc = subprocess.run(
        [*VIEWER, str(tmp_path / "trace.*.json"), "-o", str(png),
         "--merged", str(merged)],
        capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr

    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000

    with open(merged, encoding="utf-8") as f:
        all_events = json.load(f)
    assert len(all_events) == len(ev0) + len(ev1) + 1  # + rank 0's closing event
    assert {e["pid"] for e in all_events} == {0, 1}

    rows = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].isdigit():
            rows[int(parts[0])] = (parts, line)
    assert set(rows) == {0, 1}
    for rank, blocked_us, joins in ((0, wait0, joins0), (1, wait1, joins1)):
        parts, line = rows[rank]
        calls, group, glob_, blocked_s, per_call_ms, passive, faults = parts[1:8]
        assert int(calls) == rounds
        assert int(glob_) == rounds // 4 and int(group) == rounds - rounds // 4
        assert float(blocked_s) == pytest.approx(blocked_us / 1e6, abs=1e-4)
        # blocked_ms/call: milliseconds blocked per call (rank 0: 5 waits of 1.85 ms
        # over 20 calls, 0.4625 ms).
        assert float(per_call_ms) == pytest.approx(blocked_us / 1e3 / rounds, abs=1e-3)
        assert int(passive) == joins
        assert int(faults) == 3, line  # a count, not a flag
    assert wait0 > 0 and wait1 == 0 and joins0 > 0 and joins1 == 0
    assert "incomplete" not in rows[0][1] and "incomplete" in rows[1][1]


def test_plot_time_window(tmp_path):
    t0 = 1_760_000_000_000_000
    ev0, _, _ = synthetic_rank(0, t0, 20, slow=1)
    ev1, _, _ = synthetic_rank(1, t0, 20, slow=1)
    write_trace_file(tmp_path / "a.json", ev0)
    write_trace_file(tmp_path / "b.json", ev1)
    png = tmp_path / "window.png"
    proc = subprocess.run(
        [*VIEWER, str(tmp_path / "a.json"), str(tmp_path / "b.json"),
         "-o", str(png), "--start-s", "0.01", "--end-s", "0.03"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    calls = {int(l.split()[0]): int(l.split()[1]) for l in proc.stdout.splitlines()
             if l.split() and l.split()[0].isdigit()}
    assert 0 < calls[0] < 20 and 0 < calls[1] < 20


def test_missing_trace_is_an_error(tmp_path):
    proc = subprocess.run([*VIEWER, str(tmp_path / "nothing.*.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "no trace file matches" in proc.stderr
