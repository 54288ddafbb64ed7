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


def test_the_survivors_average_takes_the_floating_buffers_too(monkeypatch):
    """elastic.md: after a membership change every rank starts from the survivors'
    average, BatchNorm statistics included (the floating buffers); integer buffers
    (num_batches_tracked) stay. One rank stands in for two: the fake allreduce adds a
    second survivor whose every value is 4."""
    import importlib

    import torch
    # The module itself: horovod_wagma.torch's attribute `elastic` is Horovod's package.
    elastic = importlib.import_module("horovod_wagma.torch.elastic")

    sums = []

    def allreduce(flat, op, name):
        sums.append(name)
        return flat + 4.0

    monkeypatch.setattr(elastic, "_hvd", types.SimpleNamespace(allreduce=allreduce, Sum="Sum"))
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    with torch.no_grad():
        model[1].running_mean.copy_(torch.tensor([1.0, 2.0]))
        model[1].running_var.copy_(torch.tensor([3.0, 5.0]))
    model[1].num_batches_tracked.fill_(7)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = elastic.WagmaState.__new__(elastic.WagmaState)   # no Horovod: the model only
    state.model = model
    state._average_model(1.0, 2)
    after = model.state_dict()
    assert sums == ["wagma.elastic.average"]
    for key, value in before.items():
        if torch.is_floating_point(value):
            assert torch.allclose(after[key], (value + 4.0) / 2), key
    assert after["1.running_mean"].tolist() == [2.5, 3.0]
    assert after["1.num_batches_tracked"].item() == 7
