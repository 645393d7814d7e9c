"""The two documents a newcomer reads first are checked like code (issue 49).

- Every repository path that README.md or docs/ARCHITECTURE.md names in backticks exists (a token with a slash,
  or a file name that opens a module entry: `- `policy.py`: ...`). A path is resolved from the repository root,
  or, under a section heading that names a package (``## `harness/` ``), from that package: `core/paths.py` in
  the `harness/` section is `harness/core/paths.py`. What a run writes (``runs/...``, a results root's
  ``<out>/...``), a path with a placeholder (``<run id>``, ``*``, ``NNN``) and a host path (``/etc/...``,
  ``~/...``) name nothing in the checkout and are not checked.
- Every `make TARGET` they name (in backticks or in a code block) is a target of the Makefile.
- README's layout table ("What the kit holds") lists every top-level entry of the repository (tracked files and
  folders; a row may name several, or a glob such as `requirements*.in`).
- No line of either document is longer than MAX_LINE characters (prose is wrapped; a table row is one line).
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/ARCHITECTURE.md")
MAX_LINE = 300
# Not in the checkout by design: what runs write, caches, host paths.
RUNTIME_PREFIXES = ("runs/", ".cache/", "/", "~", "$", "../", "http:", "https:", ".venv/bin/")
# A placeholder: <run id>, a glob, an upper-case stand-in (OUT/, DIR/, shard-KKK, NNN).
PLACEHOLDER = re.compile(r"[<>*{}\[\]|]|\s|(^|/)[A-Z]{2,}/|[A-Z]{3}\b(?!\.)")
# Named as examples of what a run writes inside the checkout's results/ (not tracked).
RUN_OUTPUTS = ("results/my-run/", "results/reproduce/")
# A path: at least one slash, or a file name with a known extension; no spaces.
PATHLIKE = re.compile(r"^[A-Za-z0-9_.\-/]+$")
EXTENSIONS = (".py", ".sh", ".md", ".json", ".toml", ".csv", ".lock", ".in", ".txt", ".cfg")
TICKED = re.compile(r"`([^`\n]+)`")
MAKE = re.compile(r"(?<![\w-])make ([a-z][a-z0-9-]*)(?![\w*-])")
# A module entry: a list item that opens with the modules it is about (`- `policy.py`: ...`).
MODULE_ITEM = re.compile(r"^- ((?:`[^`]+`(?:, | and )?)+):")
SECTION_PACKAGE = re.compile(r"^##+ `([A-Za-z0-9_]+/)`")


def tracked_top_level() -> set[str]:
    """The repository's top-level entries as git tracks them (folders with a trailing slash)."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line.split("/", 1)[0] + ("/" if "/" in line else "") for line in out.splitlines() if line}


def candidate(token: str) -> str | None:
    """The repository path a backticked token names, or None when it names none the checkout could hold."""
    token = token.strip()
    if token.startswith(("make ", "python", "harness ", "executor ", "pytest", "bash ")):
        return None
    token = token.split("::", 1)[0].split(":", 1)[0] if not token.startswith("/") else token
    if token.startswith(RUNTIME_PREFIXES + RUN_OUTPUTS) or PLACEHOLDER.search(token) or not PATHLIKE.match(token):
        return None
    if token.startswith((".", "-")) and not token.startswith((".ci", ".gitignore")):
        return None
    return token


def named_paths(doc: str, root: Path = ROOT) -> list[tuple[int, str, str | None]]:
    """(line number, path, the package it may be relative to) for each path a document names: a backticked token
    with a slash anywhere, or a file name (`policy.py`) that opens a module entry (a list item `- `policy.py`: ...`
    or the first cell of a table row)."""
    out: list[tuple[int, str, str | None]] = []
    package, in_code = None, False
    for number, line in enumerate((root / doc).read_text().splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("## "):
            m = SECTION_PACKAGE.match(line)
            package = m.group(1) if m else None
        entry = MODULE_ITEM.match(line)
        first_cell = line.split("|")[1] if line.startswith("|") else entry.group(1) if entry else ""
        for token in TICKED.findall(line):
            path = candidate(token)
            bare_module = (
                path is not None and "/" not in path and path.endswith(EXTENSIONS) and f"`{token}`" in first_cell
            )
            if path is not None and ("/" in path or bare_module):
                out.append((number, path, package))
    return out


def resolves(path: str, package: str | None, root: Path = ROOT) -> bool:
    """Whether a named path exists from the root or its section's package; `core/typed_json` and
    `run/manifest.ReproduceSettings` name modules (`core/typed_json.py`, `run/manifest.py`)."""
    bases = [root] + ([root / package] if package else [])
    path = path.rstrip("/")
    forms = [path, path + ".py", re.sub(r"\.[A-Za-z_]\w*$", "", path) + ".py"]
    return any((base / form).exists() for base in bases for form in forms)


def missing_paths(doc: str) -> list[str]:
    return [f"{doc}:{n}: `{p}`" for n, p, pkg in named_paths(doc) if not resolves(p, pkg)]


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return {m.group(1) for m in re.finditer(r"^([a-z][a-z0-9-]*)\s*:(?!=)", text, re.M)}


def named_targets(doc: str, root: Path = ROOT) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    in_code = False
    for number, line in enumerate((root / doc).read_text().splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        spans = [line] if in_code else TICKED.findall(line)
        for span in spans:
            out.extend((number, target) for target in MAKE.findall(span))
    return out


def layout_rows(readme: str) -> list[str]:
    """The first cells of README's layout table (the table under "## What the kit holds"), their backticked
    entries each."""
    lines = readme.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## What the kit holds"))
    entries = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            entries.extend(TICKED.findall(line.split("|")[1]))
    return entries


def unlisted_top_level(readme: str, top: set[str]) -> list[str]:
    entries = layout_rows(readme)

    def listed(entry: str) -> bool:
        for named in entries:
            if named == entry or named.startswith(entry) or fnmatch.fnmatch(entry, named):
                return True
        return False

    return sorted(e for e in top if not listed(e))


@pytest.mark.parametrize("doc", DOCS)
def test_every_named_path_exists(doc):
    assert named_paths(doc), f"{doc} names no path: the check reads nothing"
    missing = missing_paths(doc)
    assert not missing, "paths named but absent:\n" + "\n".join(missing)


@pytest.mark.parametrize("doc", DOCS)
def test_every_named_make_target_exists(doc):
    targets = make_targets()
    assert {"setup", "test", "demo", "reproduce"} <= targets, "the Makefile reader found too little"
    unknown = [f"{doc}:{n}: make {t}" for n, t in named_targets(doc) if t not in targets]
    assert not unknown, "make targets named but not in the Makefile:\n" + "\n".join(unknown)


def test_readme_layout_table_lists_every_top_level_entry():
    top = tracked_top_level()
    assert {"bench/", "executor/", "harness/", "Makefile"} <= top
    missing = unlisted_top_level((ROOT / "README.md").read_text(), top)
    assert not missing, f"README's layout table does not list: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_no_overlong_lines(doc):
    long = [
        f"{doc}:{n}: {len(line)} characters"
        for n, line in enumerate((ROOT / doc).read_text().splitlines(), 1)
        if len(line) > MAX_LINE
    ]
    assert not long, f"lines over {MAX_LINE} characters (wrap them):\n" + "\n".join(long)


# --- the checks themselves, on planted faults -------------------------------------------------------------------


def test_the_checks_catch_planted_faults(tmp_path):
    """A module row and a path that do not exist, runtime and placeholder paths that are skipped, an unknown make
    target, and a layout table missing a folder: each is found (the checks above are not vacuous)."""
    (tmp_path / "harness" / "core").mkdir(parents=True)
    (tmp_path / "harness" / "core" / "paths.py").write_text("")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "demo.sh").write_text("")
    (tmp_path / "doc.md").write_text(
        "## `harness/`\n\n| module | job |\n|---|---|\n| `core/paths.py` | ok |\n| `core/nope.py` | gone |\n"
        "- `absent.py`: a module entry; `prose.py` is not one\n\n"
        "## Other\n\n`scripts/demo.sh`, `scripts/gone.sh`, `runs/bench/x.json`, `manifest-<run id>.json`, "
        "`core/paths.py`, `OUT/merged/`, `shard-KKK/x`; run `make demo` or `make no-such-target`, make every step, "
        "`make bench-*`.\n"
    )
    found = [(p, pkg) for _, p, pkg in named_paths("doc.md", tmp_path)]
    assert found == [
        ("harness/", "harness/"),
        ("core/paths.py", "harness/"),
        ("core/nope.py", "harness/"),
        ("absent.py", "harness/"),
        ("scripts/demo.sh", None),
        ("scripts/gone.sh", None),
        ("core/paths.py", None),
    ]
    assert [p for p, pkg in found if not resolves(p, pkg, tmp_path)] == [
        "core/nope.py",
        "absent.py",
        "scripts/gone.sh",
        "core/paths.py",
    ]
    targets = [t for _, t in named_targets("doc.md", tmp_path)]
    assert targets == ["demo", "no-such-target"] and "no-such-target" not in make_targets()
    readme = "## What the kit holds\n\n| path | what |\n|---|---|\n| `executor/` | x |\n| `requirements*.lock` | y |\n"
    assert unlisted_top_level(readme, {"executor/", "bench/", "requirements.lock", "Makefile"}) == [
        "Makefile",
        "bench/",
    ]
