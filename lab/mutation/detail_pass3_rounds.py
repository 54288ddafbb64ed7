"""Third detail pass, the rounds' and schedule's tests (tests/test_global_rounds.py,
test_no_deadlock.py, test_gossip.py, test_schedule.py, test_straggler.py, test_fuzz.py,
test_cuda.py, test_cuda_staging.py), 2026-12-03: each mutant breaks one value that a
doc states (a knob's effect, a default, an accepted type, a unit, a pinned buffer)
which the rows' tests ran but did not assert: the engine's config was read for
wait-avoiding global streams only, groups() always got its group_size, max_staleness
was probed at its numeric bounds only, HOROVOD_WAGMA_CALLER_PROGRESS_US was set only
to values that outlast the wait in either unit, and the CUDA staging tests never
looked at how the buffers were allocated or at the pool's default bound. `tests` names the strengthened test;
with the tests as they were, every mutant here is expected to SURVIVE. Run with
`check.py --catalogue detail_pass3_rounds`."""

FUZZ_BOUNDS = "tests/test_fuzz.py::test_sync_period_and_max_staleness_bounds_are_inclusive"
DEFAULT_S = "tests/test_schedule.py::test_default_group_size_is_smallest_power_of_two_above_sqrt"
PINNED = "tests/test_cuda_staging.py::test_both_buffers_of_a_pair_are_pinned"
POOL = "tests/test_cuda_staging.py::test_failed_calls_return_their_pair_and_the_pool_is_bounded"
CALLER = "tests/test_gossip.py::test_caller_progress_drives_the_engine_from_the_waiting_thread"
CONFIG = "horovod_wagma/common/op/config.py"
STAGING = "horovod_wagma/torch/cuda_staging.py"

MUTANTS = [
    dict(id="detail3-rounds-blocking-stream-gets-max-staleness", file=CONFIG,
         edits=[("                self.resolved_max_staleness if wa_global else 0]",
                 "                self.resolved_max_staleness]")],
         tests=[FUZZ_BOUNDS],
         bug="api.md:40-41 (A14): max_staleness is 'used with wait-avoiding global rounds "
             "only'; the engine now gets it (None: sync_period) for blocking streams too, "
             "so ranks that set it differently on a blocking stream fail round 0 over a "
             "knob that does nothing there (the tests checked engine_fields of a "
             "wait-avoiding config only, test_api_surface's [2, 10, 0, 1, 1, 10]; the "
             "bounds test now asserts [2, 7, 0, 1, 0, 0] for blocking configs with "
             "max_staleness None, 0, 3 and 4096, and the bound for wait-avoiding ones)"),
    dict(id="detail3-rounds-max-staleness-accepts-bools", file=CONFIG,
         edits=[("    if max_staleness is not None and (not _is_int(max_staleness)",
                 "    if max_staleness is not None and (not isinstance(max_staleness, int)")],
         tests=[FUZZ_BOUNDS],
         bug="api.md:40-41 (A14), faults.md:72-76 (F25): max_staleness is '0 to 4096, or "
             "None', refused otherwise with a ValueError naming it, like the other "
             "integer knobs (the fuzz oracle refuses bools for group_size and "
             "sync_period); True and False are now accepted as 1 and 0 (the tests tried "
             "-1, 4097 and 1.5 only, and the fuzz worker never draws max_staleness; the "
             "bounds test now refuses True, False, 2.0 and '3')"),
    dict(id="detail3-rounds-groups-default-is-optimizers",
         file="horovod_wagma/common/op/schedule.py",
         edits=[("        group_size = default_group_size(size)",
                 "        group_size = optimizer_group_size(size)")],
         tests=[DEFAULT_S],
         bug="api.md:110-111 (A33, A34), semantics.md:113-120 (S34): groups(size, "
             "group_size=None) prints the schedule of the op's default S, the smallest "
             "power of two >= sqrt(P); without a group_size it now uses the optimizers' "
             "min(P, max(8, ...)), so groups(4) is one group of 4 instead of two phases of "
             "pairs (every test passed S explicitly; the test now asserts groups(P) == "
             "groups(P, default_group_size(P)) for P in 1..64 and groups(4)'s pairs)"),
    dict(id="detail3-rounds-caller-progress-read-as-ms", file="cpp_ops/engine/core/engine.cc",
         edits=[("  const Clock::time_point spin_until = t0 + std::chrono::microseconds(spin_us);",
                 "  const Clock::time_point spin_until = t0 + std::chrono::milliseconds(spin_us);")],
         tests=[CALLER],
         bug="api.md:379 (A107): HOROVOD_WAGMA_CALLER_PROGRESS_US is the µs a waiting "
             "application thread drives the engine before it sleeps; read as ms, 20000 "
             "(20 ms) drives the whole wait and the engine thread stays parked (the test "
             "set 2 s, longer than its 1.5 s wait either way, and the gossip 'caller' case "
             "300, whose rounds end within 300 ms too; a third launch at 20000 now asserts "
             ">= 50 engine-thread sleeps over the 1.5 s wait: it polls in the 80 ms of "
             "each 100 ms wait slice the caller leaves, against 2 when the caller drives "
             "throughout). No C++ unit test runs Engine::WaitFor"),
    dict(id="detail3-rounds-cuda-result-buffer-pageable", file=STAGING,
         edits=[("        self.host_out = torch.empty(shape, dtype=dtype, pin_memory=pin_memory)",
                 "        self.host_out = torch.empty(shape, dtype=dtype)")],
         tests=[PINNED],
         bug="README:28 (R7): CUDA tensors are staged through pinned host memory; the "
             "result buffer of each pair is now pageable, so the host-to-device copy is "
             "neither pinned nor asynchronous (on a GPU, test_cuda.py::"
             "test_optimizer_cuda_one_pinned_copy_each_way_per_buffer would see 'Memcpy "
             "HtoD (Pageable -> Device)'; it skips without one, and test_cuda_staging's "
             "stand-in never looked at the allocation; the new test records the "
             "pin_memory each of a pair's buffers asks torch.empty for: 4 x True for two "
             "pairs, and TorchCuda.pin_memory is True)"),
    dict(id="detail3-rounds-cuda-keeps-four-idle-pairs", file=STAGING,
         edits=[("    def __init__(self, keep_per_stream=2, cuda=TorchCuda):",
                 "    def __init__(self, keep_per_stream=4, cuda=TorchCuda):")],
         tests=[POOL],
         bug="gpu.md:88-90 (R7's staging): 'at most two idle pairs are kept per stream'; "
             "the default pool now keeps four pinned pairs per stream (the pool test "
             "passed keep_per_stream=2 itself; it now also returns four pairs to a "
             "default CudaStaging and asserts two are kept)"),
]
