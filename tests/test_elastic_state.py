"""ElasticStateCore without ranks: how it answers Horovod's host-update notifications.

Horovod's own states skip the sync after a reset caused by removals only; joiners
always sync, so a removal followed at once by an addition hung a fresh-clone run
(the survivors in their first step, the joiners in the sync). WAGMA's state syncs
after every host update.
"""
import types

import pytest
from horovod.common.elastic import ObjectState
from horovod.common.exceptions import HostsUpdatedInterrupt
from horovod.runner.elastic.discovery import HostUpdateResult

from horovod_wagma.common.elastic_state import ElasticStateCore

# One rank: Horovod's check broadcasts the updates from rank 0, here the identity.
ONE_RANK = types.SimpleNamespace(broadcast_object=lambda obj, root_rank=0, name=None: obj,
                                 rank=lambda: 0)


def horovods_state():
    return ObjectState(bcast_object=ONE_RANK.broadcast_object, get_rank=ONE_RANK.rank,
                       step=0)


@pytest.mark.parametrize("update", [HostUpdateResult.removed, HostUpdateResult.added,
                                    HostUpdateResult.removed | HostUpdateResult.added])
def test_a_host_update_never_skips_the_sync(update):
    state = ElasticStateCore(ONE_RANK, basics=None, step=3)
    state.on_hosts_updated(timestamp=1, update_res=update)
    with pytest.raises(HostsUpdatedInterrupt) as raised:
        state.commit()
    assert raised.value.skip_sync is False
    assert state.step == 3
    # The next commit with no new notification does not raise again.
    state.commit()


def test_horovods_own_state_would_skip_it_after_a_removal():
    # What the override is for: if Horovod stops skipping, the override can go.
    state = horovods_state()
    state.on_hosts_updated(timestamp=1, update_res=HostUpdateResult.removed)
    with pytest.raises(HostsUpdatedInterrupt) as raised:
        state.commit()
    assert raised.value.skip_sync is True


def test_no_update_no_interrupt():
    state = ElasticStateCore(ONE_RANK, basics=None, step=0)
    state.on_hosts_updated(timestamp=0, update_res=HostUpdateResult.removed)  # not newer
    state.commit()
