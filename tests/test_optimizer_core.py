"""The optimizers' shared core (horovod_wagma/common/), single process, no mpirun:
knobs and their errors, the global-round test on ints and tensors, which round
served a call and when global-round duties run, the fp16 rule, join()'s step
agreement, stream names, the fusion plan and the wrapped class. The optimizers'
behaviour across ranks is tested by test_optimizer.py and test_keras.py."""
import dataclasses
import inspect

import pytest
import torch

from horovod_wagma.common.optimizer import averaging_policy
from horovod_wagma.common.op.config import WagmaConfig
from horovod_wagma.common.optimizer.fp16_rule import fp16_result, python_cond
from horovod_wagma.common.optimizer.fusion_plan import FusionPlan
from horovod_wagma.common.optimizer.optimizer_core import OptimizerCore
from horovod_wagma.common.optimizer.optimizer_knobs import OptimizerKnobs
from horovod_wagma.common.optimizer.rounds import global_round_between, is_global_round
from horovod_wagma.common.optimizer.stream_names import StreamNames
from horovod_wagma.common.optimizer.wrapped_class import wrapped_class


def knobs(**overrides):
    """Knobs as an SGD optimizer's factory resolves them (averaging "local")."""
    k = OptimizerKnobs(**overrides)
    return dataclasses.replace(k, averaging=averaging_policy.resolve(k.averaging, False))


def test_knob_defaults_and_global_rounds_resolution():
    k = OptimizerKnobs()
    assert (k.group_size, k.sync_period, k.averaging, k.wait_avoiding, k.global_rounds,
            k.max_staleness, k.average_optimizer_state, k.drift_correction) == (
        None, 10, None, True, "wait_avoiding", None, "on_sync", None)


def test_the_averaging_default_follows_the_optimizer_family():
    """api.md: the optimizers' averaging rule defaults to "follow" for the Adam family
    and "local" otherwise; a given rule stays; OptimizerCore refuses an unresolved one
    (init's op default "fresh" would otherwise fill it in silently)."""
    assert averaging_policy.resolve(None, True) == "follow"
    assert averaging_policy.resolve("fresh", True) == "fresh"
    assert averaging_policy.resolve(None, False) == "local"
    assert averaging_policy.resolve("local", True) == "local"
    assert averaging_policy.resolve("paper", False) == "paper"
    for bad in ("newest", ""):
        with pytest.raises(ValueError, match="averaging must be one of"):
            OptimizerKnobs(averaging=bad)
    with pytest.raises(ValueError, match="resolved"):
        OptimizerCore(OptimizerKnobs(), _Basics(), "ps", FusionPlan(), "test.unresolved")
    assert core(averaging="fresh").status(0, None).averaging == "fresh"
    assert core(averaging="follow").status(0, None).averaging == "follow"
    assert core().status(0, None).averaging == "local"
    # Group rounds that wait for everyone make global rounds blocking too.
    assert knobs(wait_avoiding=False).global_rounds == "blocking"
    assert knobs(global_rounds="blocking").global_rounds == "blocking"


@pytest.mark.parametrize("argument,value", [
    ("group_size", 1), ("sync_period", 0), ("averaging", "mean"),
    ("global_rounds", "async"), ("max_staleness", -1), ("wait_avoiding", "yes"),
    ("average_optimizer_state", "x"), ("averaging", "delta")])
def test_each_bad_knob_is_a_value_error_naming_it(argument, value):
    with pytest.raises(ValueError, match=argument):
        knobs(**{argument: value})


def test_wait_avoiding_global_rounds_need_wait_avoiding_groups():
    with pytest.raises(ValueError, match="wait_avoiding=True"):
        knobs(wait_avoiding=False, global_rounds="wait_avoiding")


def test_from_arguments_takes_the_fields_and_the_frameworks_state_modes():
    arguments = dict(dataclasses.asdict(knobs()), optimizer=object(), process_set=None)
    assert OptimizerKnobs.from_arguments(arguments, "PyTorch") == knobs()
    for mode in ("on_sync", "always"):
        with pytest.raises(ValueError, match="PyTorch.*'never' or 'quasi_global'"):
            OptimizerKnobs.from_arguments(dict(arguments, average_optimizer_state=mode),
                                          "Keras", ("never", "quasi_global"))
    # An unknown mode lists every mode, whatever the framework.
    with pytest.raises(ValueError, match="quasi_global"):
        OptimizerKnobs.from_arguments(dict(arguments, average_optimizer_state="bogus"),
                                      "Keras", ("never", "quasi_global"))


def test_drift_correction_default_follows_the_wrapped_optimizer():
    """None: 0.25 where the optimizer keeps a first moment (SGD with momentum, the Adam
    family) and the state is averaged "on_sync"; off for plain SGD, Adagrad or another
    state mode. A given alpha is kept, and needs a first moment."""
    from horovod_wagma.common.optimizer.drift_policy import DEFAULT_ALPHA
    from horovod_wagma.torch.drift_correction import resolve_alpha
    params = [torch.nn.Parameter(torch.zeros(2))]
    momentum = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    assert DEFAULT_ALPHA == 0.25
    assert resolve_alpha(None, momentum, "on_sync") == 0.25
    assert resolve_alpha(None, torch.optim.AdamW(params), "on_sync") == 0.25
    assert resolve_alpha(None, torch.optim.SGD(params, lr=0.1), "on_sync") == 0.0
    assert resolve_alpha(None, torch.optim.Adagrad(params), "on_sync") == 0.0
    for mode in ("never", "always", "quasi_global"):
        assert resolve_alpha(None, momentum, mode) == 0.0
    assert resolve_alpha(0, momentum, "on_sync") == 0.0
    assert resolve_alpha(0.5, momentum, "on_sync") == 0.5
    with pytest.raises(ValueError, match="momentum"):
        resolve_alpha(0.5, torch.optim.SGD(params, lr=0.1), "on_sync")
    # A framework's own default (Keras: off) replaces 0.25 for None only.
    from horovod_wagma.common.optimizer import drift_policy
    assert drift_policy.KERAS_DEFAULT_ALPHA == 0.0
    assert drift_policy.resolve_alpha(None, lambda: None, "on_sync", 0.0) == 0.0
    assert drift_policy.resolve_alpha(0.3, lambda: None, "on_sync", 0.0) == 0.3


def test_drift_correction_reads_each_parameter_groups_moment():
    """design.md: k converts each group's first moment to gradient units, (1 - beta) /
    (1 - dampening) for SGD's momentum buffer, 1 for Adam's exp_avg, per parameter
    group (a group's momentum or dampening overrides the optimizer's defaults); api.md:
    a given drift_correction needs a first moment, so an SGD with one group without
    momentum refuses it, and the default None leaves it off there."""
    from horovod_wagma.torch.drift_correction import moment_scale, resolve_alpha
    a, b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    sgd = torch.optim.SGD([dict(params=[a]), dict(params=[b], momentum=0.5, dampening=0.2)],
                          lr=0.1, momentum=0.9)
    key, scales = moment_scale(sgd)
    assert key == "momentum_buffer" and scales == pytest.approx([0.1, 0.5 / 0.8])
    adam = torch.optim.Adam([dict(params=[a]), dict(params=[b], betas=(0.5, 0.9))])
    assert moment_scale(adam) == ("exp_avg", [1.0, 1.0])
    one_without = torch.optim.SGD([dict(params=[a]), dict(params=[b], momentum=0.0)],
                                  lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="momentum > 0"):
        moment_scale(one_without)
    with pytest.raises(ValueError, match="drift_correction needs momentum"):
        resolve_alpha(0.5, one_without, "on_sync")
    assert resolve_alpha(None, one_without, "on_sync") == 0.0


def test_a_given_drift_correction_needs_on_sync():
    """api.md: a given drift_correction (alpha > 0) learns at "on_sync" rounds only; with
    any other state mode it is a ValueError naming both knobs (the optimizer would
    silently learn nothing). 0 is off, allowed everywhere."""
    from horovod_wagma.common.optimizer.optimizer_knobs import OptimizerKnobs
    for mode in ("always", "never", "quasi_global"):
        with pytest.raises(ValueError, match="drift_correction needs average_optimizer_state"):
            OptimizerKnobs(average_optimizer_state=mode, drift_correction=0.25)
        assert OptimizerKnobs(average_optimizer_state=mode, drift_correction=0).drift_correction == 0
    for alpha in (0.25, 1.0):  # both ends of [0, 1] are allowed
        assert OptimizerKnobs(average_optimizer_state="on_sync",
                              drift_correction=alpha).drift_correction == alpha
    with pytest.raises(ValueError, match=r"drift_correction must be in \[0, 1\]"):
        OptimizerKnobs(drift_correction=1.5)


def test_named_parameters_must_cover_every_parameter():
    """api.md: named_parameters is checked as Horovod checks it: None, or unique
    (name, parameter) pairs covering every parameter of the optimizer."""
    from horovod_wagma.torch.named_parameters import check_named_parameters
    model = torch.nn.Linear(3, 2)
    params = list(model.parameters())
    check_named_parameters(None, params)
    check_named_parameters(model.named_parameters(), params)
    for partial in ([("weight", model.weight)], [("bias", model.bias)]):
        with pytest.raises(ValueError, match="some optimizer parameters are not in it"):
            check_named_parameters(partial, params)
    with pytest.raises(ValueError, match="duplicates: w"):
        check_named_parameters([("w", model.weight), ("w", model.bias)], params)
    with pytest.raises(ValueError, match="tuples"):
        check_named_parameters([model.weight, model.bias], params)


def test_is_global_round_on_ints_and_tensors():
    tau = 4
    expected = [r == 0 or (r + 1) % tau == 0 for r in range(13)]
    assert [is_global_round(r, tau) for r in range(13)] == expected
    assert all(isinstance(is_global_round(r, tau), bool) for r in range(13))
    # The same expression on a tensor, as in a TensorFlow graph: elementwise.
    assert is_global_round(torch.arange(13), tau).tolist() == expected
    assert [is_global_round(r, 1) for r in range(3)] == [True, True, True]


def test_global_round_between():
    tau = 3  # global rounds: 0, 2, 5, 8, ...
    assert global_round_between(-1, 0, tau)  # round 0
    assert not global_round_between(0, 1, tau)
    assert global_round_between(1, 2, tau) and global_round_between(0, 4, tau)
    assert not global_round_between(2, 4, tau)  # rounds 3 and 4 are group rounds
    assert global_round_between(3, 9, tau) and not global_round_between(5, 5, tau)
    brute = lambda a, b: any(is_global_round(r, tau) for r in range(a + 1, b + 1))  # noqa
    assert all(global_round_between(a, b, tau) == brute(a, b)
               for a in range(-1, 12) for b in range(a, 14))
    # Element-wise on integer tensors too (the Keras optimizer's graph decides its
    # duties on tensors), including upto <= after.
    pairs = [(a, b) for a in range(-1, 12) for b in range(-1, 14)]
    after, upto = (torch.tensor(v) for v in zip(*pairs))
    assert global_round_between(after, upto, tau).tolist() == [
        b > a and brute(a, b) for a, b in pairs]


def test_fp16_rule_replaces_at_global_rounds_and_corrects_at_group_rounds():
    x = torch.tensor([1.0001, 2.5, -3.25])
    sent = x.half().float()
    average = torch.tensor([0.5, 2.0, -3.0]).half().float()
    assert torch.equal(fp16_result(x, sent, average, True, python_cond), average)
    corrected = fp16_result(x, sent, average, False, python_cond)
    # x keeps its own residual x - x16: x + (avg16 - x16).
    assert torch.equal(corrected, x + (average - sent))
    assert not torch.equal(corrected, average)  # the residual 1.0001 - fp16(1.0001)


class _Basics:
    """WagmaBasics' calls the core makes, without an engine."""

    def __init__(self, last_rank=3, ranks=4, **init_knobs):
        self.config = WagmaConfig(**init_knobs)
        self.last_rank = last_rank
        self.ranks = ranks
        self.joined = 0

    def num_ranks(self, process_set=None):
        return self.ranks

    def stream_config(self, process_set=None, **overrides):
        return self.config.override(**overrides), None, None

    def join(self):
        self.joined += 1
        return self.last_rank


def core(basics=None, **overrides):
    return OptimizerCore(knobs(**overrides), basics or _Basics(), "ps", FusionPlan(),
                         "test.core")


def test_init_defaults_fill_the_knobs_left_at_none():
    c = core(_Basics(group_size=8, max_staleness=5))
    assert c.config.group_size == 8 and c.config.max_staleness == 5
    assert c.config.averaging == "local"  # the optimizer's default beats init's
    assert c.stream_knobs == dict(c.config.knobs(), process_set="ps")


def test_default_group_size_is_the_optimizers_and_follows_the_member_set():
    basics = _Basics(ranks=6)
    c = core(basics)
    assert c.stream_knobs["group_size"] == 6 and c.status(0, None).group_size == 6
    basics.ranks = 20   # Horovod elastic: a new member set; S is resolved per call
    assert c.stream_knobs["group_size"] == 8
    assert c.global_stream_knobs()["group_size"] == 8
    assert core(_Basics(ranks=6), group_size=2).stream_knobs["group_size"] == 2
    assert core(_Basics(ranks=6, group_size=3)).stream_knobs["group_size"] == 3   # init's


def test_served_round_and_duties_blocking():
    c = core(global_rounds="blocking", sync_period=3)
    # Step k is served by round k whatever the op reports.
    assert c.served_round(4, 7) == 4 and c.served_global(5, 6) and not c.served_global(4, 5)
    assert [c.duties_due(k, -1, 99) for k in range(6)] == [
        True, False, True, False, False, True]


def test_served_round_and_duties_wait_avoiding():
    c = core(sync_period=3)
    assert c.served_round(4, 7) == 7 and not c.served_global(5, 6) and c.served_global(1, 5)
    # A lagging rank served by round 6 after round 1 skipped the global rounds 2 and
    # 5: the others ran the duties there, so this step runs them too.
    assert c.duties_due(2, 1, 6)
    assert not c.duties_due(2, 5, 7)  # rounds 6, 7 are group rounds
    assert c.duties_due(0, -1, 0)


def test_global_stream_knobs():
    c = core(sync_period=4, max_staleness=None)
    assert c.global_stream_knobs(blocking=True) == dict(
        c.stream_knobs, sync_period=1, global_rounds="blocking")
    # Wait-avoiding: a stale value is measured in this stream's rounds, one per
    # global model round, so the bound keeps the model's max_staleness.
    assert c.global_stream_knobs() == dict(c.stream_knobs, sync_period=1, max_staleness=4)
    b = core(global_rounds="blocking")
    assert b.global_stream_knobs() == dict(b.stream_knobs, sync_period=1)
    # Drift correction's stream: the same rounds, the rule whose moves sum to zero.
    assert c.drift_stream_knobs() == dict(c.global_stream_knobs(), averaging="delta")
    assert WagmaConfig(averaging="delta").averaging == "delta"  # valid for a stream


def test_join_agrees_on_steps_only_with_blocking_global_rounds():
    calls = []

    def max_over_ranks(steps, name):
        calls.append((steps, name))
        return 42

    basics = _Basics(last_rank=2)
    blocking = OptimizerCore(knobs(global_rounds="blocking"), basics, None, FusionPlan(),
                             "test.join", "opt")
    assert blocking.join(7, max_over_ranks) == (2, 42)
    assert calls == [(7, "opt.join")] and basics.joined == 1
    assert core(basics).join(7, max_over_ranks) == (2, 7)
    assert len(calls) == 1 and basics.joined == 2


def test_status_is_a_read_only_snapshot_naming_the_streams():
    c = OptimizerCore(knobs(sync_period=4), _Basics(), None, FusionPlan(), "test.status",
                      "opt")
    st = c.status(torch.tensor(7), 9)   # a Keras step counter arrives as a tensor
    assert (st.name, st.sync_period, st.global_rounds, st.steps, st.served_round) == (
        "opt", 4, "wait_avoiding", 7, 9)
    assert type(st.steps) is int and st.wait_avoiding_global
    assert st.stream() == "opt.model0" == c.names.stream("model", 0)
    assert st.stream("sync", 2) == "opt.sync2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.steps = 8
    blocking = core(global_rounds="blocking").status(3, None)
    assert blocking.served_round is None and not blocking.wait_avoiding_global


def test_stream_names_count_per_prefix_in_creation_order():
    a, b = StreamNames("test.names"), StreamNames("test.names")
    other, named = StreamNames("test.other"), StreamNames("test.names", "mine")
    assert (a.name, b.name, other.name) == ("test.names0", "test.names1", "test.other0")
    assert named.name == "mine" and StreamNames("test.names").name == "test.names2"
    assert a.stream("model", 2) == "test.names0.model2" and a.join() == "test.names0.join"


def test_fusion_plan_buckets():
    v = list(range(7))
    assert FusionPlan().buckets(v) == [v] and FusionPlan(0).buckets(v) == [v]
    # K buckets exactly, the first n mod K one longer (Horovod's split_list)
    assert FusionPlan(3).buckets(v) == [[0, 1, 2], [3, 4], [5, 6]]
    assert FusionPlan(num_groups=2).buckets(v) == [[0, 1, 2, 3], [4, 5, 6]]
    assert FusionPlan(5).buckets(v) == [[0, 1], [2, 3], [4], [5], [6]]
    assert FusionPlan(4).buckets(v[:6]) == [[0, 1], [2, 3], [4], [5]]
    assert FusionPlan(groups=10).buckets(v) == [[x] for x in v]
    a, b, c = torch.zeros(1), torch.zeros(1), torch.zeros(1)
    assert FusionPlan([[c, a], []]).buckets([a, b, c]) == [[c, a], [b]]
    # api.md: every parameter not listed is a bucket of its own.
    d = torch.zeros(1)
    assert FusionPlan([[b]]).buckets([a, b, c, d]) == [[b], [a], [c], [d]]
    with pytest.raises(ValueError, match="groups"):
        FusionPlan(-1)


def test_fusion_plan_by_kind_sorts_kinds_and_keeps_order():
    buckets = [["b1", "a1", "b2", "a2"], ["c1"]]
    assert FusionPlan.by_kind(buckets, lambda s: s[0]) == [
        ["a1", "a2"], ["b1", "b2"], ["c1"]]


def test_wrapped_class_is_a_subclass_of_the_users_class():
    class Mixin:
        def step(self, closure=None):
            return ("wrapped", super(self.__class__, self).step(closure))

    p = torch.nn.Parameter(torch.ones(2))
    sgd = torch.optim.SGD([p], lr=0.5)
    wrapped = wrapped_class(sgd, Mixin)(sgd.param_groups)
    assert type(wrapped).__name__ == "SGD" and isinstance(wrapped, torch.optim.SGD)
    p.grad = torch.ones(2)
    assert wrapped.step()[0] == "wrapped" and p.tolist() == [0.5, 0.5]


def test_optimizer_signatures_follow_horovods():
    """Horovod's DistributedOptimizer arguments, in order, then WAGMA's keyword-only
    ones, whose defaults are OptimizerKnobs' (average_optimizer_state aside, see the
    Keras docstring)."""
    import horovod.torch
    from horovod_wagma.torch import DistributedWagmaOptimizer
    ours = inspect.signature(DistributedWagmaOptimizer).parameters
    theirs = inspect.signature(horovod.torch.DistributedOptimizer).parameters
    assert list(ours)[:len(theirs)] == list(theirs)
    # api.md's signature block: Horovod's arguments keep Horovod's defaults and kinds
    # (compression none, backward_passes_per_step=1, op Average, ..., the global set).
    for name, theirs_param in theirs.items():
        assert ours[name].kind == theirs_param.kind, name
        assert ours[name].default == theirs_param.default, (name, ours[name].default)
    assert ours["backward_passes_per_step"].default == 1 and ours["num_groups"].default == 0
    assert ours["named_buffers"].default is None
    assert ours["named_buffers"].kind is inspect.Parameter.KEYWORD_ONLY
    for f in dataclasses.fields(OptimizerKnobs):
        assert ours[f.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert ours[f.name].default == f.default


def test_averaging_rules_are_the_engines_table():
    """Python reads the rules from the engine (averaging_rule.cc, through c_api), so
    both accept the same names with the same wire codes (the shipped rules' codes never
    move); a rule for models is offered in the error that refuses 'delta'."""
    from horovod_wagma.common.op import engine_lib
    from horovod_wagma.common.op.config import AVERAGING_RULES
    shipped = {"fresh": 0, "paper": 1, "local": 2, "delta": 3, "follow": 4}
    assert AVERAGING_RULES == engine_lib.averaging_rules()
    assert {name: AVERAGING_RULES.get(name) for name in shipped} == shipped
    with pytest.raises(ValueError, match="'fresh', 'paper', 'local', 'follow'"):
        knobs(averaging="delta")
    with pytest.raises(ValueError) as refused:
        WagmaConfig(averaging="mean")
    assert all(repr(name) in str(refused.value) for name in AVERAGING_RULES), refused.value
