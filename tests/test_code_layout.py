"""The codebase's layout rules (docs/design.md, "Code layout"), checked on the files.

Each rule keeps one fact in one place, so that changing the fact means changing one
file: the global-round rule lives in the engine's round_plan.h and Python's
common/rounds.py (tests/ keeps its own, independent oracle)."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {".git", ".venv", "build", "tests", "third_party", "__pycache__", ".eggs"}


def _sources(exts):
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            if name.endswith(exts):
                path = os.path.join(top, name)
                yield os.path.relpath(path, ROOT), path


# `r == 0 or (r + 1) % tau == 0` in any spelling: round 0, then one in every tau (other
# periodic counters, e.g. an evaluation every n steps, lack the round-0 clause).
GLOBAL_RULE = re.compile(r"==\s*0\s*\)?\s*(or|\|\||\|)\s*\(*\s*[\w.]+\s*\+\s*1\s*\)\s*%")
GLOBAL_RULE_HOMES = {"horovod_wagma/common/rounds.py", "cpp_ops/engine/round_plan.h"}


def _code_lines(path):
    """The lines of a source file outside comments and docstrings (a crude cut:
    lines starting with '#' or '//', and triple-quoted blocks)."""
    in_doc = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            quotes = text.count('"""') + text.count("'''")
            if in_doc or quotes:
                if quotes % 2 == 1:
                    in_doc = not in_doc
                continue
            if text.startswith(("#", "//")):
                continue
            yield n, line


def test_the_global_round_rule_is_written_once_per_language():
    """round_plan.h (the engine) and common/rounds.py (Python) are the only code
    that computes whether a round is global; the simulator, soak and the examples
    import rounds.py."""
    found = [f"{rel}:{n}: {line.strip()}"
             for rel, path in _sources((".py", ".h", ".cc"))
             for n, line in _code_lines(path)
             if GLOBAL_RULE.search(line) and rel not in GLOBAL_RULE_HOMES
             # the mutants' texts quote rounds.py to edit it
             and not rel.startswith("lab/mutation/")]
    assert not found, ("the global-round rule is computed outside round_plan.h and "
                       "common/rounds.py; import is_global_round instead:\n" + "\n".join(found))
    for home in GLOBAL_RULE_HOMES:
        assert any(GLOBAL_RULE.search(line) for _, line in _code_lines(os.path.join(ROOT, home))), home


@pytest.mark.parametrize("rel", ["lab/sim/methods/wagma.py", "lab/soak.py",
                                 "examples/group_allreduce_demo.py"])
def test_round_plan_users_import_it(rel):
    with open(os.path.join(ROOT, rel)) as f:
        assert "from horovod_wagma.common.rounds import is_global_round" in f.read(), rel
