"""Detail pass over docs/claims.md rows A1-A55 (docs/api.md, first half), 2026-12-02:
each mutant plants a bug in one detail the doc states that the rows' named tests ran
but did not assert, with the test written to catch it. Run with
`check.py --catalogue detail_api1`."""

ERRORS = "horovod_wagma/common/op/errors.py"
# The error classes' test is the membership one (it also covers WagmaFenced, E3).
ERROR_CLASSES = "tests/test_membership.py::test_a_fenced_side_ends_the_script_a_lost_member_resets"

MUTANTS = [
    dict(id="da1-wagma-error-not-runtime-error", file=ERRORS,
         edits=[("class WagmaError(RuntimeError):", "class WagmaError(Exception):")],
         tests=[ERROR_CLASSES],
         bug="A29: WagmaError is no longer a RuntimeError (api.md:88)"),
    dict(id="da1-every-engine-error-is-a-reset", file=ERRORS,
         edits=[("    return WagmaError(text)", "    return WagmaMembershipChanged(text)")],
         tests=[ERROR_CLASSES],
         bug="A18/A29: every engine failure becomes Horovod's reset error, so elastic.run "
             "would swallow mismatches and stalls"),
]
