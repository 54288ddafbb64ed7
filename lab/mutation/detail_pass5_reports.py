"""Fifth detail pass, the fault reports (claims.md F8-F14, F49-F52b), 2026-12-06: each
report's contents with its parameters varied. The tests before this pass ran each
report in one configuration (one rank missing, a pair of members, one stream, the last
rank leaving, one absence), so a report that named only the first of several missing
ranks, listed one pending message, carried one stream's round for every stream, or
counted left-out rounds across absences passed them. tests/test_report_properties.py
varies which rank stops, leaves or stays away (rank 0, a middle one, the last), the
round, how many ranks and rounds are missing, P = 3 and 4, and matches the texts
whole; cpp_ops/engine/tests/report_text_test.cc matches every branch of each text in
one process (the C++ mutants name no pytest where it alone catches them: check.py runs
`make engine-unit-test` first for every mutant of cpp_ops/engine/, so it must build
report_text_test). Run with `check.py --catalogue detail_pass5_reports`."""

REPORTS = "tests/test_report_properties.py"
AWAY = REPORTS + "::test_an_away_app_is_named_with_its_last_round_and_the_rounds_left_out_since"
HOLD = REPORTS + "::test_hold_reports_once_per_round_name_the_members_and_what_each_waits_on"
STALL_LATE = REPORTS + "::test_the_stall_warning_of_a_late_app_names_its_rank_and_blames_no_live_" \
                       "engine"
REGISTRATION = REPORTS + "::test_a_late_registration_names_every_missing_and_registered_rank"
STOPPED = REPORTS + "::test_a_stopped_rank_is_named_in_the_warnings_hold_reports_and_its_own_pause"
LEAVER = REPORTS + "::test_a_leaver_is_named_with_its_last_round_of_each_stream"

MUTANTS = [
    # --- the away-application report (F10, F43) ---------------------------------------------
    dict(id="detail5-away-report-count-never-restarts",
         file="cpp_ops/engine/core/engine.cc",
         edits=[("  s.app_called_at = std::chrono::steady_clock::now();\n"
                 "  s.left_out_since_app_call = 0;\n",
                 "  s.app_called_at = std::chrono::steady_clock::now();\n")],
         tests=[AWAY + "[away:0:2]"],
         bug="faults.md:37-43 (F10): the report counts the rounds its engine 'joined ... "
             "with a value too old' since the app's last round; the count is no longer reset "
             "when the app calls, so a second absence reports the first one's rounds too "
             "(the away test's app left only once)"),
    # --- stall warnings and registrations (F11, F12) -----------------------------------------
    dict(id="detail5-stall-warning-names-first-missing-only",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("      if (!stall.waiting.count(m)) missing.push_back(m);",
                 "      if (!stall.waiting.count(m) && missing.empty()) missing.push_back(m);")],
         tests=[STALL_LATE + "[hold:1-3:2]"],
         bug="faults.md:44-46 (F11): the inspector 'prints which ranks have not entered' the "
             "round; with two ranks missing it now names the first ([1], not [1, 3]), and "
             "the timeout error's note with it (every stall the tests ran missed one rank)"),
    dict(id="detail5-registration-warning-names-first-missing-only",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("      if (!Contains(p.seen, m)) missing.push_back(m);",
                 "      if (!Contains(p.seen, m) && missing.empty()) missing.push_back(m);")],
         tests=[REGISTRATION + "[reg:3=1.6:1=2.9]"],
         bug="faults.md:47 (F12): round-0 registrations are inspected the same way; a "
             "registration waiting for two ranks now names the first only (the late "
             "registration the tests ran waited for one)"),
    # --- the hold report (F49, F50) ----------------------------------------------------------
    dict(id="detail5-hold-report-lists-the-last-pending-message",
         file="cpp_ops/engine/health/hold_report.cc",
         edits=[('    out += (out.empty() ? "" : ", ") +',
                 '    out = std::string() +')],
         tests=[HOLD + "[hold:1-3:2]"],
         bug="faults.md:60-67 (F49): the report says what the call 'waits on'; with two "
             "members' data pending it now lists the last message only ('receive from "
             "rank 3', not 'receive from rank 1, receive from rank 3'), in the report and in "
             "each member's view (the tests' held rounds had one other member)"),
    dict(id="detail5-hold-report-lists-the-streams-members",
         file="cpp_ops/engine/health/hold_report.cc",
         edits=[('RoundName(s, round, &rs) + " (members " + RankList(rs.members) + "; ";',
                 'RoundName(s, round, &rs) + " (members " + RankList(s.spec.members) + "; ";')],
         tests=[STOPPED + "[stop:3:group]"],
         bug="faults.md:60-67 (F49): the report names the round's members; it now lists the "
             "stream's (every rank) for a group round of two of four (the tests' held rounds "
             "had every rank of the stream as members)"),
    # --- early exit (F8) ---------------------------------------------------------------------
    dict(id="detail5-goodbye-keys-every-stream-as-the-first",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("    if (kv.second.id >= 0) last_round[kv.second.id] = kv.second.last_joined_round;",
                 "    if (kv.second.id >= 0) last_round[0] = kv.second.last_joined_round;")],
         tests=[LEAVER + "[leaver1]"],
         bug="faults.md:33-36 (F8): a leaver's goodbye tells, per stream, the last round it "
             "served; it now files every stream's under the first stream's id, so stream 'a' "
             "waits in round 3 for the leaver (told it served up to 5) and 'b' reports "
             "'never joining' (the early-exit tests ran one stream)"),
    dict(id="detail5-early-exit-names-the-last-member",
         file="cpp_ops/engine/transport/peer_roster.cc",
         edits=[('std::string text = "rank " + std::to_string(m) +',
                 'std::string text = "rank " + std::to_string(members.back()) +')],
         tests=[LEAVER + "[leaver1]"],
         bug="faults.md:33-36 (F8): 'rank 3 left without join()' names the round's last "
             "member instead of the rank that left; the make-test leaver was rank 3 of 4, the "
             "last member of every round it was in (the registrar case, rank 0, is extended)"),
    # --- liveness (F14) ------------------------------------------------------------------------
    dict(id="detail5-unresponsive-names-one-peer-per-pass",
         file="cpp_ops/engine/health/peer_liveness.cc",
         edits=[("    out.push_back(r);\n    if (silent > longest) longest = silent;\n  }",
                 "    out.push_back(r);\n    if (silent > longest) longest = silent;\n    break;\n"
                 "  }")],
         tests=[],
         bug="faults.md:50-58 (F14): peers silent after a probe 'are named first in the "
             "warning and the error'; of several only the first in rank order is named (a "
             "lost host's ranks one at a time). Every multi-rank test stops one rank; the "
             "unit test report_text_test names [0, 4]"),
    # --- the three engine bugs these tests found, fixed 2026-12-06 ---------------------------
    dict(id="detail5-failed-round-keeps-its-stall-warning",
         file="cpp_ops/engine/health/stall_inspector.cc",
         edits=[("        if (now - w->second > timeout) {", "        if (false) {")],
         tests=[REPORTS + "::test_stall_warnings_stop_once_the_round_failed_at_the_timeout"],
         bug="faults.md:46-51 (F11): the inspector's warning repeats while the stall lasts; "
             "a waiter past its own stall timeout has failed the round and waits no more. "
             "Kept, the inspector warned about a failed round every window until the job "
             "ended ('waiting: [0, 2, 3]' though nobody waited), as before the fix"),
    dict(id="detail5-join-after-a-departure-waits-for-it",
         file="cpp_ops/engine/core/engine_join.cc",
         edits=[("  if (roster_.first_departed() >= 0) {", "  if (false) {")],
         tests=[REPORTS + "::test_join_after_a_rank_left_names_it"],
         bug="faults.md (F1, F9): every fault ends in an error naming the rank; join() "
             "called after a leaver's goodbye arrived waits for the leaver and ends only "
             "with Horovod's shutdown error, naming nobody"),
    dict(id="detail5-registrar-leaving-never-ends-the-join",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("  } else if (source == kRegistrar && joins_.self_joined()) {",
                 "  } else if (false) {")],
         tests=[REPORTS + "::test_a_leaver_while_the_others_join_is_named_in_their_join[0]"],
         bug="faults.md (F9): rank 0 leaving without join() while the others are in join(): "
             "only the registrar ends joins, so nobody names it; their join() waits for "
             "Horovod's shutdown timeout"),
]
