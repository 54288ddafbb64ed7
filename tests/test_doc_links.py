"""The documentation's relative links must lead somewhere: README.md and docs/*.md link
into each other by heading anchor, and a heading renamed or moved (docs/benchmarks.md
keeps today's results, docs/benchmarks-history.md the dated record) would leave a link
that GitHub renders but that lands at the top of the page. No ranks, no package import.

Anchors follow GitHub's slug rules: the heading's text lowercased, every character that
is not a letter, a digit, a space, '-' or '_' removed (backticks, quotes, dots, commas,
parentheses, colons, slashes, plus signs...), spaces turned into '-', and a heading
whose slug was already taken in the file gets -1, -2, ... appended."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where documentation lives: the top level (not recursed) and these folders (recursed).
DOC_DIRS = ("docs", "bench", "lab", "tests")
SKIP_DIRS = {".venv", "build", "third_party", "node_modules", "__pycache__"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:#+[ \t]*)?$")
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def markdown_files():
    files = [os.path.join(ROOT, name) for name in sorted(os.listdir(ROOT))
             if name.endswith(".md") and os.path.isfile(os.path.join(ROOT, name))]
    for top in DOC_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in SKIP_DIRS and not d.startswith("."))
            files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".md")]
    return files


def prose_lines(text):
    """The file's lines with fenced code blocks blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip()[len(m.group(1)):].strip():
                fence = None
            out.append("")
        else:
            out.append(line)
    return out


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = INLINE_LINK_TEXT.sub(r"\1", heading)   # a link in a heading: its text only
    text = re.sub(r"<[^>]+>", "", text)           # inline HTML tags
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            lines = prose_lines(f.read())
        seen, found = {}, set()
        for line in lines:
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def links(path):
    """(line number, target) of every relative link outside code."""
    with open(path, encoding="utf-8") as f:
        text = "\n".join(prose_lines(f.read()))
    # Inline code spans hold no links; blank them, keeping newlines for line numbers.
    text = INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in LINK.finditer(text):
        target = m.group(2)
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue                                  # http:, https:, mailto:, ...
        yield text.count("\n", 0, m.start(2)) + 1, target


def broken_links():
    broken = []
    for path in markdown_files():
        rel = os.path.relpath(path, ROOT)
        for line, target in links(path):
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not os.path.exists(dest):
                broken.append(f"{rel}:{line}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                broken.append(f"{rel}:{line}: {target}: no heading in "
                              f"{os.path.relpath(dest, ROOT)} has that anchor")
    return broken


def test_slug_follows_githubs_rules():
    assert slug('"follow": a late rank\'s engine contributes the consensus (2026-12-07)') \
        == "follow-a-late-ranks-engine-contributes-the-consensus-2026-12-07"
    assert slug("Time to accuracy: `bench/time_to_accuracy.py`") \
        == "time-to-accuracy-benchtime_to_accuracypy"
    assert slug("Regimes: the host's CPU busy share (2026-12-06)") \
        == "regimes-the-hosts-cpu-busy-share-2026-12-06"
    assert slug("a + b, c.d / e") == "a--b-cd--e"


def test_every_relative_link_resolves():
    broken = broken_links()
    assert not broken, f"{len(broken)} broken link(s):\n" + "\n".join(broken)


def test_benchmarks_page_is_current_first():
    """Today's results only (aim: 700 lines, a little slack for a new section before
    an older one moves out); the dated record lives in benchmarks-history.md."""
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), encoding="utf-8") as f:
        lines = f.read().count("\n")
    assert lines <= 720, f"docs/benchmarks.md has {lines} lines; history goes to " \
        "docs/benchmarks-history.md"
    assert os.path.isfile(os.path.join(ROOT, "docs", "benchmarks-history.md"))
