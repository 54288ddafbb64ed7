"""With a straggler, the other ranks' group rounds complete without waiting for it
(docs/design.md, section 2); after the final global round all ranks hold the same value.
Both scenarios run in one launch per framework (workers/straggler.py)."""
import pytest

import resident
from conftest import FRAMEWORKS
from horovod_wagma.common.op.schedule import groups
from reference import is_global, phase_of

pytestmark = [pytest.mark.ranks, pytest.mark.extended_when(launch="tensorflow")]

DELAY = 0.5
ROUNDS = 10
TAU = 10
ABLATION_ROUNDS = 6
WAIT_AVOIDING = f"{DELAY},{ROUNDS},{TAU},2,1"
SYNCHRONOUS = f"{DELAY},{ABLATION_ROUNDS},{TAU},2,0"


# The TensorFlow run is make test-all's (make test: Keras's wait-avoiding fit with a
# straggler, test_keras): it alone needed a 4-rank TensorFlow launch.
SCENARIOS = {fw: resident.item("straggler.py", 4, WAIT_AVOIDING, SYNCHRONOUS, framework=fw,
                              timeout=300, extended=fw == "tensorflow")
             for fw in ("torch", "tensorflow")}


@pytest.fixture(scope="module", params=FRAMEWORKS)
def launch(request, transport):
    return SCENARIOS[request.param].scenarios()


def _group_round_waits(results, rank):
    return [w for r, w in enumerate(results[rank]["waits"]) if not is_global(r, TAU)]


def test_straggler_not_waited_for(launch):
    results = launch.results(WAIT_AVOIDING)
    for rank in range(3):
        waits = _group_round_waits(results, rank)
        assert len(waits) == 8
        # Far below the straggler's 0.5 s sleep, with a generous margin for 2 noisy cores.
        assert max(waits) < 0.2 * DELAY, (rank, waits)
    # The straggler's partners joined its rounds from its background thread.
    assert results[3]["stats"]["passive_joins"] >= 4
    finals = [results[r]["final"] for r in range(4)]
    assert all(f == finals[0] for f in finals), finals
    # The global rounds did wait: the last one waits for the straggler's 9 sleeps.
    assert results[0]["waits"][ROUNDS - 1] > 0.5 * (ROUNDS - 2) * DELAY


def test_without_wait_avoidance_partners_wait(launch):
    """The ablation: synchronous group rounds make the straggler's partner wait."""
    results = launch.results(SYNCHRONOUS)
    phases = groups(4, 2)
    for r in range(1, ABLATION_ROUNDS):
        partner = next(m for g in phases[phase_of(r, TAU, len(phases))] if 3 in g
                       for m in g if m != 3)
        assert results[partner]["waits"][r] > 0.6 * DELAY, (r, partner, results)
