"""Fifth detail pass, the twins area (2026-12-06): the Keras twins of PyTorch features and
the data-sharing helpers (samplers, BalancedSequence, the step clock and the share cut),
guarded by the property tests of tests/test_twin_properties.py (knob matrices against
small models of the documented rules, both frameworks on one exact scenario). Each
mutant is a one-line bug on a documented promise that the tests before this pass did
not exercise: an unmeasured rank beside measured ones of different speeds (the old
case had them equal), a floor that is not a whole number of samples, leftover samples
where the largest remainder is not the largest weight, a median over an even number of
cycles, only some ranks training without WAGMA, and Keras's sync() under
"quasi_global". Reasoned to survive the tests before this pass (each bug names the case
they lacked); the tests here were seen to catch them. Run with
`check.py --catalogue detail_pass5_twins`."""

TWINS = "tests/test_twin_properties.py"
SAMPLER = TWINS + "::test_balanced_sampler_deals_the_documented_cut_of_torchs_permutation"
BATCHES = TWINS + "::test_balanced_batch_sampler_deals_the_documented_batches"
SEQUENCE = TWINS + "::test_balanced_sequence_deals_the_documented_cut_of_numpys_permutation"
CLOCK = TWINS + "::test_step_clock_median_of_even_and_odd_cycle_counts"
MODES = TWINS + "::test_compression_and_state_modes_change_what_they_promise"
PARITY = TWINS + "::test_torch_and_keras_optimizers_follow_the_same_documented_trajectory"
SHARES = "horovod_wagma/common/balance/balanced_shares.py"

MUTANTS = [
    dict(id="detail5-twins-unmeasured-rank-takes-the-fastest-throughput", file=SHARES,
         edits=[("    fill = sum(ok) / len(ok) if ok else 1.0",
                 "    fill = max(ok) if ok else 1.0")],
         tests=[SAMPLER, BATCHES],
         bug="common/balance/balanced_shares.py invariants (A64, A73): a rank that measured nothing "
             "(0, NaN) counts as the measured ranks' mean; it now counts as the fastest. "
             "The only old case, [0, 2, nan, 2], had equal measured ranks (mean = max); "
             "the matrix now gathers [5, 1, 0, nan]"),
    dict(id="detail5-twins-floor-rounded-not-truncated", file=SHARES,
         edits=[("    floor = min(total // n, int(min_fraction * total / n))",
                 "    floor = min(total // n, round(min_fraction * total / n))")],
         tests=[SAMPLER],
         bug="api.md:235 (A68): every share at least min_share of an equal share, rounded "
             "down; it is now rounded to nearest. Every old floor was a whole number (0.25 "
             "of 1000, of 8, of 100); the matrix cuts 33 samples over 3 ranks with "
             "min_share 0.6 (6.6: 6, not 7) for a rank a million times slower"),
    dict(id="detail5-twins-leftover-to-the-heaviest-not-the-largest-remainder", file=SHARES,
         edits=[("    by_remainder = sorted(free, key=lambda i: "
                 "(-(exact[i] - math.floor(exact[i])), i))",
                 "    by_remainder = sorted(free, key=lambda i: (-weights[i], i))")],
         tests=[SAMPLER, SEQUENCE],
         bug="balanced_shares.py (A64, A73): after water-filling the largest remainders get "
             "the leftover samples; they now go to the fastest ranks. Old cases had equal "
             "weights at a leftover (ties to the lower rank either way) or a 1-sample "
             "tolerance; the matrices compare every rank's exact indices"),
    dict(id="detail5-twins-step-clock-upper-median", file="horovod_wagma/common/optimizer/step_clock.py",
         edits=[("return statistics.median(self._cycles) if self._cycles else None",
                 "return statistics.median_high(self._cycles) if self._cycles else None")],
         tests=[CLOCK],
         bug="step_clock.py, api.md:228-233 (A65, A66): an epoch's estimate is the median "
             "cycle; it is now the upper median, the larger middle cycle of an even count. "
             "Every old clock case had equal middle cycles; the new one runs 2, 3, 4 and 6 "
             "cycles of different lengths"),
    dict(id="detail5-twins-equal-steps-only-when-every-rank-needs-them",
         file="horovod_wagma/common/balance/throughput_exchange.py",
         edits=[("return self.throughputs, bool(gathered[:, 2].max() > 0)",
                 "return self.throughputs, bool(gathered[:, 2].min() > 0)")],
         tests=[SEQUENCE],
         bug="api.md:269-271 (A74), throughput_exchange.py: where a rank's optimizer did not "
             "average (Horovod's, needing equal steps), the shares stay equal; they now stay "
             "equal only when every rank trained without WAGMA. Old runs had all ranks on "
             "Horovod's optimizer or none; the sequence case now has one rank of two"),
    dict(id="detail5-twins-keras-sync-averages-quasi-global-velocities",
         file="horovod_wagma/keras/optimizer.py",
         edits=[('        if self._wagma["state"]:\n            variables = list(variables) + ',
                 '        if self._wagma["state"] or self._wagma["qgm"]:\n'
                 '            variables = list(variables) + ')],
         tests=[MODES, PARITY],
         bug="api.md:334 (A87, S53): Keras sync(variables) averages the optimizer's state "
             "with \"on_sync\" only; with \"quasi_global\" it now averages the rebuilt "
             "velocities too (PyTorch's rule, not Keras's). The Keras quasi_global test "
             "never called sync(); the parity case does, each rank's velocity its own"),
]
