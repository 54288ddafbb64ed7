"""BalancedDistributedSampler: shares that follow measured throughput, exactly-once
coverage, rebalancing, determinism, join at the end, and Horovod's own optimizer
refused with a clear error (workers/balanced_sampler.py, 4 real ranks). The share
arithmetic itself is tested without ranks below."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import resident
from horovod_wagma.common.balance.balanced_shares import proportional_shares, share_bounds
from horovod_wagma.common.optimizer.step_clock import StepClock
from horovod_wagma.common.balance.throughput_exchange import ThroughputExchange

SCENARIOS = ["wagma", "drop_last", "horovod_unequal", "lbbsp", "wagma_lbbsp",
             "epoch_mismatch"]
BATCH = 8


RESIDENT = resident.item("balanced_sampler.py", 4, *SCENARIOS, timeout=300)


@pytest.fixture(scope="module")
def launch(transport):
    return RESIDENT.scenarios()


def expected_shares(total, slow):
    """Shares proportional to the injected speeds: the slow rank takes 2x per step."""
    weights = [0.5 if r == slow else 1.0 for r in range(4)]
    return [total * w / sum(weights) for w in weights]


@pytest.mark.ranks
def test_shares_follow_the_injected_speeds_and_rebalance(launch):
    """Epoch 0 equal; epoch 1 follows epoch 0's speeds (rank 0 2x slower) within one
    batch; epoch 2 still epoch 1's; rank 1 turned slow in epoch 2, and epoch 3 follows
    it. Every rank computed the same shares, and len(sampler) is its own."""
    results = launch.results("wagma")
    total = results[0]["total"]
    for e in range(4):
        shares = [results[r]["epochs"][e]["shares"] for r in range(4)]
        assert all(s == shares[0] for s in shares), shares  # deterministic everywhere
        assert sum(shares[0]) == total
        for r in range(4):
            assert results[r]["epochs"][e]["length"] == shares[0][r]
            assert len(results[r]["epochs"][e]["indices"]) == shares[0][r]
    assert len(set(results[0]["epochs"][0]["shares"])) == 1  # nothing measured yet
    for e, slow in ((1, 0), (2, 0), (3, 1)):
        shares = results[0]["epochs"][e]["shares"]
        for r, want in enumerate(expected_shares(total, slow)):
            assert abs(shares[r] - want) <= BATCH, (e, shares, results[0]["epochs"][e])
    # api.md: `throughputs` are the gathered samples/s of each rank's own work over the
    # previous epoch: batches of 8 (the last one short) per injected cycle, 80 ms on
    # the slow rank, 40 ms on the others: about 100 and 200 samples/s. A cycle is
    # paced to at least its injected time, so the upper bound is near (25% for clock
    # jitter); load only lengthens cycles, hence the generous lower bound. Steps per
    # second (8x fewer) or another unit would cut the same shares.
    for e, slow in ((1, 0), (2, 0), (3, 1)):
        got = results[0]["epochs"][e]["throughputs"]
        assert len(got) == 4 and all(results[r]["epochs"][e]["throughputs"] == got
                                     for r in range(4)), (e, got)
        for r in range(4):
            nominal = BATCH / (0.080 if r == slow else 0.040)
            assert 0.3 * nominal < got[r] <= 1.25 * nominal, (e, r, got)


@pytest.mark.ranks
def test_every_sample_exactly_once_per_epoch(launch):
    """The ranks' indices of an epoch together are exactly torch's DistributedSampler's
    (the same permutation, padded as torch pads), whatever the shares."""
    results = launch.results("wagma")
    for e in range(4):
        seen = sorted(i for r in range(4) for i in results[r]["epochs"][e]["indices"])
        assert seen == results[0]["torch"][e]
    # Shuffled: epochs differ (torch's seed + epoch).
    assert results[0]["epochs"][0]["indices"] != results[0]["epochs"][1]["indices"]


@pytest.mark.ranks
def test_drop_last_without_shuffle(launch):
    results = launch.results("drop_last")
    for e in range(2):
        seen = [i for r in range(4) for i in results[r]["epochs"][e]["indices"]]
        assert sorted(seen) == results[0]["torch"][e] and len(seen) == results[0]["total"]
        assert seen == sorted(seen)  # contiguous shares of the unshuffled order


@pytest.mark.ranks
def test_fast_ranks_take_more_steps_then_join(launch):
    """Under WAGMA the fast ranks take more steps; opt.join() and Horovod's hvd.join()
    end the run on every rank."""
    results = launch.results("wagma")
    steps = [results[r]["steps"] for r in range(4)]
    assert steps[2] > steps[0] and steps[3] > steps[0], steps
    for res in results.values():
        assert res["opt_join"] in range(4) and res["hvd_join"] in range(4)
    # join() returns the last rank to join: one answer, the same on every rank.
    assert len({res["opt_join"] for res in results.values()}) == 1, results
    assert len({res["hvd_join"] for res in results.values()}) == 1, results


@pytest.mark.ranks
def test_horovods_optimizer_with_unequal_shares_is_a_clear_error(launch):
    results = launch.results("horovod_unequal")
    for res in results.values():
        assert res["first"] is None  # epoch 0: equal shares, Horovod's loop runs
        assert res["second"].startswith("ValueError") and "DistributedOptimizer" in \
            res["second"] and "DistributedWagmaOptimizer" in res["second"], res


@pytest.mark.ranks
def test_wagma_over_lbbsp_batches_takes_lbbsps_step_when_every_rank_is_on_time(launch):
    """README's recipe for a persistent straggler, WAGMA with BalancedBatchSampler and
    loss_weight: equal steps, batches following the injected speeds under WAGMA's
    defaults (rank 0 2x slower: the smallest batch once measured), and with every rank
    on time each averaged model is LB-BSP's step (the mean gradient of the union of the
    ranks' uneven batches), at every step."""
    results = launch.results("wagma_lbbsp")
    for e in range(3):
        eps = [results[r]["epochs"][e] for r in range(4)]
        assert len({ep["steps"] for ep in eps}) == 1, eps
        sizes = eps[0]["batch_sizes"]
        assert sum(sizes) == 4 * BATCH
        if e > 0:   # measured in epochs 0-1: rank 0 took 2x as long a sample
            assert sizes[0] < min(sizes[1:]), (e, sizes)
        for r, ep in enumerate(eps):
            assert ep["sizes"] == [sizes[r]]
    for r in range(4):
        error = results[r]["epochs"][2]["max_error"]
        assert error is not None and error < 1e-12, (r, error)


@pytest.mark.ranks
def test_lbbsp_equal_steps_batches_follow_speeds_and_weights_give_the_mean_gradient(launch):
    """BalancedBatchSampler under Horovod's own optimizer: every rank takes the same
    steps; the batch sizes follow the injected speeds within one sample; the ranks'
    batches together are every sample once (plus padding to whole global batches);
    with the loss scaled by
    loss_weight the allreduced gradient equals the global batch's mean gradient."""
    results = launch.results("lbbsp")
    g = results[0]["global_batch"]
    # api.md: padded to a whole number of global batches: 803 samples in batches of 32
    # take ceil(803 / 32) = 26 steps, not one more.
    assert g == 4 * BATCH and results[0]["steps"] == -(-803 // g) == 26, results[0]["steps"]
    for e in range(4):
        sizes = [results[r]["epochs"][e]["batch_sizes"] for r in range(4)]
        assert all(s == sizes[0] for s in sizes) and sum(sizes[0]) == g
        for r in range(4):
            ep = results[r]["epochs"][e]
            assert ep["steps"] == results[0]["steps"]  # equal steps everywhere
            assert ep["sizes"] == [sizes[0][r]]  # every batch of the epoch that size
            assert abs(ep["weight"] - 4 * sizes[0][r] / g) < 1e-12
            assert ep["grad_error"] < 1e-12, ep["grad_error"]
        # Every sample once, plus padding up to a whole number of global batches.
        seen = [i for r in range(4) for i in results[r]["epochs"][e]["indices"]]
        assert sorted(set(seen)) == sorted(set(results[0]["torch"][e]))
        assert len(seen) == results[0]["steps"] * g
        assert len(seen) - len(set(seen)) == results[0]["steps"] * g - 803
    assert len(set(results[0]["epochs"][0]["batch_sizes"])) == 1
    # Epoch 2's sizes follow epoch 1's speeds (rank 0 still slow), measured with
    # unequal batches: samples per second, not steps (a step's cycle grows with its
    # batch here, so steps per second would cut equal batches again).
    for e, slow in ((1, 0), (2, 0), (3, 1)):
        sizes = results[0]["epochs"][e]["batch_sizes"]
        for r, want in enumerate(expected_shares(g, slow)):
            assert abs(sizes[r] - want) <= 1, (e, sizes)
    # Unequal batches did happen, so the weighting was exercised.
    assert results[0]["epochs"][1]["weight"] < 1.0


@pytest.mark.ranks
def test_set_epoch_at_different_epochs_is_a_clear_error(launch):
    for res in launch.results("epoch_mismatch").values():
        assert res["error"].startswith("ValueError") and "same epoch" in res["error"], res


def test_shares_sum_and_follow_the_weights():
    assert proportional_shares(100, [1, 1, 1, 1]) == [25, 25, 25, 25]
    assert proportional_shares(103, [1, 1, 1, 1]) == [26, 26, 26, 25]
    assert proportional_shares(70, [1, 2, 2, 2]) == [10, 20, 20, 20]
    # Unmeasured ranks (0, nan) count as the measured mean; none measured: equal.
    assert proportional_shares(40, [0.0, 2.0, float("nan"), 2.0]) == [10] * 4
    assert proportional_shares(40, [0.0] * 4) == [10] * 4
    for total in range(0, 60):
        for weights in ([1, 2, 3, 4], [5, 1, 1, 1], [1, 1e-6, 1, 1]):
            shares = proportional_shares(total, weights)
            assert sum(shares) == total and min(shares) >= int(0.25 * total / 4)


def test_floor_keeps_a_very_slow_rank_fed():
    """A rank 100x slower gets the floor (a quarter of an equal share), the rest is
    shared by weight; min_share=0 lets it fall to its proportional share."""
    shares = proportional_shares(400, [0.01, 1, 1, 1])
    assert shares[0] == 25 and sum(shares) == 400 and shares[1:] == [125, 125, 125]
    assert proportional_shares(400, [0.01, 1, 1, 1], min_fraction=0.0)[0] == 1
    with pytest.raises(ValueError, match="min_share"):
        proportional_shares(400, [1, 1], min_fraction=1.5)


def test_share_bounds_are_contiguous():
    shares = [3, 5, 2]
    assert [share_bounds(shares, r) for r in range(3)] == [(0, 3), (3, 8), (8, 10)]


def test_dead_band_gives_same_speed_ranks_equal_shares():
    """Throughputs within the band of their median count as equal (one epoch's noise on
    equal ranks, measured +-6%); a 2x straggler still gets its proportional share, and
    the ranks around the median share the rest equally."""
    noisy = [1331, 1265, 1277, 1217, 1286, 1179, 1204, 1229]
    assert proportional_shares(8000, noisy, dead_band=0.1) == [1000] * 8
    assert len(set(proportional_shares(8000, noisy, dead_band=0.0))) > 1
    straggler = [640] + noisy[1:]
    shares = proportional_shares(7500, straggler, dead_band=0.1)
    ratio = 640 / ((1217 + 1229) / 2)  # to the median
    assert abs(shares[0] - 7500 * ratio / (7 + ratio)) <= 1
    assert len(set(shares[1:])) == 1 and sum(shares) == 7500
    with pytest.raises(ValueError, match="dead_band"):
        proportional_shares(100, [1, 1], dead_band=1.0)


class FakeTime:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_step_clock_counts_own_work_and_takes_out_waits():
    """A cycle is start to start: the compute between steps plus a wait-free step
    (WAGMA's) counts; a gradient-allreduce step's duration and a synchronize() between
    steps do not; nested steps count once."""
    now = FakeTime()
    clock = StepClock(now)
    for _ in range(3):  # 7 ms of compute, then a 3 ms WAGMA step
        now.t += 0.007
        clock.step_begin()
        clock.step_begin()  # the wrapped optimizer's own step
        now.t += 0.003
        clock.step_end()
        clock.step_end()
    assert clock.steps() == 2 and clock.seconds_per_step() == pytest.approx(0.010)
    assert not clock.synchronous
    clock.reset()
    assert clock.seconds_per_step() is None
    for _ in range(3):  # 7 ms compute, a 4 ms synchronize(), a 50 ms allreduce step
        now.t += 0.007
        clock.add_wait(0.004)
        now.t += 0.004
        clock.step_begin(waits_for_others=True)
        now.t += 0.050
        clock.step_end()
    assert clock.seconds_per_step() == pytest.approx(0.007) and clock.synchronous


def test_step_clock_median_ignores_an_evaluation_or_checkpoint_step():
    """An epoch of 10 ms steps with one 2 s stall (an evaluation, a checkpoint, the
    epoch-end allreduce): the estimate is still 10 ms, and the throughput the samplers
    share is the same as without the stall, so the next epoch's shares do not move."""
    def epoch_throughput(stall_at):
        now = FakeTime()
        clock = StepClock(now)
        exchange = ThroughputExchange("test", clock, lambda row: row)
        for step in range(41):
            now.t += 2.0 if step == stall_at else 0.010
            clock.step_begin()
            clock.step_end()
            exchange.count(16)
        return clock.seconds_per_step(), exchange.throughput()
    seconds, steady = epoch_throughput(stall_at=None)
    seconds_stalled, stalled = epoch_throughput(stall_at=20)
    assert seconds == pytest.approx(0.010) and seconds_stalled == pytest.approx(0.010)
    assert stalled == pytest.approx(steady) and steady == pytest.approx(1600.0)
    # Two throughputs from such epochs cut the same shares.
    assert proportional_shares(4000, [stalled, steady, steady, steady]) == [1000] * 4


def _gathered(sampler_or_sequence, throughputs):
    """Makes the sampler's epoch-end allgather return ``throughputs`` as every rank's
    row (the epoch taken from this rank's own row), as 4 real ranks would."""
    def allgather(row):
        rows = np.repeat(np.asarray(row, dtype=np.float64), len(throughputs), axis=0)
        rows[:, 1] = throughputs
        return rows
    sampler_or_sequence._exchange._allgather = allgather


VERY_SLOW = [1e-3, 1000.0, 1000.0, 1000.0]  # rank 0 a million times slower


def test_balanced_sampler_keeps_the_floor_for_a_rank_measured_very_slow():
    """BalancedDistributedSampler under an extreme speed ratio: the slow rank still gets
    min_share of an equal share (default 0.25: 250 of 1000), and its len() is that;
    min_share=0 lets its share fall to its proportional one (0)."""
    from horovod_wagma.torch import BalancedDistributedSampler
    sampler = BalancedDistributedSampler(range(4000), num_replicas=4, rank=0)
    _gathered(sampler, VERY_SLOW)
    sampler.set_epoch(1)
    assert sampler.shares[0] == 250 and sum(sampler.shares) == 4000, sampler.shares
    assert len(sampler) == 250 and len(list(iter(sampler))) == 250
    bare = BalancedDistributedSampler(range(4000), num_replicas=4, rank=0, min_share=0.0)
    _gathered(bare, VERY_SLOW)
    bare.set_epoch(1)
    assert bare.shares[0] == 0 and sum(bare.shares) == 4000, bare.shares


NEAR_MEDIAN = [1000.0, 1040.0, 980.0, 1020.0]  # within 3% of their median, 1010


def test_samplers_pass_their_dead_band_to_the_shares():
    """api.md: the samplers' dead_band (default 0.1) reaches the shares: 4 ranks within
    3% of their median get equal shares (1000 of 4000; batches of 100) by default, and
    unequal ones, still summing to the total, with dead_band=0."""
    from horovod_wagma.torch import BalancedBatchSampler, BalancedDistributedSampler
    for band, equal in ((None, True), (0.0, False)):
        kw = {} if band is None else {"dead_band": band}
        sampler = BalancedDistributedSampler(range(4000), num_replicas=4, rank=0, **kw)
        _gathered(sampler, NEAR_MEDIAN)
        sampler.set_epoch(1)
        assert sum(sampler.shares) == 4000, sampler.shares
        assert (sampler.shares == [1000] * 4) == equal, (band, sampler.shares)
        batches = BalancedBatchSampler(range(4000), batch_size=100, num_replicas=4, rank=0,
                                       **kw)
        _gathered(batches, NEAR_MEDIAN)
        batches.set_epoch(1)
        assert sum(batches.batch_sizes) == 400, batches.batch_sizes
        assert (batches.batch_sizes == [100] * 4) == equal, (band, batches.batch_sizes)


def test_lbbsp_gives_a_rank_measured_very_slow_at_least_one_sample_a_step():
    """BalancedBatchSampler (LB-BSP): equal steps need every rank to compute something
    each step, so its floor is at least one sample, even with min_share=0; the default
    min_share keeps a quarter of the mean batch (2 of 8)."""
    from horovod_wagma.torch import BalancedBatchSampler
    for min_share, floor in ((0.0, 1), (0.25, 2), (None, 2)):  # None: the default
        knobs = {} if min_share is None else dict(min_share=min_share)
        sampler = BalancedBatchSampler(range(4000), batch_size=8, num_replicas=4, rank=0,
                                       **knobs)
        _gathered(sampler, VERY_SLOW)
        sampler.set_epoch(1)
        assert sampler.batch_sizes[0] == floor and sum(sampler.batch_sizes) == 32, \
            (min_share, sampler.batch_sizes)
        assert all(len(b) == floor for b in iter(sampler))
        # 4000 samples are exactly 125 global batches of 32: no padding step.
        assert len(sampler) == 125 and len(list(iter(sampler))) == 125, len(sampler)
        assert sampler.loss_weight == pytest.approx(4 * floor / 32)


def _keras_sequence_child(body):
    """Runs ``body`` in a child process (TensorFlow, Keras 2) with BalancedSequence,
    _gathered, VERY_SLOW and ``x``, 4000 samples, in scope; returns its stdout lines."""
    code = textwrap.dedent(f"""
        import os, sys
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np
        from horovod_wagma.keras import BalancedSequence
        from test_balanced_sampler import _gathered, VERY_SLOW
        x = np.zeros((4000, 2), dtype="float32")
        """) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split("\n")


@pytest.mark.tf
def test_keras_balanced_sequence_passes_its_dead_band_to_the_shares():
    """BalancedSequence's dead_band reaches the shares (api.md): 4 ranks within 4% of
    their median get equal shares with the default band (0.1), and unequal ones with
    dead_band=0 (TensorFlow in a child process)."""
    lines = _keras_sequence_child("""
        for band in (0.1, 0.0):
            seq = BalancedSequence(x, None, 10, num_replicas=4, rank=0, dead_band=band)
            _gathered(seq, [1000.0, 1040.0, 980.0, 1020.0])
            seq.on_epoch_end()
            print("shares", band, *seq.shares)
        """)
    shares = {line.split()[1]: [int(v) for v in line.split()[2:]]
              for line in lines if line.startswith("shares")}
    assert shares["0.1"] == [1000] * 4, lines
    assert sum(shares["0.0"]) == 4000 and len(set(shares["0.0"])) > 1, lines


@pytest.mark.tf
def test_keras_balanced_sequence_keeps_the_floor_for_a_rank_measured_very_slow():
    """BalancedSequence, the Keras twin, under the same extreme ratio: 250 of 1000
    samples (min_share 0.25, the default), 0 with min_share=0 (TensorFlow in a child
    process)."""
    lines = _keras_sequence_child("""
        for share in (0.25, 0.0, None):
            knobs = {} if share is None else dict(min_share=share)
            seq = BalancedSequence(x, None, 10, num_replicas=4, rank=0, **knobs)
            _gathered(seq, VERY_SLOW)
            seq.on_epoch_end()
            print(share, seq.shares[0], sum(seq.shares), len(seq.indices))
        """)
    assert "0.25 250 4000 250" in lines and "0.0 0 4000 0" in lines, lines
    assert "None 250 4000 250" in lines, lines  # the default floor is 0.25


@pytest.mark.tf
def test_keras_balanced_sequence_permutation_is_numpys_seed_plus_epoch():
    """api.md: BalancedSequence's permutation is numpy's RandomState(seed + epoch),
    padded as torch pads (repeating its start), cut into contiguous shares: over 4
    ranks with equal shares, the ranks' indices in rank order are exactly that
    permutation, a new one every epoch (seed 5: epochs 0, 1, 2 use 5, 6, 7); unshuffled
    it is 0..n-1, padded alike (TensorFlow in a child process)."""
    lines = _keras_sequence_child("""
        for n, shuffle in ((10, True), (11, False)):
            xs = np.zeros((n, 2), dtype="float32")
            seqs = [BalancedSequence(xs, None, 3, shuffle=shuffle, seed=5, num_replicas=4,
                                     rank=r) for r in range(4)]
            for epoch in range(3):
                print("order", n, shuffle, epoch, *[int(i) for s in seqs for i in s.indices])
                for s in seqs:
                    _gathered(s, [1000.0] * 4)  # equal speeds: equal shares
                    s.on_epoch_end()
        """)
    dealt = {tuple(line.split()[1:4]): [int(v) for v in line.split()[4:]]
             for line in lines if line.startswith("order")}
    for n, shuffle in ((10, True), (11, False)):
        total = -(-n // 4) * 4  # torch's total_size: 12
        for epoch in range(3):
            order = (np.random.RandomState(5 + epoch).permutation(n).tolist() if shuffle
                     else list(range(n)))
            want = order + order[:total - n]
            assert dealt[(str(n), str(shuffle), str(epoch))] == want, (n, epoch, lines)
    assert dealt[("10", "True", "0")] != dealt[("10", "True", "1")], lines
