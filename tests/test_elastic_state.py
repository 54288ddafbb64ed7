"""ElasticStateCore without ranks: how it answers Horovod's host-update notifications.

Horovod's own states skip the sync after a reset caused by removals only; joiners
always sync, so a removal followed at once by an addition hung a fresh-clone run
(the survivors in their first step, the joiners in the sync). WAGMA's state syncs
after every host update.

Also without ranks: whose counters a sync() hands to whom (stand-ins for Horovod's
collectives), what commit() keeps and restore() leaves, and the Keras state's reset and
average (in a TensorFlow child, extended).
"""
import types

import pytest
from horovod.common.elastic import ObjectState
from horovod.common.exceptions import HostsUpdatedInterrupt
from horovod.runner.elastic.discovery import HostUpdateResult

from horovod_wagma.common.elastic.elastic_state import ElasticStateCore

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



def test_commit_keeps_counters_and_rng_restore_undoes_nothing():
    """README/api.md: commit() saves "counters and RNG only" (never the model), and
    restore() "undoes nothing": after a commit, training moves the model and the step;
    the restore that Horovod's run calls after a failure leaves both as they are (a
    survivor goes on from its own replica, no step counter goes back). One process:
    commit's host-update check broadcasts through a stand-in."""
    import importlib

    import torch
    elastic = importlib.import_module("horovod_wagma.torch.elastic")
    torch.manual_seed(3)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    state = elastic.WagmaState(model, opt, step=0)
    state._bcast_object = lambda obj, *args, **kwargs: obj
    torch.rand(5)  # the RNG moves after the state was made
    state.step = 4
    state.commit()
    assert torch.equal(state._rng, torch.get_rng_state())
    assert state._saved_state == {"step": 4}
    with torch.no_grad():
        model.weight.fill_(7.0)
    state.step = 9
    state.restore()
    assert state.step == 9 and model.weight.tolist() == [[7.0, 7.0]]

class Job:
    """hvd for ElasticStateCore.sync() on one process: this process is `rank` of a job
    whose ranks held a replica of the previous member set where `survivors` says so, and
    hold `counters` (rank -> the state's counters). allgather_object gathers the flags,
    broadcast_object returns the root's counters and records (root, name)."""

    def __init__(self, rank, survivors, counters):
        self._rank, self.survivors, self.counters = rank, survivors, counters
        self.broadcasts, self.sent = [], []

    def rank(self):
        return self._rank

    def allgather_object(self, obj, name=None):
        assert obj == self.survivors[self._rank], (obj, self.survivors)
        return list(self.survivors)

    def broadcast_object(self, obj, root_rank=0, name=None):
        self.broadcasts.append((root_rank, name))
        if root_rank == self._rank:  # the root gets back what it sent
            self.sent.append(dict(obj))
            return dict(obj)
        return dict(self.counters[root_rank])


class RecordingState(ElasticStateCore):
    """The framework's part recorded: the weight and divisor of the survivors' average,
    or the root of the start's broadcast."""

    def __init__(self, hvd, **counters):
        self.optimizer = None
        self.averaged, self.broadcast_from = [], []
        super().__init__(hvd, basics=types.SimpleNamespace(ensure_started=lambda: None),
                         **counters)

    def _average_model(self, weight, survivors):
        self.averaged.append((weight, survivors))

    def _broadcast_model(self, root_rank):
        self.broadcast_from.append(root_rank)


# Rank 0 a joiner (a host's ranks replaced rank 0's), ranks 1 and 2 survivors one step
# apart: every rank's counters before the sync.
COUNTERS = {0: {"step": 0, "epoch": 0}, 1: {"step": 40, "epoch": 2},
            2: {"step": 41, "epoch": 2}}


@pytest.mark.parametrize("rank,weight,after", [
    (0, 0.0, COUNTERS[1]),   # the joiner: the lowest-ranked survivor's counters
    (1, 1.0, COUNTERS[1]),
    (2, 1.0, COUNTERS[2]),   # a survivor ahead of rank 1 keeps its own: no step goes back
])
def test_joiners_take_the_lowest_ranked_survivors_counters_survivors_keep_theirs(
        monkeypatch, rank, weight, after):
    """README, elastic: hosts added "start from the survivors' average and counters", and
    after a loss "no step counter goes back". With rank 0 a joiner (it need not be a
    survivor) the counters come from the lowest-ranked survivor, rank 1, not from rank 0;
    a survivor keeps its own counters even where rank 1's are behind; the average weighs
    survivors 1 and the joiner 0 over the 2 survivors; every rank takes part in the
    counters' broadcast (a collective)."""
    from horovod_wagma.common.elastic import membership
    monkeypatch.setattr(membership, "MEMBERSHIP", membership.Membership())
    survivors = [False, True, True]
    membership.MEMBERSHIP.was_survivor = survivors[rank]
    # The second member set of the job (its replicas are of the first, until the sync).
    membership.MEMBERSHIP.generation = 2
    membership.MEMBERSHIP.members = [("h", 10), ("h", 11), ("h", 12)]
    job = Job(rank, survivors, COUNTERS)
    state = RecordingState(job, **COUNTERS[rank])
    state.sync()
    assert state.averaged == [(weight, 2)] and state.broadcast_from == []
    assert job.broadcasts == [(1, "wagma.elastic.counters")], job.broadcasts
    assert (state.step, state.epoch) == (after["step"], after["epoch"]), vars(state)
    # What a later commit saves, and a later sync starts from.
    assert state._saved_state == after
    # elastic.md: the next reset's majority rule and lost/added ranks are judged against
    # this member set: after the sync every rank, joiner or survivor, holds its replica.
    m = membership.MEMBERSHIP
    assert m.replica_generation == m.generation and m.replica_members == list(m.members), \
        (m.replica_generation, m.generation, m.replica_members, m.members)


def test_the_survivor_sends_its_current_counters_not_its_last_commits(monkeypatch):
    """README, elastic: hosts added start from the survivors' counters, and nothing is
    restored from the last commit. The lowest-ranked survivor committed at step 33 and
    trained on to step 40 (a commit less often than every step): the joiners get 40."""
    from horovod_wagma.common.elastic import membership
    monkeypatch.setattr(membership, "MEMBERSHIP", membership.Membership())
    membership.MEMBERSHIP.was_survivor = True
    membership.MEMBERSHIP.generation = 2
    membership.MEMBERSHIP.members = [("h", 10), ("h", 11)]
    job = Job(0, [True, False], {})
    state = RecordingState(job, step=33, epoch=1)
    assert state._saved_state == {"step": 33, "epoch": 1}  # its last commit
    state.step, state.epoch = 40, 2
    state.sync()
    assert job.sent == [{"step": 40, "epoch": 2}], job.sent
    assert (state.step, state.epoch) == (40, 2)


def test_the_first_sync_of_a_job_is_horovods_broadcast_from_rank_0(monkeypatch):
    """At the job's start nobody holds a replica (no survivors): the model and the
    counters come from rank 0, as in Horovod's own states, and nothing is averaged."""
    from horovod_wagma.common.elastic import membership
    monkeypatch.setattr(membership, "MEMBERSHIP", membership.Membership())
    job = Job(1, [False, False], {0: {"step": 5}, 1: {"step": 0}})
    state = RecordingState(job, step=0)
    state.sync()
    assert state.broadcast_from == [0] and state.averaged == []
    assert job.broadcasts == [(0, None)] and state.step == 5


# The Keras WagmaState (horovod_wagma/keras/elastic.py), in a child process that imports
# TensorFlow (about 10 s, hence extended; it needs no Horovod init). Prints one JSON line.
KERAS_CHILD = r"""
import json, os, types
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import horovod_wagma.keras as hvd               # before TensorFlow (Keras 2)
import numpy as np
import tensorflow as tf

kelastic = hvd.elastic
model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,)),
                             tf.keras.layers.BatchNormalization()])
model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
model.make_train_function(); model.make_test_function(); model.make_predict_function()
functions = lambda: [model.train_function is not None, model.test_function is not None,
                     model.predict_function is not None]
out = {"traced_before": functions()}
# The recipe's form: no optimizer given, so the state takes the model's compiled one,
# and a reset rebases its rounds (a WAGMA optimizer's rebase_rounds, stood in for).
state = kelastic.WagmaState(model, step=3)
restarts, rebased = [], []
state._basics = types.SimpleNamespace(restart=lambda: restarts.append(1))
model.optimizer.rebase_rounds = lambda: rebased.append(1)
state.reset()
out["traced_after_reset"] = functions()
out["restarts"] = len(restarts)
out["rebased"] = len(rebased)

floating = [v for v in model.variables if v.dtype.is_floating]
names = [v.name for v in floating]
def set_values():
    for i, v in enumerate(floating):
        v.assign(np.full(tuple(v.shape.as_list()), float(i + 1), dtype=v.dtype.as_numpy_dtype))
def values():
    return [sorted(set(np.asarray(v).ravel().tolist())) for v in floating]
# One rank stands in for two: the fake allreduce adds a second survivor whose every
# value is 4.
sums = []
real = kelastic._hvd_tf
kelastic._hvd_tf = types.SimpleNamespace(
    Sum="Sum", allreduce=lambda t, op=None, name=None: sums.append(name) or t + 4.0)
try:
    set_values(); state._average_model(0.0, 1)     # a joiner: weight 0, one survivor
    out["joiner"] = values()
    set_values(); state._average_model(1.0, 2)     # a survivor, beside the other one
    out["survivor"] = values()
finally:
    kelastic._hvd_tf = real
out.update(names=names, sums=sums)

# elastic.md: no step counter goes back at a reset; the Keras optimizer's rebase keeps
# its step count and counts the new engine's rounds from it (two resets, 7 then 12).
from horovod_wagma.keras.optimizer import _WagmaKerasMixin
opt = types.SimpleNamespace(_wagma={"round": tf.Variable(7, dtype=tf.int64),
                                    "round_base": tf.Variable(0, dtype=tf.int64),
                                    "state": None})
_WagmaKerasMixin.rebase_rounds(opt)
first = [int(opt._wagma["round"].numpy()), int(opt._wagma["round_base"].numpy())]
opt._wagma["round"].assign_add(5)
_WagmaKerasMixin.rebase_rounds(opt)
out["rebases"] = [first, [int(opt._wagma["round"].numpy()), int(opt._wagma["round_base"].numpy())]]
print("RESULT=" + json.dumps(out))
"""


@pytest.mark.tf
@pytest.mark.extended
def test_keras_state_drops_traced_functions_and_averages_every_floating_variable():
    """elastic.md: after a reset "the model's traced functions are dropped and traced
    again for the new member set" (train, test and predict); README: added hosts start
    from the survivors' average, in which joiners weigh 0. Keras's average is over
    model.variables, BatchNorm's moving statistics included: a joiner takes the
    survivors' values (4 everywhere), a survivor the mean of its own and the other's."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for var in ("HOROVOD_ELASTIC", "WAGMA_TIMELINE"):
        env.pop(var, None)
    done = subprocess.run([sys.executable, "-c", KERAS_CHILD], capture_output=True,
                          text=True, timeout=300, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT=")]
    assert done.returncode == 0 and lines, (done.stdout[-3000:], done.stderr[-5000:])
    import json
    res = json.loads(lines[-1][len("RESULT="):])
    assert res["traced_before"] == [True, True, True], res
    assert res["traced_after_reset"] == [False, False, False], res
    assert res["restarts"] == 1, res
    # README's recipe, WagmaState(model, ...): the model's own optimizer is rebased.
    assert res["rebased"] == 1, res
    names = res["names"]
    for part in ("kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance"):
        assert any(part in n for n in names), (part, names)
    assert res["sums"] == ["wagma.elastic.average"] * 2, res["sums"]
    assert res["joiner"] == [[4.0]] * len(names), list(zip(names, res["joiner"]))
    assert res["survivor"] == [[(i + 1 + 4.0) / 2] for i in range(len(names))], \
        list(zip(names, res["survivor"]))
    # [step count, base] after each reset: the count never goes back.
    assert res["rebases"] == [[7, 7], [12, 12]], res["rebases"]
