"""Detail pass over docs/claims.md rows A56-A110 (the second half of docs/api.md's
section), 2026-12-02: each mutant plants a bug in one detail the doc states that the
rows' tests ran but did not assert, with the test written or strengthened to catch it.
Run with `check.py --catalogue detail_api2`."""

S = "tests/test_api_surface.py"
SAMPLER_BAND = "tests/test_balanced_sampler.py::test_samplers_pass_their_dead_band_to_the_shares"
ENGINE_DEFAULTS = "cpp_ops/engine/tests/engine_settings_test.cc::TestDefaults"

MUTANTS = [
    dict(id="da2-torch-stream-prefix-renamed", file="horovod_wagma/torch/optimizer.py",
         edits=[('''FusionPlan(groups, num_groups),
                         "wagma.optimizer")''',
                 '''FusionPlan(groups, num_groups),
                         "wagma.torch_optimizer")''')],
         tests=[S + "::test_set_backward_passes_per_step"],
         bug="PyTorch optimizers' streams are wagma.torch_optimizerN.model{i}, not the "
             "documented wagma.optimizerN.model{i}"),
    dict(id="da2-stall-warning-default-6s", file="cpp_ops/engine/health/stall_inspector.h",
         edits=[("double warning_s = 60.0;   // WAGMA_STALL_WARNING_S",
                 "double warning_s = 6.0;   // WAGMA_STALL_WARNING_S")],
         tests=[],
         bug="WAGMA_STALL_WARNING_S defaults to 6 s, not the documented 60"),
    dict(id="da2-stall-timeout-default-on", file="cpp_ops/engine/health/stall_inspector.h",
         edits=[("double timeout_s = 0.0;    // WAGMA_STALL_TIMEOUT_S; 0 = never raise",
                 "double timeout_s = 600.0;    // WAGMA_STALL_TIMEOUT_S; 0 = never raise")],
         tests=[],
         bug="WAGMA_STALL_TIMEOUT_S is on (600 s) by default, not off"),
    dict(id="da2-sampler-dead-band-ignored", file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("""        shares = proportional_shares(self.total_size, throughputs, self.min_share,
                                     self.dead_band)""",
                 """        shares = proportional_shares(self.total_size, throughputs, self.min_share,
                                     0.1)""")],
         tests=[SAMPLER_BAND],
         bug="BalancedDistributedSampler's dead_band never reaches the shares (always 0.1)"),
    dict(id="da2-batch-sampler-dead-band-ignored",
         file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("min(1.0, floor), self.dead_band)", "min(1.0, floor), 0.1)")],
         tests=[SAMPLER_BAND],
         bug="BalancedBatchSampler's dead_band never reaches the batch sizes (always 0.1)"),
    dict(id="da2-dead-band-default-2pct", file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("DEFAULT_DEAD_BAND = 0.1", "DEFAULT_DEAD_BAND = 0.02")],
         tests=[SAMPLER_BAND],
         bug="the samplers' dead_band defaults to 0.02, not the documented 0.1"),
]
