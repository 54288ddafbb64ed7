"""The codebase's layout rules (docs/design.md, "Code layout"), checked on the files.

Each rule keeps one fact in one place, so that changing the fact means changing one
file: the global-round rule lives in the engine's round_plan.h and Python's
common/optimizer/rounds.py (tests/ keeps its own, independent oracle)."""
import ast
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
GLOBAL_RULE_HOMES = {"horovod_wagma/common/optimizer/rounds.py", "cpp_ops/engine/rounds/round_plan.h"}


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
    """round_plan.h (the engine) and common/optimizer/rounds.py (Python) are the only code
    that computes whether a round is global; the simulator, soak and the examples
    import rounds.py."""
    found = [f"{rel}:{n}: {line.strip()}"
             for rel, path in _sources((".py", ".h", ".cc"))
             for n, line in _code_lines(path)
             if GLOBAL_RULE.search(line) and rel not in GLOBAL_RULE_HOMES
             # the mutants' texts quote rounds.py to edit it
             and not rel.startswith("lab/mutation/")]
    assert not found, ("the global-round rule is computed outside round_plan.h and "
                       "common/optimizer/rounds.py; import is_global_round instead:\n" + "\n".join(found))
    for home in GLOBAL_RULE_HOMES:
        assert any(GLOBAL_RULE.search(line) for _, line in _code_lines(os.path.join(ROOT, home))), home


@pytest.mark.parametrize("rel", ["lab/sim/methods/wagma.py", "lab/soak.py",
                                 "examples/group_allreduce_demo.py"])
def test_round_plan_users_import_it(rel):
    with open(os.path.join(ROOT, rel)) as f:
        assert "from horovod_wagma.common.optimizer.rounds import is_global_round" in f.read(), rel


# bench/: the benchmarks (scripts) over shared harness modules, with no import circle.
BENCH = os.path.join(ROOT, "bench")


def _bench_modules():
    """{module name: parsed ast} of every bench/*.py."""
    modules = {}
    for name in sorted(os.listdir(BENCH)):
        if name.endswith(".py"):
            with open(os.path.join(BENCH, name), encoding="utf-8") as f:
                modules[name[:-3]] = ast.parse(f.read(), name)
    return modules


def _bench_imports(tree, names):
    """The bench modules (of ``names``) a module imports, at module level or inside a
    function (a lazy import is an edge too): {imported module: first line}."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [node.module]
        else:
            continue
        for target in targets:
            top = target.split(".")[0]
            if top in names:
                found.setdefault(top, node.lineno)
    return found


def _is_script(tree):
    """Whether a module has an ``if __name__ == "__main__":`` block at its top level."""
    return any(isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
               and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"
               and any(isinstance(c, ast.Constant) and c.value == "__main__"
                       for c in node.test.comparators)
               for node in tree.body)


def _cycle(graph):
    """One import circle of ``graph`` ({module: {imported: line}}) as a list of modules,
    first repeated last, or None."""
    state = {}   # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None
    for start in sorted(graph):
        if start not in state:
            found = visit(start, [])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_lazy_circles():
    assert _cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) is None
    assert _cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 9}}) == ["a", "b", "c", "a"]
    tree = ast.parse("import os\nimport b as x\n\ndef f():\n    from c.d import e\n")
    assert _bench_imports(tree, {"b", "c"}) == {"b": 2, "c": 5}


def test_bench_has_no_import_cycles():
    """No bench module imports one that imports it back, directly or around a circle,
    counting imports inside functions: shared pieces live in a module below both
    (measure.py, adapters.py, method_base.py)."""
    modules = _bench_modules()
    graph = {name: _bench_imports(tree, set(modules) - {name})
             for name, tree in modules.items()}
    circle = _cycle(graph)
    assert circle is None, "bench/ has an import circle: " + ", ".join(
        f"{a}.py:{graph[a][b]} imports {b}" for a, b in zip(circle, circle[1:]))


def test_bench_scripts_are_not_libraries():
    """A benchmark a user runs (a module with ``if __name__ == "__main__"``) is imported
    by no other bench module: what two benchmarks share lives in a harness module."""
    modules = _bench_modules()
    scripts = {name for name, tree in modules.items() if _is_script(tree)}
    assert {"time_to_accuracy", "epoch_loop", "steps_to_accuracy", "imbalance"} <= scripts
    found = [f"bench/{name}.py:{line}: imports the script {script}.py"
             for name, tree in modules.items()
             for script, line in _bench_imports(tree, scripts - {name}).items()]
    assert not found, "\n".join(found)


ENGINE = os.path.join(ROOT, "cpp_ops", "engine")
ENGINE_ROOMS = ("core", "rounds", "reduce", "transport", "health", "observe")


def _engine_units():
    """{path relative to cpp_ops/engine/: text} of the engine's .h and .cc files: c_api
    at the root, everything else in a room; the unit tests (tests/) left out."""
    units = {}
    for folder in ("",) + ENGINE_ROOMS:
        for name in os.listdir(os.path.join(ENGINE, folder)):
            if name.endswith((".h", ".cc")):
                rel = os.path.join(folder, name)
                with open(os.path.join(ENGINE, rel)) as f:
                    units[rel] = f.read()
    return units


def _engine_include_graph():
    """{unit: units it includes}, a unit being a stem of an engine file (its .h and .cc
    together), from `#include "..."` lines."""
    graph = {}
    for rel, text in _engine_units().items():
        stem = os.path.basename(rel).rsplit(".", 1)[0]
        for inc in re.findall(r'#include "([^"]+)"', text):
            target = os.path.basename(inc).rsplit(".", 1)[0]
            if target != stem and os.path.exists(os.path.join(ENGINE, inc)):
                graph.setdefault(stem, set()).add(target)
    return graph


def test_engine_is_in_rooms_with_root_relative_includes():
    """The engine's root holds only the C interface and the rooms; every engine
    include names its file from the root ("core/engine.h"), so a file's room is read
    off the include line and a moved file breaks the build instead of being found
    by accident in the includer's folder."""
    loose = sorted(n for n in os.listdir(ENGINE)
                   if os.path.isfile(os.path.join(ENGINE, n)) and not n.startswith("c_api."))
    assert not loose, f"engine files outside a room: {loose}"
    folders = sorted(n for n in os.listdir(ENGINE) if os.path.isdir(os.path.join(ENGINE, n)))
    assert folders == sorted(ENGINE_ROOMS + ("tests",)), folders
    units = _engine_units()
    assert len(units) > 60
    bad = []
    for rel, text in units.items():
        for inc in re.findall(r'#include "([^"]+)"', text):
            if inc == "c_api.h":
                continue
            if inc.split("/")[0] not in ENGINE_ROOMS or not os.path.exists(os.path.join(ENGINE, inc)):
                bad.append(f"{rel}: #include \"{inc}\"")
    assert not bad, "includes not relative to cpp_ops/engine/:\n" + "\n".join(bad)


def test_common_is_in_rooms():
    """horovod_wagma/common/ holds only its package file and its rooms, each a package."""
    common = os.path.join(ROOT, "horovod_wagma", "common")
    entries = sorted(n for n in os.listdir(common) if n != "__pycache__")
    assert entries == ["__init__.py", "balance", "elastic", "op", "optimizer"], entries
    for room in entries[1:]:
        assert os.path.exists(os.path.join(common, room, "__init__.py")), room


def test_no_engine_include_runs_back_up():
    """No unit of the engine includes, directly or through others, a unit that
    includes it: a base class's files never include what derives from it (the
    reduction factory lives apart from GroupReduction for that)."""
    graph = _engine_include_graph()
    cycles = []
    state = {}

    def visit(unit, path):
        state[unit] = "open"
        for nxt in sorted(graph.get(unit, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[unit] = "done"

    for unit in sorted(graph):
        if unit not in state:
            visit(unit, [unit])
    assert not cycles, "engine units that include each other:\n" + "\n".join(cycles)
    assert "reduction_factory" in graph and "direct_exchange_reduction" in graph["reduction_factory"]


def test_make_install_rebuilds_when_any_engine_file_changes():
    """The Makefile's INSTALL_INPUTS (what re-triggers `make install`) covers every
    engine and binding source, rooms included: a pattern that stops one folder short
    would leave a stale libwagma.so behind an edited file."""
    import glob
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read()
    block = re.search(r"^INSTALL_INPUTS :=((?:.*\\\n)*.*)$", text, re.M).group(1)
    patterns = re.search(r"\$\(wildcard ([^)]*)\)", block).group(1).split()
    covered = {os.path.relpath(p, ROOT) for pat in patterns
               for p in glob.glob(os.path.join(ROOT, pat))}
    sources = {os.path.join("cpp_ops", "engine", rel) for rel in _engine_units()}
    sources |= {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "cpp_ops", "*", "*.cc"))}
    missing = sorted(sources - covered)
    assert not missing, f"sources make install does not watch: {missing}"
