"""docs/faults.md: when Horovod re-forms an elastic job, the majority rule is checked
again, against the previous member set (common/elastic/membership.py's agree(), with the
engine's rule through engine_lib.may_go_on). One process: Horovod's allgather is a
stand-in that returns the member infos a re-formed job would gather."""
import time

import pytest
from horovod.common.exceptions import HorovodInternalError

from horovod_wagma.common.op.errors import (WagmaError, WagmaFenced, WagmaMembershipChanged,
                                        engine_error)
from horovod_wagma.common.elastic.membership import Membership

PREVIOUS = [("h0", 10), ("h1", 11), ("h2", 12), ("h3", 13)]  # generation 1's ranks 0-3


class Gathered:
    """hvd for agree(): allgather_object returns `infos`; this rank is `rank`."""

    def __init__(self, infos, rank=0):
        self.infos, self._rank = infos, rank

    def allgather_object(self, obj, name=None):
        return self.infos

    def rank(self):
        return self._rank


def survivor(ident):
    return {"id": ident, "generation": 1, "replica": 1, "members": PREVIOUS}


def joiner(ident):
    return {"id": ident, "generation": 0, "replica": 0, "members": []}


def agree(infos):
    m = Membership()
    m.generation, m.replica_generation, m.replica_members = 1, 1, list(PREVIOUS)
    prefix = m.agree(Gathered(infos))
    return m, prefix


@pytest.mark.parametrize("kept,goes_on", [
    ([0, 1, 2], True),        # 3 of 4: a majority
    ([0, 1], True),           # half, with the previous rank 0
    ([2, 3], False),          # half, without it
    ([3], False),             # a minority
])
def test_a_re_formed_job_is_judged_against_the_previous_member_set(kept, goes_on):
    """Two joiners make the new job 4 ranks, as large as before; only how many of the
    previous members remain, and whether rank 0 is among them, decides."""
    infos = [survivor(PREVIOUS[r]) for r in kept] + [joiner(("new", 20 + i))
                                                     for i in range(2)]
    before = time.time()
    lost = [r for r in range(4) if r not in kept]
    if goes_on:
        m, prefix = agree(infos)
        assert m.generation == 2 and prefix == f"gen2.{len(infos)}.", prefix
        change = m.changes[-1]
        assert change["lost"] == lost and change["added"] == [len(kept), len(kept) + 1]
        # docs/elastic.md: membership_changes() gives the time (wall clock, seconds).
        assert before <= change["time"] <= time.time(), change
        assert m.was_survivor is True
    else:
        with pytest.raises(WagmaFenced) as e:
            agree(infos)
        text = str(e.value)
        assert text.startswith(f"fenced: ranks {', '.join(map(str, lost))} of the previous "
                               "member set were lost"), text
        assert f"{len(kept)} of 4 ranks remain on this side, not a majority" in text, text


def test_the_previous_member_set_is_the_newest_replica_anyone_holds():
    """A rank whose replica is older (it missed generation 2's sync) does not make the
    rule count against generation 1: generation 2's members are the previous set."""
    gen2 = [("h0", 10), ("h1", 11)]
    newer = [{"id": ident, "generation": 2, "replica": 2, "members": gen2} for ident in gen2]
    stale = {"id": ("h2", 12), "generation": 2, "replica": 1, "members": PREVIOUS}
    m = Membership()
    m.generation, m.replica_generation, m.replica_members = 2, 2, list(gen2)
    m.agree(Gathered(newer + [stale]))  # both of generation 2's members remain
    assert m.changes[-1]["lost"] == [] and m.changes[-1]["added"] == [2], m.changes
    # Against generation 2's two members: losing h0 (its rank 0) fences, losing h1
    # alone is half with rank 0 and goes on.
    m = Membership()
    m.generation, m.replica_generation, m.replica_members = 2, 2, list(gen2)
    with pytest.raises(WagmaFenced, match="fenced: ranks 0 of the previous member set"):
        m.agree(Gathered([newer[1], stale]))
    m = Membership()
    m.generation, m.replica_generation, m.replica_members = 2, 2, list(gen2)
    m.agree(Gathered([newer[0], stale]))
    assert m.changes[-1]["lost"] == [1], m.changes


def test_a_reset_before_the_first_sync_completed_is_numbered_anew_and_keeps_its_joiner():
    """Generation 2 (the 4 ranks of generation 1 and a joiner, ("new", 20)) was reset
    again before its first sync completed: every rank ran in generation 2, but the
    survivors still hold generation 1's replica and the joiner its own initial model.
    The next member set is generation 3 (numbered past every generation any member has
    run in: its engine gets a rendezvous prefix and a trace of its own, elastic.md's
    trace.gen2.<rank>.json, ..., not generation 2's again), judged against generation 1,
    and the joiner is still a joiner (README, elastic: added hosts "start from the
    survivors' average", weighing 0; elastic.md:31-32), the survivors survivors."""
    ran_in_2 = [dict(survivor(ident), generation=2) for ident in PREVIOUS] + [
        {"id": ("new", 20), "generation": 2, "replica": 0, "members": []}]
    for rank, survived in ((0, True), (4, False)):
        m = Membership()
        m.generation = 2
        if survived:
            m.replica_generation, m.replica_members = 1, list(PREVIOUS)
        prefix = m.agree(Gathered(ran_in_2, rank=rank))
        assert m.generation == 3 and prefix == "gen3.5.", (m.generation, prefix)
        assert m.was_survivor is survived, (rank, m.was_survivor)
        # Against generation 1: nobody lost, the joiner (rank 4) still counted as added.
        assert m.changes[-1]["lost"] == [] and m.changes[-1]["added"] == [4], m.changes
        assert m.changes[-1]["generation"] == 3 and m.changes[-1]["rank"] == rank, m.changes


def test_a_first_generation_is_never_fenced():
    """No previous member set (every replica 0): the job starts, whatever its size."""
    m = Membership()
    prefix = m.agree(Gathered([joiner(("h0", 1))]))
    assert m.generation == 1 and prefix == "gen1.1." and m.changes == []


def test_a_fenced_side_ends_the_script_a_lost_member_resets():
    """docs/elastic.md, README: a lost member raises WagmaMembershipChanged, a
    HorovodInternalError (Horovod's elastic.run resets); a fenced side raises WagmaFenced,
    which is not one, so the script ends. The engine's texts (engine_faults.cc) map to
    them."""
    lost = engine_error("membership changed: rank 1 was lost (...); 3 of 4 ranks remain")
    fenced = engine_error("fenced: ranks 2, 3 were lost (...); 2 of 4 ranks remain on this "
                          "side, not a majority (more than half, or half with rank 0)")
    other = engine_error("stalled: waited 3 s")
    assert type(lost) is WagmaMembershipChanged and isinstance(lost, HorovodInternalError)
    assert type(fenced) is WagmaFenced and not isinstance(fenced, HorovodInternalError)
    assert type(other) is WagmaError and not isinstance(other, HorovodInternalError)
    assert all(isinstance(e, RuntimeError) for e in (lost, fenced, other))
