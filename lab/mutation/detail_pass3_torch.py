"""Third detail pass over docs/claims.md, the PyTorch optimizer's rows (R13-R18, R42, R45,
A37-A63, S40-S55, F2-F7, F21a: tests in test_optimizer.py, test_optimizer_core.py,
test_quasi_global.py, test_fusion.py, test_uneven.py, test_stale_join.py,
test_staleness.py, test_torch_handle.py), 2026-12-04: each mutant breaks one value that
api.md or semantics.md states (a default of the signature block, wagma_status()'s
served_round, the streams that groups/num_groups make, the state sync() averages, the
count of global-round duties, the default S of a process set) which those tests ran but
did not assert. `tests` names the test strengthened to catch it; against the tests as
they were, every mutant here is expected to SURVIVE. Run with
`check.py --catalogue detail_pass3_torch`."""

OPT = "tests/test_optimizer.py"
CORE = "tests/test_optimizer_core.py"
TORCH_OPT = "horovod_wagma/torch/optimizer.py"

MUTANTS = [
    dict(id="detail3-torch-blocking-served-round-is-steps", file=TORCH_OPT,
         edits=[("        served = core.served_round(step, pending[0][-1].round)",
                 "        served = core.served_round(self._round, pending[0][-1].round)")],
         tests=[OPT + "::test_backward_passes_per_step"],
         bug="api.md:206-207 (A62): wagma_status().served_round is steps - 1 with blocking "
             "global rounds; it is now steps (self._round was already advanced). Blocking "
             "duties key to the step, not to it, and wait-avoiding ones take the reported "
             "round, so only the status changes. Only test_api_surface (wait-avoiding "
             "defaults) and the core unit test (served_round(4, 7) == 4) read it; the "
             "passes scenario (blocking, 8 steps) now asserts served_round == 7"),
    dict(id="detail3-torch-signature-passes-default-2", file=TORCH_OPT,
         edits=[("                              backward_passes_per_step=1,",
                 "                              backward_passes_per_step=2,")],
         tests=[CORE + "::test_optimizer_signatures_follow_horovods"],
         bug="api.md:133-145 (A40, R14): the signature block gives Horovod 0.28.1's "
             "arguments with Horovod's defaults; backward_passes_per_step now defaults to "
             "2 (it is only stored, so nothing behaves differently). The signature test "
             "compared the names' order and WAGMA's defaults only; it now compares every "
             "Horovod argument's default and kind with horovod.torch.DistributedOptimizer's"),
    dict(id="detail3-torch-sparse-as-dense-sends-fp16", file=TORCH_OPT,
         edits=[("               compression is _hvd.Compression.fp16, backward_passes_per_step,",
                 "               compression is _hvd.Compression.fp16 or sparse_as_dense, "
                 "backward_passes_per_step,")],
         tests=[OPT + "::test_fp16_compression_halves_traffic"],
         bug="api.md:159-160 (A48): sparse_as_dense is a no-op; with True the model now goes "
             "on the wire in fp16 (the Keras twin is keras-sparse-as-dense-sends-fp16). "
             "Only a positional False was ever passed (bad_args); the fp16 scenario now "
             "runs sparse_as_dense=True and asserts the bytes sent equal those of "
             "compression none (fp16 sends half)"),
    dict(id="detail3-torch-sync-leaves-quasi-global-momentum-out", file=TORCH_OPT,
         edits=[('self._bucketed(self._state_averaging != "never")',
                 'self._bucketed(self._state_averaging in ("on_sync", "always"))')],
         tests=[OPT + "::test_optimizer_state_averaging_modes_and_sync"],
         bug="api.md:197-198 (A58, A57; sem:145-146 S49): sync() averages the optimizer "
             "state unless 'never'; 'quasi_global' keeps state (the rebuilt momentum) and "
             "sync() now leaves it out, each rank keeping its own. The state test ran "
             "always/on_sync/never only, and no test calls sync() with quasi_global; "
             "state_values now adds quasi_global and asserts its momentum after sync() is "
             "the exact mean of the ranks' (which differed by > 1e-4), identical everywhere"),
    dict(id="detail3-torch-num-groups-ignored", file=TORCH_OPT,
         edits=[("FusionPlan(groups, num_groups)", "FusionPlan(groups)")],
         tests=[OPT + "::test_groups_and_num_groups_only_split_the_fusion_buffers"],
         bug="api.md:155-156 (A46): num_groups=K splits the fusion buffers into K "
             "contiguous buckets; the PyTorch optimizer now drops it (one buffer, one "
             "stream). FusionPlan's unit test (test_fusion_plan_buckets) passes, and no "
             "test built a torch optimizer with groups or num_groups; the new fusion_groups "
             "scenario asserts num_groups=2 makes streams model0, model1 (and groups=[[b, "
             "a]] model0..model4 over Net's 6 parameters) with the one-bucket models"),
    dict(id="detail3-torch-duties-at-served-global-only", file=TORCH_OPT,
         edits=[("        duties_due = core.duties_due(step, self._served, served)",
                 "        duties_due = core.duties_due(step, served - 1, served)")],
         tests=[OPT + "::test_wait_avoiding_global_rounds_straggler_and_join"],
         bug="semantics.md:142-144 (S45): the duties of global rounds run when any served "
             "or skipped round since the last step was global; the PyTorch optimizer now "
             "asks only whether the serving round was (the core's duties_due, unit-tested "
             "by itself, is bypassed: the torch twin of duties-at-served-round-only). The "
             "straggler test asserted sync_rounds > 0 on the slow rank, which step 0 "
             "alone meets; it now asserts on every rank that the sync stream's rounds "
             "equal the steps whose (previous served, served] interval holds a global "
             "round (tau 4), from the served rounds the worker emits. Caught unless every "
             "one of the slow rank's jumps happens to land on a global round (each of its "
             "~4-round jumps that holds one misses it with odds about 3/4)"),
    dict(id="detail3-torch-default-group-size-counts-the-world",
         file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[("        self._ranks = lambda: basics.num_ranks(process_set)",
                 "        self._ranks = lambda: basics.num_ranks()")],
         tests=[OPT + "::test_process_set_subset"],
         bug="api.md:157, 166-170 (A47, A50, R15): with a process_set the optimizers' "
             "default S, min(P, max(8, ...)), counts the set's ranks; it now counts the "
             "world's (S=4 for the 3-rank set at P=4; at P=100 a 10-rank set would get one "
             "group of 10 instead of groups of 8). The core unit test's fake num_ranks "
             "ignores the set, and the process-set test passed group_size=2; it now "
             "asserts wagma_status().group_size == 3 on each member of [0, 1, 2]"),
]
