"""The benchmarks' regime and held-out tooling (single process, no timing asserted):
--time-scale multiplies every sleep and time span, the host's CPU busy share is read
from /proc/stat as documented, the held-out tasks' optimizers and schedules are what
their docstrings say, and epochs to a target come from end-of-epoch accuracies. A
wrong one would put a number in the wrong regime or credit the wrong epoch."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
import host_load  # noqa: E402
import tasks as task_lib  # noqa: E402

STAT = """cpu  100 5 50 800 40 3 2 0 7 0
cpu0 50 2 25 400 20 1 1 0 0 0
intr 1 2 3
"""


def test_busy_share_counts_everything_but_idle_and_iowait(tmp_path):
    assert host_load.parse_cpu_line(STAT) == (160, 1000)
    path = tmp_path / "stat"
    path.write_text(STAT)
    load = host_load.HostLoad(str(path))
    # 300 more jiffies: 90 busy (user 60, system 30), 210 idle or iowait (200 + 10).
    path.write_text("cpu  160 5 80 1000 50 3 2 0 7 0\n")
    assert load.busy_share() == pytest.approx(90 / 300)
    assert host_load.regime(0.59) == "quiet" and host_load.regime(0.60) == "loaded"
    assert host_load.fmt_busy(0.3) == "30% (quiet)"
    with pytest.raises(ValueError, match="aggregate 'cpu' line"):
        host_load.parse_cpu_line("cpu0 1 2 3 4 5\n")


def test_the_real_proc_stat_gives_a_share_between_0_and_1():
    load = host_load.HostLoad()
    sum(i * i for i in range(200000))
    assert 0.0 <= load.busy_share() <= 1.0


def test_time_scale_multiplies_every_sleep_budget_interval_and_horovods_cycle(monkeypatch):
    import epoch_loop
    import harness
    monkeypatch.delenv("HOROVOD_CYCLE_TIME", raising=False)
    a = epoch_loop.parse_args(["--time-scale", "4", "--tasks", "mlp"])
    b = epoch_loop.parse_args(["--tasks", "mlp"])
    for name in ("step_time", "delay", "budget", "interval"):
        assert getattr(a, name) == pytest.approx(4 * getattr(b, name)), name
    assert (a.horovod_cycle_ms, b.horovod_cycle_ms) == (4.0, 1.0)
    # The ranks get it through the launcher's environment.
    seen = {}
    monkeypatch.setattr(harness, "relaunch_under_mpirun",
                        lambda script, n, timeout, env: seen.update(env))
    harness.launch("x.py", a, lambda args: None)
    assert seen["HOROVOD_CYCLE_TIME"] == "4"
    # A cycle the user set wins.
    monkeypatch.setenv("HOROVOD_CYCLE_TIME", "2.5")
    assert epoch_loop.parse_args(["--time-scale", "4"]).horovod_cycle_ms == 2.5
    with pytest.raises(SystemExit):
        epoch_loop.parse_args(["--time-scale", "0"])


def test_time_scale_in_the_time_bounded_and_per_step_benchmarks():
    import steps_to_accuracy
    import time_to_accuracy
    a = time_to_accuracy.parse_args(["--time-scale", "3", "--budget", "10"])
    b = time_to_accuracy.parse_args(["--budget", "10"])
    for name in ("step_time", "delay", "budget", "interval"):
        assert getattr(a, name) == pytest.approx(3 * getattr(b, name)), name
    s = steps_to_accuracy.parse_args(["--time-scale", "2"])
    assert s.step_time == pytest.approx(2 * steps_to_accuracy.parse_args([]).step_time)


@pytest.mark.parametrize("name", sorted(task_lib.HELD_OUT))
def test_held_out_tasks_build_their_own_optimizer_and_schedule(name):
    import torch
    T = task_lib.HELD_OUT[name]
    base = next(B for B in task_lib.TASKS.values() if issubclass(T, B))
    differs = [k for k in ("optimizer", "lr", "batch", "decay", "num_classes")
               if getattr(T, k) != getattr(base, k)]
    differs += ["width/depth"] if (getattr(T, "HIDDEN", None), getattr(T, "CHANNELS", None)) \
        != (getattr(base, "HIDDEN", None), getattr(base, "CHANNELS", None)) else []
    assert len(differs) >= 2, (name, differs)
    task = T(0)
    model = task.make_model(0)
    opt = task.make_optimizer(model.parameters())
    assert isinstance(opt, torch.optim.Adam if T.optimizer == "adam" else torch.optim.SGD)
    assert opt.param_groups[0]["lr"] == T.lr
    out = model(task.x_test[:3]) if name != "seq_decay" else None
    if out is not None:
        assert out.shape == (3, T.num_classes)
    assert int(task.y_train.max()) == T.num_classes - 1
    assert T.rising_target < T.target


def test_the_step_schedule_multiplies_at_each_listed_epoch():
    t = task_lib.MLP20Task.__new__(task_lib.MLP20Task)   # no data needed
    lrs = [t.lr_at(e) for e in range(10)]
    assert lrs[:4] == [0.1] * 4
    assert lrs[4:8] == [pytest.approx(0.03)] * 4
    assert lrs[8:] == [pytest.approx(0.009)] * 2
    m = task_lib.MLPTask.__new__(task_lib.MLPTask)
    assert [m.lr_at(e) for e in (0, 5, 50)] == [m.lr] * 3


def test_epochs_to_a_target_use_the_accuracy_at_each_epoch_end():
    import epoch_loop
    # Epoch ends at 1, 2, 3, 4 s; snapshots every 0.5 s.
    rec = {"epochs_per_rank": [[{"end": float(e)} for e in (1, 2, 3, 4)]],
           "curve": [[0.0, 10.0], [0.5, 40.0], [1.0, 50.0], [1.5, 81.0], [2.0, 79.0],
                     [2.5, 84.0], [3.0, 86.0], [3.5, 70.0], [4.0, 88.0]]}
    assert epoch_loop.epoch_accuracies(rec) == [50.0, 79.0, 86.0, 88.0]
    # 81% between epoch ends does not count: the rising target is reached at epoch 3.
    assert epoch_loop.epochs_to(rec, 80.0) == 3
    assert epoch_loop.epochs_to(rec, 87.0) == 4
    assert epoch_loop.epochs_to(rec, 86.0) == 3     # reaching the target counts
    assert epoch_loop.epochs_to(rec, 95.0) == math.inf
    other = {"epochs_per_rank": [[{"end": 1.0}, {"end": 2.0}, {"end": 3.0}]],
             "curve": [[1.0, 60.0], [2.0, 81.0], [3.0, 70.0]]}
    assert epoch_loop.median_by_epoch([rec, other]) == [55.0, 80.0, 78.0]


def test_the_paired_gap_compares_each_seed_with_the_same_seed_of_the_base():
    import epoch_loop

    def rec(method, seed, accs):
        return {"method": method, "seed": seed,
                "epochs_per_rank": [[{"end": float(e + 1)} for e in range(len(accs))]],
                "curve": [[float(e + 1), a] for e, a in enumerate(accs)]}
    runs = [rec("horovod", 0, [50, 70, 80]), rec("horovod", 1, [60, 75, 81]),
            rec("horovod", 2, [40, 65, 79]),
            rec("wagma", 0, [52, 69, 80]), rec("wagma", 1, [58, 75, 82]),
            rec("wagma", 2, [44, 60])]
    # Seed by seed: +2 -1 0 / -2 0 +1 / +4 -5: medians +2, -1 (as far as all went).
    assert epoch_loop.paired_gap_by_epoch(runs, "wagma", "horovod") == [2.0, -1.0]
    # The medians of each apart (52 vs 50, 69 vs 70) would say the same here, but not in
    # general: a seed without a base run is not paired.
    assert epoch_loop.paired_gap_by_epoch(runs + [rec("wagma", 7, [99, 99, 99])],
                                          "wagma", "horovod") == [2.0, -1.0]
    assert epoch_loop.seed_spread_by_epoch(runs, "horovod") == [20.0, 10.0, 2.0]


def test_where_the_work_goes_sums_the_model_streams_only():
    import epoch_loop
    engine = {"wagma.optimizer0.model0": dict(rounds=30, passive_joins=10, rounds_left_out=4,
                                              contribution_age_mean=2.0),
              "wagma.optimizer0.model1": dict(rounds=30, passive_joins=0, rounds_left_out=0,
                                              contribution_age_mean=0.0),
              "wagma.optimizer0.sync0": dict(rounds=5, passive_joins=50, rounds_left_out=50,
                                             contribution_age_mean=0.0)}
    fresh, left, age = epoch_loop.model_contributions(engine)
    assert fresh == pytest.approx(60 / 70)
    assert left == pytest.approx(4 / 10)
    assert age == pytest.approx(2.0)      # over the 6 passive values that counted
    assert math.isnan(epoch_loop.model_contributions({})[0])


def test_a_saved_run_reports_ratios_to_horovod_and_lbbsp_seed_by_seed(tmp_path, capsys):
    """--from-json prints the same tables from the JSON: x Horovod and x LB-BSP are
    per-seed ratios (then the median), and a run that never reached the target is inf."""
    import json
    import epoch_loop

    def run(method, seed, reach_at):
        ends = [1.0, 2.0, 3.0, 4.0]
        curve = [[t, 90.0 if t >= reach_at else 50.0] for t in (0.0, 1.0, 2.0, 3.0, 4.0)]
        return dict(method=method, seed=seed, task="mlp", case="persistent", target=84.5,
                    curve=curve, samples_per_s=100.0, cpu_busy=0.4,
                    epochs_per_rank=[[dict(end=e, idle_s=0.0, train_s=1.0) for e in ends]] * 8)
    runs = [run("horovod", 0, 4.0), run("horovod", 1, 4.0),
            run("horovod+lbbsp", 0, 2.0), run("horovod+lbbsp", 1, 4.0),
            run("wagma+lbbsp", 0, 1.0), run("wagma+lbbsp", 1, 99.0)]
    for r in runs[-1:]:
        r["curve"] = [[t, "nan" if t == 0.0 else 50.0] for t, _ in r["curve"]]
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"ranks": 8, "runs": runs}))
    epoch_loop.report_saved(str(path))
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("wagma+lbbsp"))
    # seed 0: 1 s against Horovod's 4 and LB-BSP's 2; seed 1 never (inf, the median of
    # two is their mean).
    assert "inf [1.00-inf]" in row          # time to target
    assert "inf [0.25-inf]" in row and "inf [0.50-inf]" in row, row
    assert "epochs to 84.5" in out and "40" in row   # CPU busy %
