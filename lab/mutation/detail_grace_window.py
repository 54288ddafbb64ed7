"""The grace window (grace_window.{h,cc}, Engine::HoldForApp, AgreeOnGraceSetting;
docs/design.md 2.4a, docs/api.md HOROVOD_WAGMA_GRACE_FRACTION), 2026-12-06: one mutant
per rule, each caught by tests/test_grace_window.py or the engine unit test. Run with
`check.py --catalogue detail_grace_window`."""

GRACE = "tests/test_grace_window.py::"
FRESH = GRACE + "test_a_partner_a_few_ms_late_contributes_its_fresh_value -k torch"
STRAGGLER = GRACE + "test_a_persistent_straggler_is_never_waited_for"
OFF = GRACE + "test_grace_fraction_zero_turns_it_off"
MALFORMED = GRACE + "test_a_malformed_grace_fraction_fails_every_ranks_start"
WINDOW = "cpp_ops/engine/rounds/grace_window.cc"
ENGINE = "cpp_ops/engine/core/engine.cc"

MUTANTS = [
    dict(id="grace-never-holds", file=ENGINE,
         edits=[("if (std::chrono::steady_clock::now() >= s.grace.HoldUntil(round)) return false;",
                 "return false;")],
         tests=[FRESH],
         bug="passive joins never wait for the app: a partner 4 ms late contributes last "
             "round's value"),
    dict(id="grace-ignores-the-seven-in-eight-rule", file=WINDOW,
         edits=[("if (8 * within < 7 * static_cast<int>(lags_us_.size())) return 0;", "")],
         tests=[STRAGGLER],
         bug="the window opens for an app that is always a step behind: its peers wait "
             "for it in every round"),
    dict(id="grace-half-catchable-is-enough", file=WINDOW,
         edits=[("if (8 * within < 7 * static_cast<int>(lags_us_.size())) return 0;",
                 "if (2 * within < static_cast<int>(lags_us_.size())) return 0;")],
         tests=[],  # the engine unit test
         bug="the first rule: a rank far late one step in four (random noise) is "
             "waited for, and every group it is in waits out its window each time"),
    dict(id="grace-ignores-the-cap-fraction", file=WINDOW,
         edits=[("if (cap_fraction_ <= 0 || step_us_ <= 0 ||", "if (step_us_ <= 0 ||"),
                ("const int64_t cap = static_cast<int64_t>(cap_fraction_ * step_us_);",
                 "const int64_t cap = static_cast<int64_t>(0.25 * step_us_);")],
         tests=[OFF],
         bug="HOROVOD_WAGMA_GRACE_FRACTION=0 no longer turns the window off"),
    dict(id="grace-holds-any-round", file=WINDOW,
         edits=[("if (round != awaited_round_) return Clock::time_point{};", "")],
         tests=[],  # the engine unit test (check.py runs it for every engine mutant)
         bug="a round other than the app's next is held back too"),
    dict(id="grace-malformed-unagreed", file=ENGINE,
         edits=[('  if (hi) return "HOROVOD_WAGMA_GRACE_FRACTION is malformed on another rank";\n',
                 "")],
         tests=[MALFORMED],
         bug="a malformed setting on one rank fails its start alone; the others start "
             "and wait for it"),
]
