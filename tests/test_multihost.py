"""Multi-host checks (multihost/checks.py) under pytest: three emulated hosts (network
namespaces, TCP between them, per-link latency and bandwidth caps), launched with
mpirun and horovodrun. They skip, with the reason, only where namespaces cannot be
made (not root, no iproute2 or /dev/net/tun)."""
import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import LAUNCHES  # noqa: E402
from multihost import checks  # noqa: E402
from multihost.cluster import EmulatedCluster, why_unavailable  # noqa: E402

REASON = why_unavailable()
pytestmark = [pytest.mark.multihost, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"multihost: {REASON}")]


@pytest.fixture(scope="module")
def cluster():
    with EmulatedCluster(checks.default_hosts(),
                         tempfile.mkdtemp(prefix="wagma_multihost_")) as c:
        yield c


# make test runs the gossip check (exact averages, messages cut between hosts); make
# test-all the others too.
@pytest.mark.parametrize("name", [name if name == "gossip" else
                                  pytest.param(name, marks=pytest.mark.extended)
                                  for name in checks.CI_CHECKS])
def test_multihost(cluster, name):
    LAUNCHES["jobs"] += 1  # at least one job per check
    try:
        ok, detail = checks.CHECKS[name](cluster)
    finally:
        cluster.restore()
    assert ok, detail
