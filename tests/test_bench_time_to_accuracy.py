"""The time-to-accuracy benchmark's own logic (single process, no timing asserted):
the snapshot clock, the analysis that turns curves into ratios, and method specs.
A wrong snapshot or ratio would silently bias every number in the README."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
import time_to_accuracy as tta  # noqa: E402
import measure  # noqa: E402  (bench/measure.py: the benchmarks' clock and snapshots)
import methods  # noqa: E402  (bench/methods.py: the one method syntax)
from adapters import torch_flatten  # noqa: E402


def test_snapshot_slots_hold_the_model_before_the_step_that_spans_them():
    import torch
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    snaps = measure.Snapshots(*torch_flatten(model), interval=1.0, budget=5.0)
    # Steps end at 0.5, 2.7 (spans slots 1 and 2), 2.9, 4.2 (spans 3 and 4); the
    # model after step k is k.
    for k, end in enumerate([0.5, 2.7, 2.9, 4.2], start=1):
        snaps.before_step()
        with torch.no_grad():
            model.weight.fill_(float(k))
        snaps.after_step(end)
    snaps.finish()  # slot 5 (t=5.0): after the last step, the final model
    assert snaps.store[:, 0].tolist() == [0.0, 1.0, 1.0, 3.0, 3.0, 4.0]


def _run(method, seed, points):
    return {"method": method, "seed": seed, "curve": points, "steps_per_s": 10.0}


def test_analysis_ratios_per_seed_and_best_local_baseline():
    curves = {  # time at which each reaches 90 (the target), per seed
        "horovod": [10.0, 20.0], "localsgd": [6.0, 8.0], "hier": [5.0, 12.0],
        "wagma": [3.0, 4.0]}
    runs = [_run(m, s, [[0.0, 10.0], [t, 91.0], [t + 1, 92.0]])
            for m, ts in curves.items() for s, t in enumerate(ts)]
    runs.append(_run("diloco", 0, [[0.0, 10.0], [5.0, 50.0]]))  # never reaches 90
    runs.append(_run("diloco", 1, [[0.0, 10.0], [5.0, 95.0]]))
    methods = list(curves) + ["diloco"]
    rows, best = tta.analyse_case(runs, methods, target=90.0)
    # Medians: localsgd 7, hier 8.5, diloco median(inf, 5) = inf -> localsgd is best.
    assert best == "localsgd"
    assert rows["wagma"]["x_horovod"] == (pytest.approx(0.25), 0.2, 0.3)
    assert rows["wagma"]["x_best_local"][1:] == (0.5, 0.5)
    assert rows["diloco"]["reached"] == 1 and rows["diloco"]["time"][2] == math.inf
    case = ("mlp", "iid", "random")
    assert tta.verdict(case, rows["wagma"], best) == "met"
    assert tta.verdict(case, rows["hier"], best) == "MISSED"  # 0.6x Horovod, 1.3x local
    assert tta.verdict(("mlp", "iid", "persistent"), rows["hier"], best) == "met"
    assert measure.final_accuracy(runs[0]) == pytest.approx((10 + 91 + 92) / 3)


@pytest.mark.parametrize("spec,error", [
    ("adam", "unknown method"), ("wagma:rule", "key=value"),
    ("localsgd:S=2", "unknown options"), ("horovod:tau=3", "unknown options")])
def test_bad_method_specs_are_refused(spec, error):
    with pytest.raises(ValueError, match=error):
        methods.parse_spec(spec)


def test_method_spec_values():
    assert methods.parse_spec("wagma:rule=local,S=2,outer=0.5,rounds=wa") == (
        "wagma", {"rule": "local", "S": 2, "outer": 0.5, "rounds": "wa"})


def test_method_specs_say_which_run_in_lockstep_and_map_to_the_optimizer_knobs():
    # The library's default global rounds are wait-avoiding; group rounds that wait
    # (wa=0) make them blocking too.
    assert not methods.blocking("wagma") and not methods.blocking("wagma:rounds=wa")
    assert methods.blocking("wagma:rounds=blocking") and methods.blocking("wagma:wa=0")
    assert methods.blocking("horovod") and methods.blocking("localsgd:tau=4")
    assert methods.wagma_knobs({"rounds": "wa", "S": 2, "wa": 0, "fp16": 1},
                               {"tau": 10, "S": None}) == {
        "sync_period": 10, "global_rounds": "wait_avoiding", "group_size": 2,
        "wait_avoiding": False}
    with pytest.raises(ValueError, match="this benchmark runs"):
        methods.check("localsgd", ("horovod", "wagma"))
    with pytest.raises(ValueError, match="not supported"):
        methods.check("wagma:outer=0.5", ("wagma",), ("outer",))


def test_the_clock_evaluates_through_the_collective_and_stops_together():
    """Every `every` steps the evaluation runs; its compute is off the clock, the
    collective is on it, and the run stops at the first evaluation at which any rank
    (here: the collective's sum says so) is past the budget."""
    import time

    class Comm:
        def Barrier(self):
            pass

    class Snaps:
        def before_step(self):
            pass

        def after_step(self, now):
            self.now = now

    calls = []

    def metric():
        time.sleep(0.3)  # an evaluation's compute: must not count
        return 1.0

    def allreduce(values):
        calls.append(list(values))
        time.sleep(0.02)  # the collective (a wait for slower ranks): counts
        # Another rank is past the budget from the third evaluation on.
        return [values[0] * 2, values[1] + (1.0 if len(calls) >= 3 else 0.0)]

    evaluation = measure.Evaluation(4, metric, allreduce)
    steps, wall, busy = measure.clocked_run(Comm(), budget=100.0, snaps=Snaps(),
                                            one_step=lambda i: time.sleep(0.01),
                                            lockstep=True, synced=lambda i: True,
                                            evaluation=evaluation)
    assert steps == 12 and len(calls) == 3
    assert 0.0 <= busy <= 1.0
    assert all(c[1] == 0.0 for c in calls)  # this rank never was past the budget
    assert evaluation.compute_s >= 3 * 0.3
    # 12 steps of 10 ms and 3 collectives of 20 ms, without the 0.9 s of compute.
    assert 0.12 + 0.06 <= wall < 0.12 + 0.06 + 0.6, wall


def test_steps_to_accuracy_analysis_per_seed_at_equal_steps():
    """The diagnostic (bench/steps_to_accuracy.py): steps to target of the averaged and
    of the own models, ratios to Horovod's per seed, scores at Horovod's median steps
    to target, and the largest avg-own gap after the first quarter of the run."""
    import steps_to_accuracy as s2a
    steps = [0, 5, 25, 45, 65]

    def run(method, seed, avg, own):
        return {"method": method, "seed": seed, "steps": steps, "avg": avg, "own": own,
                "spread": [0.0, 0.1, 0.2, 0.3, 0.4]}
    runs = [run("horovod", 0, [10, 50, 91, 92, 93], [10, 50, 91, 92, 93]),
            run("horovod", 1, [10, 50, 80, 91, 92], [10, 50, 80, 91, 92]),
            run("wagma", 0, [10, 91, 92, 93, 94], [10, 60, 85, 91, 92]),
            run("wagma", 1, [10, 50, 80, 85, 91], [10, 50, 70, 80, 89])]
    rows, mid = s2a.analyse_case(runs, ["horovod", "wagma"], 90)
    assert mid == 35   # the median of Horovod's 25 and 45 steps
    w = rows["wagma"]
    assert w["avg_steps"] == (35, 5, 65)
    assert w["avg_x"] == pytest.approx((0.5 * (5 / 25 + 65 / 45), 5 / 25, 65 / 45))
    assert w["own_steps"][0] == math.inf and w["own_reached"] == 1
    assert w["avg_at_mid"] == (89, 85, 93)   # the snapshot at step 45, the first >= 35
    assert w["own_gap_after_first"] == (8.5, 7, 10)   # steps >= 16: max of avg - own
    assert w["spread_final"] == (0.4, 0.4, 0.4)
    assert s2a.verdict("noniid", w).startswith("avg x1.4: met; own within 2: MISSED")
    assert s2a.verdict("iid", w) == "avg x1.2: met"


def test_peer_specs_and_wagma_as_a_multiple_of_each_peer():
    """The real peers (bench/peers.py) parse like every method, refuse keys they do
    not have, and each case row gives WAGMA's time over the method's, per seed; the
    random-imbalance target against a peer is WAGMA <= 0.8x its time."""
    assert methods.parse_spec("hivemind:tau=50,mm=0.5,local=1") == (
        "hivemind", {"tau": 50, "mm": 0.5, "local": 1})
    assert methods.parse_spec("torchft_diloco:tau=20,outer=0.7")[1] == {"tau": 20,
                                                                        "outer": 0.7}
    with pytest.raises(ValueError, match="unknown options"):
        methods.parse_spec("torchft_localsgd:outer=0.7")
    assert methods.blocking("torchft_localsgd") and "hivemind" in methods.PEERS
    assert "torchft_localsgd" not in methods.BASELINES   # not a 'best local' candidate
    curves = {"horovod": [10.0, 20.0], "wagma": [3.0, 4.0],
              "torchft_localsgd": [4.0, 4.0], "hivemind": [6.0, 5.0]}
    runs = [_run(m, s, [[0.0, 10.0], [t, 91.0]]) for m, ts in curves.items()
            for s, t in enumerate(ts)]
    rows, best = tta.analyse_case(runs, list(curves), target=90.0)
    assert best is None and rows["wagma"]["wagma_x"] is None
    assert rows["torchft_localsgd"]["wagma_x"] == (pytest.approx(0.875), 0.75, 1.0)
    assert rows["hivemind"]["wagma_x"] == (pytest.approx(0.65), 0.5, 0.8)
    case = ("mlp", "noniid", "random")
    assert tta.peer_verdict(case, rows["torchft_localsgd"]) == "peer target MISSED"
    assert tta.peer_verdict(case, rows["hivemind"]) == "peer target met"
    assert tta.peer_verdict(("mlp", "noniid", "persistent"), rows["hivemind"]) == ""
    never = dict(rows["hivemind"], reached=0, wagma_x=None)
    assert tta.peer_verdict(case, never).startswith("peer target met")


@pytest.mark.parametrize("text,error", [
    ("hivemind", "cannot meet a Horovod collective"),
    ("torchft_localsgd+balanced", "equal shards"),
    ("torchft_diloco:tau=20+lbbsp", "equal shards")])
def test_the_epoch_loop_refuses_peers_where_they_cannot_run(text, error):
    """hivemind blocks at its epoch ends, torchft needs equal steps on every replica:
    the epoch loop (a Horovod allreduce at every epoch end) refuses both before any
    rank starts, instead of stalling in a quorum or a matchmaking."""
    import epoch_loop
    with pytest.raises(ValueError, match=error):
        epoch_loop.parse_method(text)
    assert epoch_loop.parse_method("torchft_localsgd:tau=20") == (
        "torchft_localsgd:tau=20", "equal")
