"""Detail pass over docs/claims.md's README (R) and docs/elastic.md (E) rows
(2026-12-02): each mutant plants a bug in one detail a doc states that the rows' tests
ran but did not assert, with the test strengthened for it. Run with
`check.py --catalogue detail_readme_elastic`."""

MEMBERSHIP = "tests/test_membership.py"
JUDGED = MEMBERSHIP + "::test_a_re_formed_job_is_judged_against_the_previous_member_set"
ERROR_TYPES = MEMBERSHIP + "::test_a_fenced_side_ends_the_script_a_lost_member_resets"

MUTANTS = [
    dict(id="dre-fenced-is-horovod-internal",
         file="horovod_wagma/common/op/errors.py",
         edits=[("class WagmaFenced(WagmaError):",
                 "class WagmaFenced(WagmaError, HorovodInternalError):")],
         tests=[ERROR_TYPES],
         bug="WagmaFenced becomes a HorovodInternalError: hvd.elastic.run resets and the "
             "fenced side trains on instead of the script ending (E3, R37)"),
    dict(id="dre-membership-changed-not-horovod-internal",
         file="horovod_wagma/common/op/errors.py",
         edits=[("class WagmaMembershipChanged(WagmaError, HorovodInternalError):",
                 "class WagmaMembershipChanged(WagmaError):")],
         tests=[ERROR_TYPES],
         bug="WagmaMembershipChanged is no HorovodInternalError: Horovod does not reset on "
             "a lost member, the script dies (R34)"),
    dict(id="dre-fenced-text-is-a-plain-error",
         file="horovod_wagma/common/op/errors.py",
         edits=[('    if "fenced:" in text:', '    if text == "fenced:":')],
         tests=[ERROR_TYPES],
         bug="the engine's fenced text raises a plain WagmaError, not WagmaFenced (E3)"),
    dict(id="dre-fenced-text-drops-not-a-majority",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[('"not a majority (more than half, or half with rank 0), so this side stops "',
                 '"(more than half, or half with rank 0), so this side stops "')],
         tests=[JUDGED],
         bug="the re-formed job's fenced text no longer says 'not a majority' (E3)"),
    dict(id="dre-membership-change-time-monotonic",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[('{"time": time.time(), "generation"',
                 '{"time": time.monotonic(), "generation"')],
         tests=[JUDGED],
         bug="membership_changes()' time is a monotonic clock, not the wall-clock time (E7)"),
]
