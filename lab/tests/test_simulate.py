"""lab/sim/ and lab/simulate.py: the discrete-event throughput model (single
process, no MPI).

Each test pins down a property the model must have if its timing rules are right:
ideal throughput without imbalance or costs, the slow pace of every method that
waits, the no-wait pace of wait-avoiding WAGMA, the ring allreduce's cost formula, the
staleness bound, CPU contention, determinism, and clear errors on bad calibration.
"""
import json
import math
import os
import sys

import pytest

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, LAB)

import sim  # noqa: E402  (lab/sim/: the model)
import simulate  # noqa: E402  (lab/simulate.py: its command line)

B = sim.BATCH
OP_METHODS = ("mpi", "mpi_hvd", "wagma", "wa", "hvd")


def calibration(app=0.0, cores=1e9, background=0.0, op_s=0.0):
    """A hand-made calibration: every round costs ``op_s`` in op_bench terms."""
    ops = sim.OpTable({8: {m: {2: [(4, op_s), (1 << 20, op_s)],
                               8: [(4, op_s), (1 << 20, op_s)]} for m in OP_METHODS}},
                      {8: "synthetic"})
    return sim.Calibration(cores=cores, background_cores=background,
                           app_cpu_s={m: app for m in sim.METHODS}, ops=ops,
                           sources={k: "test" for k in
                                    ("cores", "background_cores", "app_cpu_s", "ops")})


def free_network(P):
    """One rank per host, no latency, infinite bandwidth, no CPU costs."""
    return sim.Network("free", list(range(P)), [0.0] * P, [math.inf] * P,
                       cpu="dedicated", comm_cpu=False, app_cpu=False)


def rates(res):
    return {m: v["samples_per_s"] for m, v in res["methods"].items()}


def test_no_imbalance_and_free_network_every_method_reaches_the_ideal():
    P, step = 8, 0.010
    scn = sim.Scenario(pattern="persistent", slow_ranks="0", step_time=step, steps=60,
                       sync_period=5, group_size=2)
    res = sim.simulate(scn, free_network(P), calibration(), sim.METHODS)
    ideal = P * B / step
    for k in ("no_wait", "ideal", "lockstep"):
        assert res["ideals"][k] == pytest.approx(ideal, rel=1e-9)
    for m, r in rates(res).items():
        assert r == pytest.approx(ideal, rel=1e-6), m
    assert res["methods"]["wagma_wa"]["rounds_skipped_per_step"] == 0


def test_one_slow_rank_holds_back_every_waiting_method_but_not_wait_avoiding_wagma():
    P, step = 8, 0.010
    scn = sim.Scenario(pattern="persistent", slow_ranks="1", slow_factor=2.0,
                       step_time=step, steps=200, sync_period=10)
    res = sim.simulate(scn, free_network(P), calibration(), sim.METHODS)
    r = rates(res)
    slow_pace = P * B / (2 * step)
    for m in ("horovod", "localsgd", "wagma", "dpsgd"):
        assert r[m] == pytest.approx(slow_pace, rel=0.02), m
    no_wait = (P - 1) * B / step + B / (2 * step)
    assert res["ideals"]["no_wait"] == pytest.approx(no_wait)
    assert r["wagma_wa"] >= 0.95 * no_wait
    assert r["wagma_wa"] > 1.8 * r["horovod"]
    # The slow rank skips about one round per step of its own.
    assert res["methods"]["wagma_wa"]["stale_waits"] == 0


def test_group_rounds_do_not_wait_but_global_rounds_do_in_blocking_wagma():
    # Random delays: blocking WAGMA waits only at global rounds, so with free
    # communication it runs at the "ideal" (global rounds only) and Horovod at lockstep.
    P = 16
    scn = sim.Scenario(pattern="random", num_delayed=2, steps=200, sync_period=10, seed=3)
    res = sim.simulate(scn, free_network(P), calibration(), sim.METHODS)
    r = rates(res)
    assert r["horovod"] == pytest.approx(res["ideals"]["lockstep"], rel=1e-6)
    assert r["wagma"] == pytest.approx(res["ideals"]["ideal"], rel=1e-6)
    assert r["localsgd"] == pytest.approx(res["ideals"]["ideal"], rel=1e-6)
    assert res["ideals"]["ideal"] < r["wagma_wa"] <= res["ideals"]["no_wait"] * 1.001


@pytest.mark.parametrize("P,per_host", [(16, 1), (16, 4), (64, 8)])
def test_ring_allreduce_matches_the_closed_form(P, per_host):
    lat_us, gbit, n = 7.0, 10.0, 4 << 20
    # --bandwidth-gbit is per GPU: a host's link carries per_host times that; the ring
    # crosses each host link once per step, so the cross-host edge is the host rate.
    net = sim.datacenter(P, latency_us=lat_us, bandwidth_gbit=gbit / per_host,
                         ranks_per_host=per_host, overhead_us=0.0, intra_latency_us=0.0,
                         intra_bandwidth_gbit=1e9)
    bw = gbit * 1e9 / 8
    wire = 2 * (P - 1) / P * n / bw
    rel = 1e-9 if per_host > 1 else 1e-12   # every ring step is paced by a cross-host edge
    # A GPU cluster's ring (NCCL-style, the datacenter default): one latency per step.
    assert net.allreduce_impl == "ring"
    assert net.ring_allreduce_time(n) == pytest.approx(
        wire + 2 * (P - 1) * lat_us * 1e-6, rel=rel)
    # gloo: each step waits for the receiver's ready notification, then the data.
    assert net.ring_allreduce_time(n, handshake=True) == pytest.approx(
        wire + 4 * (P - 1) * lat_us * 1e-6, rel=rel)
    net.allreduce_impl = "ompi_gloo"
    assert net.ring_allreduce_time(n) == pytest.approx(
        wire + 4 * (P - 1) * lat_us * 1e-6, rel=rel)


def test_horovod_step_is_compute_plus_negotiation_plus_allreduce():
    P, step, app, n = 32, 0.010, 0.002, 8 << 20
    lat, bw = 20e-6, 25e9 / 8
    net = sim.datacenter(P, latency_us=20.0, bandwidth_gbit=25.0, ranks_per_host=1,
                         overhead_us=0.0)
    # A GPU cluster (datacenter): a ring, and a tree of log2 P latencies to negotiate.
    assert net.horovod_allreduce_time(n) == pytest.approx(
        0.5e-3 + 5 * lat + 2 * (P - 1) * lat + 2 * (P - 1) / P * n / bw, rel=1e-12)
    net.allreduce_impl = "ompi_gloo"   # what Horovod on Open MPI runs (multihost)
    scn = sim.Scenario(pattern="persistent", slow_ranks="0", step_time=step, steps=40,
                       nbytes=n)
    res = sim.simulate(scn, net, calibration(app=app), ("horovod",), cpu_jitter="none")
    # Open MPI: Rabenseifner for 8 MB at 32 ranks, 2 log2 P steps of halving sizes;
    # the coordination (one 8-byte word) by recursive doubling, log2 P steps.
    assert net.mpi_allreduce_time(n) == pytest.approx(
        2 * 5 * lat + 2 * (P - 1) / P * n / bw, rel=1e-12)
    assert net.negotiation_time() == pytest.approx(0.5e-3 + 5 * (lat + 8 / bw))
    per_step = step + app + net.horovod_allreduce_time(n)
    assert net.horovod_allreduce_time(n) == pytest.approx(
        net.negotiation_time() + net.mpi_allreduce_time(n))
    assert rates(res)["horovod"] == pytest.approx(P * B / per_step, rel=1e-9)


@pytest.mark.parametrize("P,nbytes,alg", [
    (6, 284712, "rabenseifner"), (8, 284712, "rabenseifner"),
    (16, 284712, "rabenseifner"), (1024, 284712, "rabenseifner"),
    (6, 8, "ring"), (6, 4096, "recursive_doubling"), (16, 8, "segmented_ring"),
    (100, 100000, "recursive_doubling"), (128, 100000, "nonoverlapping"), (200, 100000, "nonoverlapping"),
    (1024, 8, "nonoverlapping"), (3, 100000, "segmented_ring")])
def test_ompi_allreduce_choice_is_open_mpi_4_1_4s(P, nbytes, alg):
    from sim.network import ompi_allreduce_algorithm
    assert ompi_allreduce_algorithm(P, nbytes) == alg


def test_rabenseifner_steps_on_six_ranks_and_rendezvous():
    # P = 6 = 4 + 2: fold (0,1), (2,3); halving pairs vranks (0,1)->(0,2), (2,3)->(4,5),
    # then (0,2)->(0,4), (1,3)->(2,5); the allgather in reverse; unfold.
    net = sim.Network("t", [0, 0, 1, 1, 2, 2], [1e-3, 1e-3, 4e-3], [1e9, 1e9, 1e8],
                      eager_B=64 * 1024)
    n = 400000
    alg, steps = net.mpi_allreduce_steps(n)
    assert alg == "rabenseifner"
    pairs = [sorted({tuple(sorted(m[:2])) for m in msgs}) for msgs, _ in steps]
    assert pairs == [[(0, 1), (2, 3)], [(0, 1), (2, 3)], [(0, 2), (4, 5)],
                     [(0, 4), (2, 5)], [(0, 4), (2, 5)], [(0, 2), (4, 5)],
                     [(0, 1), (2, 3)]]
    assert [msgs[0][2] for msgs, _ in steps] == [n / 2, n / 2, n / 2, n / 4, n / 4,
                                                 n / 2, n]
    # Cross-host steps only (intra-host steps are CPU work on multihost). Every
    # cross-host message is above 64 KiB: 3 latencies; host 2's link carries two
    # n/4 messages each way at 1e8 B/s.
    slow = 3 * 5e-3 + 2 * (n / 4) / 1e8
    fast = 3 * 2e-3 + (n / 2) / 1e9
    assert net.mpi_allreduce_time(n) == pytest.approx(2 * slow + 2 * fast, rel=1e-12)
    net.eager_B = None
    assert net.mpi_allreduce_time(n) == pytest.approx(
        2 * (5e-3 + 2 * (n / 4) / 1e8) + 2 * (2e-3 + (n / 2) / 1e9), rel=1e-12)


def test_token_bucket_passes_the_burst_then_the_rate_and_refills():
    from sim.network import Buckets
    B, rate = 131072.0, 12.5e6
    net = sim.Network("t", [0, 1], [4e-3, 1e-3], [rate, 1e9], burst_B=[B, B])
    b = Buckets(net)
    assert b.push((0, "up"), 100000) == 0.0             # within the burst
    assert b.push((0, "up"), 100000) == pytest.approx((100000 - (B - 100000)) / rate)
    assert b.level[(0, "up")] == 0.0
    b.idle((0, "up"), 4e-3)                              # refills at the rate
    assert b.level[(0, "up")] == pytest.approx(4e-3 * rate)
    b.idle((0, "up"), 1.0)                               # capped at the burst
    assert b.level[(0, "up")] == B
    # A WAGMA pair (direct exchange) of 200 KB: 5 ms latency, the first 128 KiB free,
    # the rest at 12.5 MB/s; without the bucket all of it at the rate.
    assert net.round_time([0, 1], 200000) == pytest.approx(5e-3 + (200000 - B) / rate)
    # Scatter-allgather over 3 ranks, host 0 holding one: 2 chunks of n/3 each way per
    # exchange; the second exchange finds the bucket refilled for one latency only.
    net3 = sim.Network("t", [0, 1, 2], [4e-3, 1e-3, 1e-3], [rate, 1e9, 1e9],
                       burst_B=[B, B, B])
    n = 600000
    load = 2 * n / 3
    w1 = (load - B) / rate
    w2 = (load - min(B, 5e-3 * rate)) / rate
    assert net3.round_time([0, 1, 2], n) == pytest.approx(5e-3 + w1 + 5e-3 + w2)
    net3.burst_B = None
    assert net3.round_time([0, 1, 2], n) == pytest.approx(2 * (5e-3 + load / rate))


def test_tbf_burst_is_read_from_the_cluster_configuration():
    from sim.network import tbf_burst_bytes
    burst = tbf_burst_bytes()   # puts the repository root on sys.path
    from multihost.cluster import LINK_BURST_BYTES
    assert burst == LINK_BURST_BYTES == 128 * 1024


def test_wagma_round_cost_follows_the_engine_algorithms():
    net = sim.datacenter(8, latency_us=10.0, bandwidth_gbit=8.0, ranks_per_host=1,
                         overhead_us=0.0)
    bw, lat = 1e9, 10e-6
    pair = [0, 1]
    # Pairs up to 8 MB: one direct exchange.
    assert net.round_time(pair, 1 << 20) == pytest.approx(lat + (1 << 20) / bw)
    # Four members, 1 MB: scatter-allgather, two exchanges of n/4 chunks to 3 peers.
    four = [0, 1, 2, 3]
    assert net.round_time(four, 1 << 20) == pytest.approx(2 * (lat + 3 * (1 << 18) / bw))
    # Small messages: one exchange of the whole tensor; plus the activation message.
    assert net.round_time(four, 4096, activator=0) == pytest.approx(
        lat + lat + 3 * 4096 / bw)
    # Groups of one phase share host links: with two ranks per host, in different
    # groups, each host link carries both ranks' traffic.
    net2 = sim.datacenter(4, latency_us=10.0, bandwidth_gbit=4.0, ranks_per_host=2,
                          overhead_us=0.0)
    phase = [[0, 2], [1, 3]]
    alone = net2.round_time([0, 2], 1 << 20)
    shared = net2.round_time([0, 2], 1 << 20, concurrent=phase)
    assert alone == pytest.approx(lat + (1 << 20) / bw)
    assert shared == pytest.approx(lat + 2 * (1 << 20) / bw)


def test_staleness_bound_makes_fast_ranks_wait_for_a_very_slow_rank():
    P = 4
    net, cal = free_network(P), calibration()
    slow = sim.Scenario(pattern="persistent", slow_ranks="1", slow_factor=30.0, steps=100,
                        sync_period=10, group_size=2)
    bounded = sim.simulate(slow, net, cal, ("wagma", "wagma_wa"))
    unbounded = sim.simulate(dataclass_replace(slow, max_staleness=4096), net, cal,
                             ("wagma", "wagma_wa"))
    assert bounded["methods"]["wagma_wa"]["stale_waits"] > 0
    assert unbounded["methods"]["wagma_wa"]["stale_waits"] == 0
    assert rates(unbounded)["wagma_wa"] > 1.2 * rates(bounded)["wagma_wa"]
    # A 3x slower rank stays within the bound (it skips ~2 rounds per step of its own).
    mild = sim.simulate(dataclass_replace(slow, slow_factor=3.0), net, cal, ("wagma_wa",))
    assert mild["methods"]["wagma_wa"]["stale_waits"] == 0
    assert mild["methods"]["wagma_wa"]["rounds_skipped_per_step"] > 0


def dataclass_replace(obj, **kw):
    import dataclasses
    return dataclasses.replace(obj, **kw)


@pytest.mark.parametrize("cpu_model", ["fair", "rr", "ps"])
@pytest.mark.parametrize("jitter", ["exp", "none"])
def test_host_cpu_contention_caps_throughput_at_cores_over_cpu_per_step(cpu_model, jitter):
    # 8 ranks, no sleep to speak of, 1 ms CPU per step, 2 cores (0.5 taken by the
    # background): throughput -> C_eff / w_app * B whatever the scheduling rule.
    P, app = 8, 1e-3
    cal = calibration(app=app, cores=2, background=0.5)
    net = sim.this_machine(P)
    scn = sim.Scenario(pattern="persistent", slow_ranks="0", step_time=1e-6, steps=300,
                       sync_period=300)
    res = sim.simulate(scn, net, cal, ("localsgd",), cpu_model, jitter)
    tol = 0.03 if jitter == "none" else 0.08   # 2400 exponential jobs: +-2% noise
    assert rates(res)["localsgd"] == pytest.approx(1.5 / app * B, rel=tol)


def test_a_sleeping_straggler_is_served_first_under_fair_sharing():
    # 7 ranks keep the cores busy (no sleep); rank 0 sleeps 20 ms per step. Fair
    # sharing serves it as soon as a core frees; round robin queues it behind the rest.
    P, app = 8, 1e-3
    cal = calibration(app=app, cores=2, background=0.0)
    scn = sim.Scenario(pattern="persistent", slow_ranks="1", slow_factor=2e4,
                       step_time=1e-6, steps=40, sync_period=40)
    fair = sim.simulate(scn, sim.this_machine(P), cal, ("wagma_wa",), "fair", "none")
    rr = sim.simulate(scn, sim.this_machine(P), cal, ("wagma_wa",), "rr", "none")
    # The wall-time window is the blocking run's: compare step rates.
    def slow_rate(res):
        v = res["methods"]["wagma_wa"]
        return v["steps_per_rank"][0] / v["wall_s"]
    assert slow_rate(fair) > 1.05 * slow_rate(rr)


def test_round_cpu_work_is_op_bench_time_without_its_contention():
    cal = calibration(cores=2, background=0.5, op_s=4e-3)
    # op_bench ran 8 ranks on C_eff = 1.5 cores: each member's work is 4 ms * 1.5 / 8.
    assert cal.round_work("group", 2, 1000, 8) == pytest.approx(4e-3 * 1.5 / 8)
    assert cal.ops.time("wa", 4, 1000, 8) == pytest.approx(4e-3)   # between g = 2 and 8


def test_same_seed_same_result_other_seed_other_schedule():
    P = 16
    net = sim.this_machine(P)
    cal = calibration(app=1e-3, cores=2, background=0.5, op_s=2e-3)
    scn = sim.Scenario(pattern="random", steps=60, seed=7)
    a = sim.simulate(scn, net, cal, sim.METHODS)
    b = sim.simulate(scn, net, cal, sim.METHODS)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = sim.simulate(dataclass_replace(scn, seed=8), net, cal, sim.METHODS)
    assert c["ideals"] != a["ideals"]


# -- calibration files ----------------------------------------------------------------
def op_bench_json(P=8):
    rows = []
    for g in (2, 4, P):
        for nbytes, t in ((4096, 5e-4), (262144, 2e-3), (1 << 20, 6e-3)):
            rows.append({"group_size": g, "g": g, "bytes": nbytes,
                         "methods": {"mpi": {"time_s": t / 3}, "mpi_hvd": {"time_s": t / 2},
                                     "wagma": {"time_s": t}, "wa": {"time_s": t},
                                     "hvd": {"time_s": 1.2 * t}}})
    return {"ranks": P, "results": rows}


def imbalance_json(P=8, pattern="persistent"):
    def run(sps, main):
        return {"samples_per_s": sps, "thread_cpu_ms_per_rank_step": {"main": main}}
    return {"ranks": P, "pattern": pattern, "step_time_s": 0.01, "delay_s": 0.04,
            "num_delayed": 2, "seed": 0, "slow_ranks": 1, "slow_factor": 2.0,
            "group_size": 4, "sync_period": 10, "steps": 40,
            "runs": {"horovod": [run(5000, 3.0)], "localsgd": [run(5500, 1.0)],
                     "wagma": [run(5400, 1.4), run(5600, 1.5)],
                     "wagma_wa": [run(7000, 1.5)]}}


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def test_calibration_refuses_a_missing_directory_or_file(tmp_path):
    with pytest.raises(sim.CalibrationError, match="op_bench"):
        sim.read_calibration(str(tmp_path))
    write(tmp_path / "op_bench_P8.json", op_bench_json())
    with pytest.raises(sim.CalibrationError, match="imbalance"):
        sim.read_calibration(str(tmp_path))


@pytest.mark.parametrize("bad", [{"ranks": 8}, {"ranks": 8, "results": [{"g": 2}]},
                                 "not json at all"])
def test_calibration_refuses_a_malformed_op_bench_file(tmp_path, bad):
    path = tmp_path / "op_bench_P8.json"
    if isinstance(bad, str):
        path.write_text(bad)
    else:
        write(path, bad)
    with pytest.raises(sim.CalibrationError, match="op_bench_P8.json"):
        sim.read_calibration(str(tmp_path))


def test_calibration_refuses_a_run_without_thread_cpu(tmp_path):
    write(tmp_path / "op_bench_P8.json", op_bench_json())
    d = imbalance_json()
    del d["runs"]["wagma"][0]["thread_cpu_ms_per_rank_step"]
    write(tmp_path / "imbalance_persistent_P8.json", d)
    with pytest.raises(sim.CalibrationError, match="thread_cpu_ms_per_rank_step"):
        sim.read_calibration(str(tmp_path))


def test_calibration_reads_its_constants_and_names_their_sources(tmp_path):
    write(tmp_path / "op_bench_P8.json", op_bench_json())
    write(tmp_path / "imbalance_persistent_P8.json", imbalance_json())
    cal = sim.read_calibration(str(tmp_path), cores=2)
    assert cal.background_for(8) == pytest.approx(2 * (1 - (6e-3 / 3) / (6e-3 / 2)))
    assert cal.background_for(1024) == cal.background_for(8)   # the nearest file
    assert cal.app_cpu_s["localsgd"] == pytest.approx(1e-3)
    assert cal.app_cpu_s["horovod"] == pytest.approx(1e-3)    # polls: local SGD's
    assert cal.app_cpu_s["wagma"] == pytest.approx(1.45e-3)   # median of two trials
    text = "\n".join(cal.describe())
    assert "op_bench_P8.json" in text and "thread_cpu_ms_per_rank_step.main" in text


def test_validation_marks_multihost_rows_not_measured_until_the_file_exists(tmp_path):
    write(tmp_path / "op_bench_P8.json", op_bench_json())
    write(tmp_path / "imbalance_persistent_P8.json", imbalance_json())
    cal = sim.read_calibration(str(tmp_path), cores=2)
    lines = []
    rows = sim.validate(cal, str(tmp_path), out=lines.append)
    assert [r["status"] for r in rows if "status" in r] == ["not measured yet"] * 2
    measured = [r for r in rows if "error" in r]
    assert {r["method"] for r in measured} == set(sim.MEASURED)
    wagma = next(r for r in measured if r["method"] == "wagma")
    assert (wagma["measured_min"], wagma["measured_max"]) == (5400, 5600)
    assert any("not measured yet" in line for line in lines)

    # The multihost file (lab/multihost_throughput.py's schema): P=6, 2 per host.
    res = imbalance_json(P=6)
    res["slow_ranks"] = 2
    hosts = [{"slots": 2, "latency_ms": 1.0, "rate_mbit": 1000.0}] * 2 + \
        [{"slots": 2, "latency_ms": 4.0, "rate_mbit": 100.0}]
    write(tmp_path / "multihost_throughput.json", {"scenarios": {"slow_link": {
        "hosts": hosts, "rtt_ms": {"h1->h2": 4.2, "h1->h3": 10.2}, "result": res}}})
    rows = sim.validate(cal, str(tmp_path), out=lines.append)
    mh = [r for r in rows if r["case"] == "multihost slow_link"]
    assert len(mh) == 4 and all(r["predicted"] > 0 for r in mh)
    net = sim.multihost_from_scenario({"hosts": hosts, "rtt_ms": {"h1->h2": 4.2}})
    assert net.host_of == [0, 0, 1, 1, 2, 2]
    assert net.software_s == pytest.approx(0.1e-3)
    # A message h1 -> h3 crosses a 1 ms and a 4 ms link, at the slower link's rate,
    # beyond the links' token bucket (multihost/cluster.py's tc tbf burst, 128 KiB).
    assert net.burst_B == [128 * 1024] * 3 and net.eager_B == 64 * 1024
    assert net.exchange_time([0, 4], 12500) == pytest.approx(5e-3 + 0.1e-3)
    over = 128 * 1024 + 12500
    assert net.exchange_time([0, 4], over) == pytest.approx(5e-3 + 0.1e-3 + 1e-3)
    net.burst_B = None
    assert net.exchange_time([0, 4], 12500) == pytest.approx(5e-3 + 0.1e-3 + 1e-3)


def test_horovod_measured_across_hosts_replaces_the_model_at_that_P(tmp_path):
    """op_bench_multihost_<scenario>.json (Horovod's allreduce alone across the hosts)
    sets the collective's cost at the scenario's P; the network part is that less the
    one-host op_bench time (charged again as CPU work). Other P keep the model."""
    hosts = [{"slots": 2, "latency_ms": 1.0, "rate_mbit": 1000.0}] * 3
    scn = {"hosts": hosts, "rtt_ms": {"h1->h2": 4.2}}
    path = tmp_path / "op_bench_multihost_slow_host.json"
    assert sim.read_horovod_across_hosts(str(path), 6) is None   # not measured: model
    bench = op_bench_json(P=6)
    for r in bench["results"]:
        r["methods"]["hvd"]["time_s"] = 0.050 if r["bytes"] == 262144 else 0.010
    write(path, bench)
    pts = sim.read_horovod_across_hosts(str(path), 6)
    assert pts == [(4096, 0.010), (262144, 0.050), (1 << 20, 0.010)]
    net = sim.multihost_from_scenario(scn)
    assert net.measured_horovod_time(262144) is None
    modelled = net.horovod_allreduce_time(262144)
    net.horovod_measured = pts
    assert net.measured_horovod_time(262144) == 0.050 != modelled
    assert net.measured_horovod_time(133120) == pytest.approx(0.030)
    assert net.horovod_allreduce_time(262144) == modelled   # the model is kept
    # One step: compute + app CPU + (measured - one-host time) + the round's CPU work.
    step, app, op_s = 0.010, 0.002, 0.004
    net.cpu, net.app_cpu = "dedicated", False
    sc = sim.Scenario(pattern="persistent", slow_ranks="0", step_time=step, steps=20,
                      nbytes=262144)
    res = sim.simulate(sc, net, calibration(op_s=op_s), ("horovod",), cpu_jitter="none")
    work = op_s * min(1.0, 1e9 / 8)   # de-contended op_bench time (calibration())
    assert rates(res)["horovod"] == pytest.approx(
        6 * B / (step + (0.050 - op_s) + work), rel=1e-9)
    with pytest.raises(sim.CalibrationError, match="ranks"):
        sim.read_horovod_across_hosts(str(path), 8)
    del next(r for r in bench["results"] if r["g"] == 6)["methods"]["hvd"]
    write(path, bench)
    with pytest.raises(sim.CalibrationError, match="hvd"):
        sim.read_horovod_across_hosts(str(path), 6)


def test_cli_predicts_every_method_and_the_ratios(tmp_path, capsys):
    write(tmp_path / "op_bench_P8.json", op_bench_json())
    write(tmp_path / "imbalance_persistent_P8.json", imbalance_json())
    simulate.main(["--ranks", "64", "--steps", "20", "--calibration-dir", str(tmp_path)])
    out = capsys.readouterr().out
    for m in sim.METHODS:
        assert sim.LABELS[m] in out
    assert "WAGMA/Horovod" in out and "WAGMA wa-global/Horovod" in out


def test_cli_exits_with_the_calibration_error(tmp_path):
    with pytest.raises(SystemExit, match="op_bench"):
        simulate.main(["--ranks", "16", "--calibration-dir", str(tmp_path)])
