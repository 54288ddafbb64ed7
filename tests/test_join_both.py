"""join_engine_and_horovod (horovod_wagma/common/elastic/join_both.py) without ranks: the
engine's join and Horovod's, waited on together, with fakes for both. The multi-rank
behaviour is in test_uneven.py and test_faults.py; these pin the orders of completion
that a real job produces only now and then (seen in lab/hold_soak.py at P=8: Horovod's
join done first, then the handle polled again after it was collected)."""
import pytest

from horovod_wagma.common.op import engine_lib

from horovod_wagma.common.elastic import join_both
from horovod_wagma.common.op.errors import WagmaError


class FakeHorovodJoin:
    """A Horovod join handle: done after `after` polls; a collected handle must not be
    polled or collected again (Horovod raises ValueError then)."""

    def __init__(self, after, error=None):
        self.after, self.error = after, error
        self.polls, self.collected = 0, False

    def start(self):
        return self.done, self.result

    def done(self):
        if self.collected:
            raise ValueError("Handle was not created or has been cleared.")
        self.polls += 1
        return self.polls > self.after

    def result(self):
        if self.collected:
            raise ValueError("Handle was not created or has been cleared.")
        self.collected = True
        if self.error:
            raise self.error
        return 3


@pytest.fixture
def engine(monkeypatch):
    """The engine's join: `state["slices"]` slices until every rank joined (the last
    rank to join: 2), or `state["error"]` raised once `state["error_after"]` waits
    have passed."""
    state = {"slices": 0, "error": None, "error_after": 0, "waits": 0}

    def join_start():
        return None

    def join_wait(slice_ms):
        state["waits"] += 1
        if state["error"] and state["waits"] > state["error_after"]:
            raise WagmaError(state["error"])
        return 2 if state["waits"] > state["slices"] else None
    monkeypatch.setattr(engine_lib, "join_start", join_start)
    monkeypatch.setattr(engine_lib, "join_wait", join_wait)
    monkeypatch.setattr(join_both, "_SLICE_MS", 1)
    return state


def test_horovods_join_done_first_is_collected_once(engine):
    engine["slices"] = 5
    horovod = FakeHorovodJoin(after=0)
    assert join_both.join_engine_and_horovod(None, horovod.start) == 2
    assert horovod.collected and horovod.polls == 1


def test_engines_join_done_first_waits_for_horovods(engine):
    horovod = FakeHorovodJoin(after=4)
    assert join_both.join_engine_and_horovod(None, horovod.start) == 2
    assert horovod.collected and horovod.polls == 5


def test_the_engines_error_comes_at_once_and_names_the_rank(engine):
    engine["error"] = "rank 3 left without join() while other ranks were joining"
    horovod = FakeHorovodJoin(after=10 ** 9)
    with pytest.raises(WagmaError, match="rank 3 left without join"):
        join_both.join_engine_and_horovod(None, horovod.start)
    assert horovod.polls == 0


def test_horovods_error_gives_way_to_the_engines(engine):
    """Horovod's join failed ("Horovod has been shut down") while the engine's had not
    ended: one more slice for the engine's error, raised from Horovod's."""
    engine["slices"] = 10 ** 9
    shut = RuntimeError("Horovod has been shut down")
    horovod = FakeHorovodJoin(after=0, error=shut)
    with pytest.raises(RuntimeError, match="shut down"):
        join_both.join_engine_and_horovod(None, horovod.start)
    engine.update(waits=0, error="rank 3 left without join()", error_after=1)
    horovod = FakeHorovodJoin(after=0, error=shut)
    with pytest.raises(WagmaError, match="rank 3 left") as caught:
        join_both.join_engine_and_horovod(None, horovod.start)
    assert caught.value.__cause__ is shut


def test_blocking_horovod_join_then_the_engines(engine):
    """TensorFlow's path: Horovod's join blocks; the engine's answer comes after."""
    engine["slices"] = 3
    calls = []
    assert join_both.join_engine_and_horovod(lambda: calls.append(1)) == 2
    assert calls == [1]


def test_blocking_horovod_join_that_fails_gives_way_to_the_engines_error(engine):
    """TensorFlow's path (Horovod's join op blocks): a rank that leaves without join()
    ends Horovod's join as "Horovod has been shut down", naming nobody; faults.md: the
    others' join() "fails with an error naming it", the engine's, raised from Horovod's.
    Where the engine's join has not failed, Horovod's own error is raised."""
    shut = RuntimeError("Horovod has been shut down")

    def failing_join():
        raise shut
    engine.update(error="rank 3 left without join() while other ranks were joining")
    with pytest.raises(WagmaError, match="rank 3 left without join") as caught:
        join_both.join_engine_and_horovod(failing_join)
    assert caught.value.__cause__ is shut
    engine.update(waits=0, error=None, slices=10 ** 9)
    with pytest.raises(RuntimeError, match="shut down") as caught:
        join_both.join_engine_and_horovod(failing_join)
    assert caught.value is shut and engine["waits"] == 1


def test_blocking_horovod_join_when_every_rank_had_joined(engine, monkeypatch):
    """The engine's join_start already knows the last rank (every rank had joined):
    Horovod's join still runs (its collectives need this rank), and join() returns the
    engine's answer without waiting for the engine again."""
    monkeypatch.setattr(engine_lib, "join_start", lambda: 1)
    calls = []
    assert join_both.join_engine_and_horovod(lambda: calls.append(1)) == 1
    assert calls == [1] and engine["waits"] == 0
