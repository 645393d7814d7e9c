"""Layer 1 on its own, in-process: the AST policy accepts ordinary calculator programs and names
the construct it rejects."""

from __future__ import annotations

import pytest

from executor import policy
from executor.static_check import check_source

GOOD = [
    "import math\nanswer = round(math.sqrt(2) * 3, 2)\n",
    "from datetime import date, timedelta\nanswer = date(2020, 1, 1) + timedelta(days=280)\n",
    "import datetime as dt\nd = dt.datetime.strptime('02/24/2000', '%m/%d/%Y')\nanswer = d.date()\n",
    "def f(x, *, y=2):\n    return x * y\nanswer = f(3)\n",
    "vals = [1, 2, 3]\nanswer = sum([v * v for v in vals])\n",
    "for _ in range(3):\n    pass\nanswer = 1\n",
    "answer = '{:.2f} and {0}'.format(1.0) if False else 1\n",
    "print('BMI is {} kg/m2'.format(20.5))\nanswer = 20.5\n",
    "from calendar import *\nanswer = monthrange(2024, 2)[1]\n",
    "try:\n    x = 1 / 0\nexcept ZeroDivisionError as err:\n    x = 0\nanswer = x\n",
    "match 3:\n    case 3:\n        answer = 1\n",
    "ｘ = 2\nanswer = x\n",  # NFKC: fullwidth x is x, harmless
    "type = 'male'\nanswer = 1 if type == 'male' else 0\n",  # the program's own variable
    "def f(input):\n    return input * 2\nanswer = f(2)\n",
    # issue 33: what the narrowed rules let through (no capability in any of them)
    "_now = 5\ndef _helper(_x, *, _y=1):\n    return _x * _y\nanswer = _helper(_now, _y=2)\n",
    "import math as _m\nfrom math import floor as _floor\nanswer = _floor(_m.pi)\n",
    "try:\n    x = 1 / 0\nexcept ZeroDivisionError as _e:\n    x = 0\nanswer = x\n",
    "x = _private = 1\nanswer = x\n",
    "def main():\n    return 2\nif __name__ == '__main__':\n    answer = main()\n",
    "total = 0\ndef add(p):\n    global total\n    total += p\nadd(3)\nanswer = total\n",
    "def outer():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n    inc()\n    return n\nanswer = outer()\n",
    "answer = float('{0.real:.2f}'.format(2.5))\n",
    "answer = int('{0[1]}'.format([1, 2]))\n",
    "answer = '{:{0.real}}'.format(1) if False else 1\n",
    "__x = 1\nanswer = __x\n",
]

BAD = [
    ("import os\n", "import of 'os'"),
    ("import math.sys\n", "import of 'math.sys'"),
    ("from os import path\n", "import from os"),
    ("from . import x\n", "import from ."),
    ("from datetime import sys\n", "'sys' is not allowed"),
    ("x = ().__class__\n", "'__class__' is a dunder attribute"),
    ("x = __builtins__\n", "'__builtins__' is a dunder name"),
    ("__name__ = 'x'\n", "'__name__' is a dunder name"),
    ("def f(__a__):\n    pass\n", "'__a__' is a dunder name"),
    ("def __del__():\n    pass\n", "'__del__' is a dunder name"),
    ("dict(__class__=1)\n", "'__class__' is a dunder name"),
    ("import math as __m__\n", "'__m__' is a dunder name"),
    ("from math import __loader__\n", "'__loader__' is a dunder attribute"),
    ("def f():\n    global __builtins__\n", "'__builtins__' is a dunder name"),
    ("try:\n    pass\nexcept Exception as __e__:\n    pass\n", "'__e__' is a dunder name"),
    ("x = len._\uff3fself\uff3f\uff3f\n", "'__self__' is a dunder attribute"),
    ("\uff45\uff56\uff41\uff4c('1')\n", "'eval' is not allowed"),
    ("g = (x for x in [1])\n", "generator expressions"),
    ("def g():\n    yield 1\n", "generators (yield)"),
    ("def g():\n    yield from [1]\n", "yield from"),
    ("async def g():\n    pass\n", "async functions"),
    ("class C:\n    pass\n", "class definitions"),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", "except*"),
    ("x = getattr(1, 'real')\n", "'getattr' is not allowed"),
    ("def f():\n    global getattr\n    getattr = len\n    return getattr\n", "'getattr' is not allowed"),
    ("x = type(1)\n", "'type' is not allowed"),
    ("x = vars()\n", "'vars' is not allowed"),
    ("x = '{0.__class__}'.format(1)\n", "'__class__' is a dunder attribute"),
    ("x = '{0[0].__class__}'.format([1])\n", "'__class__' is a dunder attribute"),
    ("x = '{:{0.__class__}}'.format(1)\n", "'__class__' is a dunder attribute"),
    ("x = '{0.f_back}'.format(1)\n", "'f_back' is not allowed"),
    ("f = 'x'\nf.format(1)\n", "only allowed on a string literal"),
    ("x = '{x}'.format_map({})\n", "'format_map' is not allowed"),
    ("x = e.obj\n", "'obj' is not allowed"),
    ("x = g.gi_frame\n", "'gi_frame' is not allowed"),
    ("x = f.f_back\n", "'f_back' is not allowed"),
    ("x = int.mro()\n", "'mro' is not allowed"),
    ("import datetime\nx = datetime.sys\n", "'sys' is not allowed"),
    ("match 1:\n    case int(__class__=c):\n        pass\n", "'__class__' is a dunder attribute"),
]


@pytest.mark.parametrize("source", GOOD)
def test_static_policy_accepts_ordinary_programs(source):
    assert check_source(source) == []


@pytest.mark.parametrize("source,fragment", BAD, ids=[b[1] for b in BAD])
def test_static_policy_rejects_and_names_the_construct(source, fragment):
    violations = check_source(source)
    assert violations, source
    assert any(fragment in str(v) for v in violations), [str(v) for v in violations]


def test_violation_carries_line_number():
    v = check_source("x = 1\ny = 2\nimport os\n")
    assert v[0].line == 3 and "(line 3)" in str(v[0])


def test_syntax_error_is_not_a_policy_violation():
    with pytest.raises(SyntaxError):
        check_source("answer = (\n")


def test_source_limits_and_type():
    assert "longer than" in str(check_source("#" * (policy.MAX_SOURCE_CHARS + 1))[0])
    assert "NUL" in str(check_source("answer = 1\x00")[0])
    with pytest.raises(TypeError, match="must be str"):
        check_source(b"answer = 1")


def test_deeply_nested_program_does_not_crash_the_checker():
    """Nesting past policy.MAX_AST_DEPTH is one clear violation (the checker walks iteratively)."""
    src = "answer = " + "[" * 150 + "1" + "]" * 150 + "\n"
    assert [str(v) for v in check_source(src)] == [
        f"the program is nested more than {policy.MAX_AST_DEPTH} levels deep (policy.MAX_AST_DEPTH)"
    ]
    depth = policy.MAX_AST_DEPTH - 3  # Module > Assign > List * depth > Constant: exactly the bound
    assert check_source("answer = " + "[" * depth + "1" + "]" * depth + "\n") == []
    assert check_source("answer = " + "[" * (depth + 1) + "1" + "]" * (depth + 1) + "\n") != []
