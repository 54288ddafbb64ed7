"""Fourth detail pass over docs/claims.md, the PyTorch optimizer's rows (R13-R18, R42, R45,
A37-A63, S40-S55, F2-F7, F21a: tests in test_optimizer.py, test_optimizer_core.py,
test_quasi_global.py, test_fusion.py, test_uneven.py, test_stale_join.py,
test_staleness.py, test_torch_handle.py), 2026-12-04: "behaviours no test runs". Each
mutant breaks a documented behaviour that the tests never exercised at all: training
after join() (both kinds of global round), the fp16 rule of a step served by a later
round than its own, Adam's second state tensor at global rounds, named_buffers under
"never", and drift correction with its default alpha, with several parameter groups
and with Adam. `tests` names the test strengthened (or written) to catch it; against the
tests as they were, every mutant here is expected to SURVIVE. Run with
`check.py --catalogue detail_pass4_torch`."""

OPT = "tests/test_optimizer.py"
CORE = "tests/test_optimizer_core.py"
UNEVEN = "tests/test_uneven.py"
TORCH_OPT = "horovod_wagma/torch/optimizer.py"
DRIFT = "horovod_wagma/torch/drift_correction.py"

STATE = OPT + "::test_optimizer_state_averaging_modes_and_sync"
STRAGGLER = OPT + "::test_wait_avoiding_global_rounds_straggler_and_join"
DRIFT_GROUPS = OPT + "::test_drift_correction_default_alpha_per_group_scale_and_adam"
DRIFT_UNIT = CORE + "::test_drift_correction_reads_each_parameter_groups_moment"

MUTANTS = [
    dict(id="detail4-torch-on-sync-averages-first-state-tensor-only", file=TORCH_OPT,
         edits=[("            on_sync += [s for p in self._params() "
                 "for s in self._state_tensors(p)]",
                 "            on_sync += [s for p in self._params() "
                 "for s in self._state_tensors(p)[:1]]")],
         tests=[STATE],
         bug="semantics.md:152-154 (S51; api.md:191-193, A56): 'on_sync' averages the "
             "optimizer state at global rounds, 'momentum and Adam moments'; the global-"
             "round duties now take only each parameter's first state tensor (as if "
             "every optimizer kept one, like SGD), so Adam's exp_avg_sq stays each "
             "rank's own there. sync() (_bucketed) still averages both, which is all the "
             "Adam run asserted (fresh8-torch-adam-second-moment-stays-local); the state "
             "test now asserts both moments after the global round 0 are the exact mean "
             "of the ranks' (1 - b) g and g^2 terms, the same bits everywhere, and each "
             "rank's own after the group round 1"),
    dict(id="detail4-torch-never-skips-buffer-duties", file=TORCH_OPT,
         edits=[("        on_sync = list(self._named_buffers)\n",
                 "        on_sync = list(self._named_buffers) "
                 "if self._state_averaging != \"never\" else []\n")],
         tests=[STATE],
         bug="api.md:189-190 (A55) with semantics.md:152-153 (S50): named_buffers' floating "
             "ones are averaged at global rounds whatever the state mode; 'never' keeps "
             "only the momentum and Adam moments local. 'never' now skips the global-round "
             "duties altogether, so the BatchNorm statistics stay each rank's own. No "
             "test combined 'never' with named_buffers; its state run now passes them "
             "and asserts the running mean after round 0 is the exact mean of the ranks' "
             "own (identical bits) and untouched after the group rounds 1-3"),
    dict(id="detail4-torch-fp16-rule-by-own-step", file=TORCH_OPT,
         edits=[("core.served_global(step, handle.round), python_cond))",
                 "core.served_global(step, step), python_cond))")],
         tests=[STRAGGLER],
         bug="semantics.md:141-147 (S45, S46; fp16_rule.py): with wait-avoiding global "
             "rounds the fp16 rule follows the round that served the step (x <- avg16 "
             "where it was global, x + (avg16 - x16) elsewhere); it now follows the "
             "step's own number, which a lagging rank's served round runs ahead of. The "
             "fp16 value test is blocking (served = step there), and the straggler run "
             "with fp16 asserted only sync()'s one model; it now asserts, per step, that "
             "the model is exactly fp16 values iff is_global(served round). Caught "
             "deterministically by the 4 steps after join(): the slow rank's own steps "
             "6-9 and the fast ranks' 24-27 put their global step at different offsets "
             "of the common served rounds newest+1..newest+4, so both can't agree"),
    dict(id="detail4-torch-join-renumbers-rounds", file=TORCH_OPT,
         edits=[("            _hvd.allreduce(torch.tensor(steps), op=_hvd.Max, name=name)))\n"
                 "        return last\n",
                 "            _hvd.allreduce(torch.tensor(steps), op=_hvd.Max, name=name)))\n"
                 "        self.rebase_rounds()\n"
                 "        return last\n")],
         tests=[UNEVEN + "::test_optimizer_join_with_uneven_batches", STRAGGLER],
         bug="faults.md:15-18 (F6, A59; api.md:200-201): training may go on after join(): "
             "with blocking global rounds every rank continues from the furthest step "
             "(step k is round k); join() now also rebases the rounds as after an "
             "elastic reset, so the optimizer numbers the next steps 0, 1, ... while the "
             "engine serves rounds 41, 42, ...: wagma_status().served_round is 0-3 "
             "instead of 41-44, and the global-round duties run at round 41 (a group "
             "round) instead of 44, leaving the momentum apart after the global round. "
             "With wait-avoiding ones the first step after join() runs the duties on "
             "every rank. steps (and so the old round == 41 check) are unchanged, and no "
             "test stepped after join(); the uneven optimizer scenario (now with "
             "momentum) asserts served rounds 41-44, steps 45 and the model and momentum "
             "identical after round 44; the straggler scenario the served rounds "
             "newest+1..newest+4 and the sync stream's rounds over them"),
    dict(id="detail4-torch-drift-none-never-resolved", file=TORCH_OPT,
         edits=[("        knobs.drift_correction, optimizer, knobs.average_optimizer_state),",
                 "        knobs.drift_correction, optimizer, knobs.average_optimizer_state)\n"
                 "        if knobs.drift_correction is not None else None,")],
         tests=[DRIFT_GROUPS],
         bug="api.md:174-177 (A52; semantics.md:158-161, S55): drift_correction=None is "
             "0.25 where the wrapped optimizer keeps a first moment and the state is "
             "on_sync; the PyTorch factory now resolves (and checks) only a given alpha, "
             "so None stays None and the correction is off. resolve_alpha's unit test "
             "passes, and the drift test passes alpha explicitly; the new drift_groups "
             "scenario builds its SGD and Adam optimizers with the default and asserts "
             "alpha 0.25 and c_i = 0.25 k (a_i - mean a) after round 0"),
    dict(id="detail4-torch-drift-one-k-per-buffer", file=DRIFT,
         edits=[("c.add_(moves[offset:offset + c.numel()].view_as(c), alpha=self._alpha * k)",
                 "c.add_(moves[offset:offset + c.numel()].view_as(c), "
                 "alpha=self._alpha * owners[0][1])")],
         tests=[DRIFT_GROUPS],
         bug="design.md:366-368 with api.md:176-179 (A53): c_i += alpha k (m̄ - m_i), k "
             "converting each parameter group's moment to gradient units ((1 - beta) / "
             "(1 - dampening)); every parameter of a fused drift buffer now takes the "
             "first parameter's k. The drift test has one parameter in one group; the "
             "drift_groups scenario's second group (momentum 0.5, dampening 0.2: k = "
             "0.625, the first's 0.1) gets 0.1, its c a sixth of 0.25 * 0.625 (a_i - "
             "mean a)"),
    dict(id="detail4-torch-drift-adam-moment-scaled-like-sgd", file=DRIFT,
         edits=[("        return \"exp_avg\", [1.0] * len(optimizer.param_groups)",
                 "        return \"exp_avg\", "
                 "[1.0 - g[\"betas\"][0] for g in optimizer.param_groups]")],
         tests=[DRIFT_UNIT, DRIFT_GROUPS],
         bug="design.md:366-367, api.md:174-177 (A52, A53): k is 1 for Adam's exp_avg (an "
             "average of gradients already); it now takes SGD's (1 - beta1), so an Adam "
             "rank's variate learns a tenth of the bias. Drift correction never ran with "
             "Adam (the unit test resolves AdamW's alpha only); moment_scale(Adam) is now "
             "asserted ('exp_avg', [1, 1]) and drift_groups' Adam run c_i = 0.25 * 0.1 "
             "(a_i - mean a) exactly"),
    dict(id="detail4-torch-drift-reads-optimizer-defaults", file=DRIFT,
         edits=[("            beta, damp = float(g.get(\"momentum\", 0)), "
                 "float(g.get(\"dampening\", 0))",
                 "            beta, damp = (float(optimizer.defaults.get(\"momentum\", 0)),\n"
                 "                          float(optimizer.defaults.get(\"dampening\", 0)))")],
         tests=[DRIFT_UNIT, DRIFT_GROUPS],
         bug="api.md:174-180 (A52): a given alpha raises ValueError without a first "
             "moment, and None is off there; k per parameter group (design.md:366). "
             "moment_scale now reads the optimizer's defaults instead of each group's, so "
             "an SGD(momentum=0.9) with one group at momentum 0 is accepted (and gets "
             "0.25 by default), and a group's own momentum or dampening is ignored. "
             "Every test optimizer had one group; the unit test now builds two (k 0.1 "
             "and 0.625, and one without momentum that must be refused)"),
]
