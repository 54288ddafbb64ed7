"""Detail pass over docs/claims.md rows A1-A55 (docs/api.md, first half), 2026-12-02:
each mutant plants a bug in one detail the doc states that the rows' named tests ran
but did not assert, with the test written to catch it. Run with
`check.py --catalogue detail_api1`."""

ERRORS = "horovod_wagma/common/errors.py"
ERROR_CLASSES = ("tests/test_api_surface.py::test_error_classes_are_runtime_errors_and_a_"
                 "lost_member_is_horovods_reset_error")

MUTANTS = [
    dict(id="da1-wagma-error-not-runtime-error", file=ERRORS,
         edits=[("class WagmaError(RuntimeError):", "class WagmaError(Exception):")],
         tests=[ERROR_CLASSES],
         bug="A29: WagmaError is no longer a RuntimeError (api.md:88)"),
    dict(id="da1-membership-changed-not-horovod-internal", file=ERRORS,
         edits=[("class WagmaMembershipChanged(WagmaError, HorovodInternalError):",
                 "class WagmaMembershipChanged(WagmaError):")],
         tests=[ERROR_CLASSES],
         bug="A18: a lost member's error is not a HorovodInternalError, so "
             "hvd.elastic.run would not reset (api.md:54-56)"),
    dict(id="da1-every-engine-error-is-a-reset", file=ERRORS,
         edits=[("    return WagmaError(text)", "    return WagmaMembershipChanged(text)")],
         tests=[ERROR_CLASSES],
         bug="A18/A29: every engine failure becomes Horovod's reset error, so elastic.run "
             "would swallow mismatches and stalls"),
]
