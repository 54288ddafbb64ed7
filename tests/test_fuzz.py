"""Property-based fuzzing of the public op's arguments (issue "Bad input").

The worker (workers/fuzz.py) runs a derandomized hypothesis search on 3 ranks. Every
rank draws the same examples: names (empty, very long, non-ASCII, NUL, non-str),
shapes (scalars, 0-size, multi-dim), every dtype of the framework, group_size and
sync_period at and beyond their bounds, averaging and wait_avoiding values, input
forms and call modes. Valid arguments must give a correct result and invalid ones a
TypeError/ValueError naming the argument, identically on every rank, never a crash or
a hang (the mpirun timeout). Canary streams with exactly known results run after
every example. The tests here judge the ranks' reports, including two engine bugs
the search found (long names cutting error texts; a mid-run misuse failing a peer's
already exchanged round), kept as regression tests.
"""
import collections

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import resident
from conftest import FRAMEWORKS

pytestmark = pytest.mark.ranks

NP = 3
MAX_EXAMPLES = 250
SUPPORTED = ("float32", "float64", "float16", "bfloat16")


FUZZ = {fw: resident.item("fuzz.py", NP, MAX_EXAMPLES, framework=fw, timeout=240, last=True)
        for fw in ("torch", "tensorflow")}


@pytest.fixture(scope="module", params=FRAMEWORKS)
def fuzz(request, transport):
    """One run per framework, in the resident launch, shared by the tests of this
    module (~10-20 s)."""
    return FUZZ[request.param].run().results


def _known_bug(rec):
    return bool(rec.get("known_bug") or (rec.get("misuse") or {}).get("known_bug"))


def _signature(rec):
    mis = rec.get("misuse") or {}
    return (rec.get("digest"), rec.get("outcome"), rec.get("stage"), mis.get("outcome"),
            mis.get("post"))


@pytest.mark.slow  # a launch of about 20 s per framework
def test_fuzz_public_api(fuzz):
    results = fuzz
    for rank, res in results.items():
        assert not res["harness_errors"], (rank, res["harness_errors"])
    lengths = {rank: len(res["records"]) for rank, res in results.items()}
    assert len(set(lengths.values())) == 1, f"ranks ran different examples: {lengths}"
    records = {rank: res["records"] for rank, res in results.items()}

    # Every rank drew the same example and got the same outcome (result or error type,
    # at the same round). Long names hit the engine bug below, whose error type can
    # depend on the rank's message prefix: those examples are compared there.
    for i, rec0 in enumerate(records[0]):
        assert not rec0.get("diverged"), f"ranks drew different examples at {i}"
        if any(_known_bug(records[r][i]) for r in records):
            continue
        sigs = {r: _signature(records[r][i]) for r in records}
        assert len(set(sigs.values())) == 1, (rec0["summary"], sigs)
        assert all(records[r][i]["same_on_all_ranks"] for r in records), rec0["summary"]

    # Valid arguments: correct results; invalid ones: a clear error, at round 0.
    failures = []
    for rank, recs in records.items():
        for rec in recs:
            mis = rec.get("misuse") or {}
            for text in rec["checks"] + mis.get("checks", []):
                failures.append(f"rank {rank} example {rec['i']} [{rec['summary']}]: {text}")
    assert not failures, "\n".join(failures[:30])

    # Nothing corrupted a later round: every canary after every example was exact.
    for rank, res in results.items():
        assert res["canary_failures"] == [], (rank, res["canary_failures"][:10])
        assert res["canaries_run"] == len(res["records"]) + 5  # + the special cases

    # The search was not vacuous.
    recs = records[0]
    ok = [r for r in recs if r["outcome"] == "ok"]
    errors = [r for r in recs if r["outcome"] in ("TypeError", "ValueError")]
    assert len(ok) >= 80 and len(errors) >= 60, (len(ok), len(errors))
    assert {r["dtype"] for r in ok} == set(SUPPORTED)
    unsupported = {r["dtype"] for r in errors if r["dtype"] not in SUPPORTED}
    assert len(unsupported) >= 10, unsupported
    assert any(r["shape"] == [] for r in ok), "no valid scalar"
    assert any(0 in r["shape"] for r in ok), "no valid 0-size tensor"
    sole = collections.Counter(r["problems"][0] for r in errors if len(r["problems"]) == 1)
    for arg in ("dtype", "group_size", "sync_period", "averaging", "wait_avoiding", "name"):
        assert sole[arg] >= 1, (arg, sole)
    misuses = collections.Counter(r["misuse"]["kind"] for r in recs
                                  if r.get("misuse") and not _known_bug(r))
    assert all(misuses[k] >= 1 for k in ("shape", "dtype", "knob")), misuses

    for rank, res in results.items():
        special = res["special"]
        # The empty name is an ordinary stream; changing its shape is a clear error.
        assert special["empty_name"]["checks"] == [], special["empty_name"]
        change = special["empty_name"]["change"]
        assert change["outcome"] in ("WagmaError", "AbortedError"), change
        assert "stream ''" in change["msg"] and "[3]" in change["msg"] \
            and "[4]" in change["msg"], change
        # semantics.md: "naming both values", each as what it is: the stream's round-0
        # shape and the changed call's, not the other way round.
        assert "its round 0 has shape [3], this call has shape [4]" in change["msg"], change
        # A NUL would alias "nul\0a" with "nul": refused by name.
        for key in ("nul_a", "nul_b"):
            assert special[key]["outcome"] == "ValueError" and "name" in special[key]["msg"]
        assert special["nul_plain_checks"] == []
        # The misuse race: results returned are right.
        assert special["misuse_race"]["checks"] == []


@pytest.mark.slow  # a launch of about 20 s per framework
def test_long_names_in_engine_errors(fuzz):
    bad = [(rank, e["case"], e["mode"], repr(e["ch"]), e["pad"], e["outcome"],
            e.get("msg_tail", "")[-80:])
           for rank, res in fuzz.items() for e in res["special"]["long_name_errors"]
           if not e["ok"]]
    assert not bad, "\n".join(map(str, bad[:12]))


def test_a_name_longer_than_a_gloo_control_frame_works(fuzz):
    """api.md: a stream name of any length, on either transport; 20,000 bytes is past
    one 16 KiB control frame of the Gloo transport. Round 0 is the exact mean, the
    next rounds within the inputs' range, on every rank."""
    checks = {rank: res["special"]["huge_name"]["checks"] for rank, res in fuzz.items()}
    assert len(checks) == 3 and not any(checks.values()), checks


@pytest.mark.slow  # a launch of about 20 s per framework
def test_misuse_does_not_fail_completed_rounds(fuzz):
    lost = {rank: res["special"]["misuse_race"]["lost"] for rank, res in fuzz.items()}
    assert not any(lost.values()), lost


# ---------------------------------------------------------------- no MPI needed
_KNOB_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10), st.integers(),
    st.sampled_from([2**31 - 1, 2**31, 4096, 4097, 2.0, 2.5, float("nan"), "2", "fresh",
                     "paper", "Fresh", "", b"fresh", [], {}, (2,)]))


def _valid(arg, v):
    is_int = isinstance(v, int) and not isinstance(v, bool)
    return {"group_size": v is None or (is_int and 2 <= v <= 2**31 - 1),
            "sync_period": is_int and 1 <= v <= 4096,
            "averaging": isinstance(v, str) and v in ("fresh", "paper", "local"),
            "wait_avoiding": isinstance(v, bool)}[arg]


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.fixed_dictionaries({k: _KNOB_VALUES for k in
                              ("group_size", "sync_period", "averaging", "wait_avoiding")}))
def test_config_accepts_exactly_the_valid_knobs(knobs):
    """WagmaConfig (init's defaults and every per-call override): a valid knob set is
    accepted as given; otherwise a ValueError names an invalid knob."""
    from horovod_wagma.common.op.config import WagmaConfig
    bad = [k for k, v in knobs.items() if not _valid(k, v)]
    try:
        cfg = WagmaConfig(**knobs)
    except ValueError as e:
        assert bad, f"valid knobs {knobs} refused: {e}"
        assert any(k in str(e) for k in bad), (knobs, str(e))
    else:
        assert not bad, f"invalid {bad} accepted: {knobs}"
        assert (cfg.group_size, cfg.sync_period, cfg.averaging, cfg.wait_avoiding) == \
            tuple(knobs.values())


_GLOBAL_ROUNDS_VALUES = st.one_of(_KNOB_VALUES, st.sampled_from(
    ["blocking", "wait_avoiding", "Blocking", "wait-avoiding", " blocking", b"blocking",
     ["blocking"], ("wait_avoiding",), {"blocking": 1}, frozenset(["blocking"])]))
_STALENESS_VALUES = st.one_of(_KNOB_VALUES, st.sampled_from(
    [0, 4096, 4097, -1, True, False, 3.0, "3", [3]]))
_AVERAGING_VALUES = st.one_of(_KNOB_VALUES, st.sampled_from(["delta", "local", "Delta"]))
ALL_KNOBS = ("group_size", "sync_period", "averaging", "wait_avoiding", "global_rounds",
             "max_staleness")


def _bad_knobs(knobs):
    """The knobs api.md refuses, each alone: group_size an int >= 2 or None, sync_period
    1 to 4096, averaging fresh/paper/local/delta/follow, wait_avoiding a bool, global_rounds
    "blocking" or "wait_avoiding", max_staleness 0 to 4096 or None."""
    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)
    ok = {"group_size": _valid("group_size", knobs["group_size"]),
          "sync_period": _valid("sync_period", knobs["sync_period"]),
          "averaging": isinstance(knobs["averaging"], str) and knobs["averaging"] in (
              "fresh", "paper", "local", "delta", "follow"),
          "wait_avoiding": _valid("wait_avoiding", knobs["wait_avoiding"]),
          "global_rounds": isinstance(knobs["global_rounds"], str) and knobs[
              "global_rounds"] in ("blocking", "wait_avoiding"),
          "max_staleness": knobs["max_staleness"] is None or (
              is_int(knobs["max_staleness"]) and 0 <= knobs["max_staleness"] <= 4096)}
    return [k for k in ALL_KNOBS if not ok[k]]


_VALID_ALL = dict(group_size=None, sync_period=10, averaging="fresh", wait_avoiding=True,
                  global_rounds="blocking", max_staleness=None)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.fixed_dictionaries({"group_size": _KNOB_VALUES, "sync_period": _KNOB_VALUES,
                              "averaging": _AVERAGING_VALUES, "wait_avoiding": _KNOB_VALUES,
                              "global_rounds": _GLOBAL_ROUNDS_VALUES,
                              "max_staleness": _STALENESS_VALUES}))
# Every other knob valid, global_rounds unhashable or of the wrong type: refused by name
# (faults.md: "a TypeError/ValueError naming the argument"), not "unhashable type".
@example(dict(_VALID_ALL, global_rounds=["wait_avoiding"]))
@example(dict(_VALID_ALL, global_rounds={"blocking": 1}))
@example(dict(_VALID_ALL, global_rounds=b"blocking"))
@example(dict(_VALID_ALL, max_staleness=[3]))
@example(dict(_VALID_ALL, averaging="delta", global_rounds="wait_avoiding", max_staleness=0))
@example(dict(_VALID_ALL, group_size=2, sync_period=4096, averaging="paper",
              wait_avoiding=False, max_staleness=4096))
@example(dict(_VALID_ALL, wait_avoiding=False, global_rounds="wait_avoiding"))
def test_config_accepts_exactly_the_valid_knobs_global_rounds_and_max_staleness_too(knobs):
    """Every knob the op and init() take, global_rounds and max_staleness among them
    (the fuzz worker's calls never pass those two): a valid set is accepted as given
    and reaches the engine's fields ("used with wait-avoiding global rounds only":
    max_staleness, None meaning sync_period, for those streams, 0 for blocking ones);
    an invalid knob is a ValueError naming one of the invalid ones; and wait-avoiding
    global rounds with wait_avoiding=False are refused, naming global_rounds."""
    from horovod_wagma.common.op.config import AVERAGING_RULES, GLOBAL_ROUNDS, WagmaConfig
    bad = _bad_knobs(knobs)
    crossed = not bad and knobs["global_rounds"] == "wait_avoiding" and \
        knobs["wait_avoiding"] is False
    try:
        cfg = WagmaConfig(**knobs)
    except ValueError as e:
        assert bad or crossed, f"valid knobs {knobs} refused: {e}"
        assert any(k in str(e) for k in (bad or ["global_rounds"])), (knobs, str(e))
        return
    assert not bad and not crossed, f"invalid {bad or 'combination'} accepted: {knobs}"
    assert tuple(getattr(cfg, k) for k in ALL_KNOBS) == tuple(knobs[k] for k in ALL_KNOBS)
    wa_global = knobs["global_rounds"] == "wait_avoiding"
    bound = knobs["sync_period"] if knobs["max_staleness"] is None else knobs["max_staleness"]
    assert cfg.engine_fields(4) == [
        2 if knobs["group_size"] is None else knobs["group_size"], knobs["sync_period"],
        AVERAGING_RULES[knobs["averaging"]], int(knobs["wait_avoiding"]),
        GLOBAL_ROUNDS[knobs["global_rounds"]], bound if wa_global else 0], (knobs,)


def test_sync_period_and_max_staleness_bounds_are_inclusive():
    """api.md/faults.md: sync_period is 1 to 4096 and max_staleness 0 to 4096 (or None),
    group_size at least 2: both ends accepted, one past either refused with a ValueError
    naming the knob."""
    from horovod_wagma.common.op.config import WagmaConfig
    for period in (1, 4096):
        assert WagmaConfig(sync_period=period).sync_period == period
    for staleness in (0, 4096):
        assert WagmaConfig(max_staleness=staleness).resolved_max_staleness == staleness
    for knob, value in (("sync_period", 0), ("sync_period", 4097), ("max_staleness", -1),
                        ("max_staleness", 4097)):
        with pytest.raises(ValueError, match=knob):
            WagmaConfig(**{knob: value})
    # group_size >= 2: the smallest group accepted, one below it refused.
    assert WagmaConfig(group_size=2).group_size == 2
    with pytest.raises(ValueError, match="group_size"):
        WagmaConfig(group_size=1)
    # "0 to 4096, or None": an integer, as the other integer knobs (a bool is no round
    # count; True would slip in as 1).
    for value in (True, False, 2.0, "3"):
        with pytest.raises(ValueError, match="max_staleness"):
            WagmaConfig(max_staleness=value)
    # api.md: max_staleness is "used with wait-avoiding global rounds only": the engine
    # gets the bound (None: sync_period) for those streams and 0 for blocking ones, so
    # ranks that set it differently on a blocking stream still agree at round 0.
    for staleness, bound in ((None, 7), (0, 0), (3, 3), (4096, 4096)):
        wa = WagmaConfig(group_size=2, sync_period=7, max_staleness=staleness,
                         global_rounds="wait_avoiding")
        assert wa.engine_fields(4) == [2, 7, 0, 1, 1, bound], (staleness, wa.engine_fields(4))
        blocking = WagmaConfig(group_size=2, sync_period=7, max_staleness=staleness)
        assert blocking.engine_fields(4) == [2, 7, 0, 1, 0, 0], (staleness,
                                                                 blocking.engine_fields(4))


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.one_of(st.none(), st.text(), st.binary(max_size=8), st.integers(),
                 st.lists(st.text(max_size=2), max_size=2)))
def test_stream_names(name):
    """A name is any str (empty, long, any Unicode) without NUL, or None."""
    from horovod_wagma.common.op.config import validate_name
    if name is None or (isinstance(name, str) and "\x00" not in name):
        assert validate_name(name) == name
    else:
        with pytest.raises((TypeError, ValueError), match="name"):
            validate_name(name)
