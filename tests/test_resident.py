"""The resident launch reports each item on its own: an item that raises fails its
test with the traceback, an item that hangs is ended by its own timeout and named,
the items after it are reported as not run, and the items before keep their
results (tests/resident.py)."""
import time

import pytest

from conftest import CURRENT
from resident import Item, ResidentLaunch

pytestmark = [pytest.mark.ranks, pytest.mark.extended]


def probe(*args, timeout=60):
    return Item("harness_probe.py", 2, args, "torch", timeout, "test_resident", False)


def test_each_item_is_reported_on_its_own(transport):
    first, raises, second = probe("ok", "first"), probe("raise"), probe("ok", "second")
    hangs, after = probe("hang", timeout=8), probe("ok", "after")
    t0 = time.monotonic()
    launch = ResidentLaunch((CURRENT["transport"], 2, "torch"),
                            items=[first, raises, second, hangs, after])
    # Ended by the hung item's 8 s, not by a launch-wide timeout.
    assert time.monotonic() - t0 < 60
    assert {r: res["tag"] for r, res in launch.result(first).results.items()} == {
        0: "first", 1: "first"}
    with pytest.raises(AssertionError, match="(?s)harness_probe.py raise raised.*"
                                             "rank 0.*the probe raised on purpose"):
        launch.result(raises)
    assert launch.result(second).results[1]["tag"] == "second"
    with pytest.raises(pytest.fail.Exception,
                       match="harness_probe.py hang: hung, ended after its timeout of 8 s"):
        launch.result(hangs)
    with pytest.raises(pytest.fail.Exception,
                       match="harness_probe.py ok after: not run to its end: "
                             "test_resident:harness_probe.py hang hung before it"):
        launch.result(after)
