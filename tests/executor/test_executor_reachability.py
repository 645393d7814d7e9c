"""Issue 46, item 1: layer 1 holds alone against the real standard-library modules.

The walker (tests/adversarial/reachability.py) runs on the process backend with layer 2 off and
walks every path from what a program can name through the attribute names layer 1 admits, the
calls with no arguments and the first items of containers, to ``DEPTH`` steps. Shown failing on
main c14e538 (its attribute check was a deny-list): depth 4, 7,960 paths, 6,271 objects, one
failing path, ``calendar._locale`` (the locale module, from which ``.encodings.codecs.open`` is
three steps on); depth 6: 49,258 paths, the same frontier.
"""

from __future__ import annotations

import ast
import calendar
import datetime
import time

from executor import child, policy, static_check
from tests.adversarial import reachability


def test_no_path_from_what_a_program_can_name_reaches_a_capability():
    report = reachability.walk()
    assert report["failures"] == [], report["failures"]
    # the walk really walked: every root kind and thousands of paths (7,103 at depth 4 here)
    assert report["paths"] > 5000 and report["objects"] > 4000, report
    starts = {p.split(".", 1)[0] for p in report["module_paths"]}
    assert starts == set(policy.ALLOWED_MODULES), starts


def test_every_attribute_of_the_honest_corpus_is_on_the_allow_list_and_each_name_exists():
    """The allow-list is the public surface honest programs use: every name the honest corpus and
    the CPU demo's programs name is on it, and each listed name is a public attribute of an
    allowed module's proxy or of a type a program can hold."""
    from bench import honest_programs

    sources = [h.source for h in honest_programs.CORPUS] + [s for _n, s in honest_programs.demo_programs()]
    used = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                used.update(a.name for a in node.names if a.name != "*")
    assert used <= set(policy.ALLOWED_ATTRIBUTES), sorted(used - set(policy.ALLOWED_ATTRIBUTES))
    surface = set()
    for name in policy.ALLOWED_MODULES:
        surface.update(child.exposed_names(__import__(name)))
    for t in (
        int,
        float,
        complex,
        bool,
        str,
        bytes,
        bytearray,
        list,
        tuple,
        dict,
        set,
        frozenset,
        range,
        slice,
        datetime.date,
        datetime.datetime,
        datetime.time,
        datetime.timedelta,
        datetime.timezone,
        datetime.tzinfo,
        time.struct_time,
        calendar.Calendar,
        calendar.TextCalendar,
        calendar.HTMLCalendar,
        type(calendar.day_name),
        type(calendar.month_name),
        Exception,
        UnicodeDecodeError,
        StopIteration,
        KeyError,
        NameError,
        AttributeError,
        ImportError,
    ):
        surface.update(n for n in dir(t) if not n.startswith("_"))
    listed = set(policy.ALLOWED_ATTRIBUTES)
    assert listed <= surface, sorted(listed - surface)
    assert not listed & (set(policy.FORBIDDEN_ATTRIBUTES) | set(policy.MODULE_HIDDEN_NAMES))
    assert len(policy.ALLOWED_ATTRIBUTES) == len(listed)


def test_a_name_off_the_allow_list_is_refused_on_every_path():
    """Deny by default, through every way of naming an attribute. Each of these passed layer 1
    on main c14e538 (a private or imported name of the real module)."""
    for source in (
        "import calendar\nx = calendar._locale\n",
        "from calendar import _locale\n",
        "import calendar\nx = calendar.repeat\n",
        "x = '{0._locale}'.format(1)\n",
        "import calendar\nmatch calendar:\n    case object(_locale=l):\n        pass\n",
        "import time\ntime.sleep(1)\n",
    ):
        problems = [str(v) for v in static_check.check_source(source)]
        assert any("allow-list" in p for p in problems), (source, problems)
