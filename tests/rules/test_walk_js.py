"""No arithmetic in JavaScript (issue 36): every number the Stepper shows is ln_core's,
formatted in Python (pages/stepper/walk.py); the browser's walk.js only picks the step.

Read from walk.js's source with its strings and comments removed: no call that turns a shown
number back into one (parseFloat, Number(...) beyond the step's own controls, toFixed, Math
beyond min/max), and every arithmetic operator's operands are step counting (the step, the
number of steps or entries, an index) or the page's geometry (a box's position and size), never
a field that carries the lab's numbers (shown, full, value, gradient, rows, ...).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WALK_JS = ROOT / "pages" / "stepper" / "walk.js"

# The names an arithmetic operand may end in: counting steps and entries, and where a box or
# the page's header is (geometry the browser measures, or the graph's layout from graph.py).
COUNTING = {"step", "length", "index", "n", "tries", "shownEntries", "number", "j"}
GEOMETRY = {
    "x", "y", "w", "h", "left", "top", "bottom", "right", "below", "natural", "shift",
    "shifted", "width", "height",
}  # fmt: skip
# The only conversions to a number: the step a slider or the Jump-to list holds.
CONVERSIONS = {"Number(slider.value)", "Number(jump.value)"}
FORBIDDEN_CALLS = re.compile(
    r"\b(parseFloat|parseInt|toFixed|toPrecision|toExponential|toLocaleString|BigInt)\b"
    r"|\bMath\.(?!min\b|max\b)\w+"
    r"|\+\s*[\w$.\[\]]*\b(shown|full|value|gradient)\b"  # a unary + turning a string into a number
)
_OPERAND = r"[\w$]+(?:\.[\w$]+|\[[^\[\]]*\])*(?:\([^()]*\))?|\([^()]*\)"
_ARITHMETIC = re.compile(
    rf"(?P<left>{_OPERAND})\s*(?<![+\-*/%=<>!&|?:,(])(?P<op>\*\*|[*/%]|\+(?![+=])|-(?![-=]))(?!=)"
    rf"(?=\s*(?P<right>{_OPERAND}))"  # a lookahead: in a - b * c, b is read by both operators
)
_KEYWORDS = {"return", "typeof", "case", "of", "in", "new", "void", "await", "yield"}


def code_only(source: str) -> str:
    """`source` without comments, string and regex literals (a template literal's ${...} kept),
    so that class names like "lnlab-part-head" and prose are not read as arithmetic."""
    out, i = [], 0
    while i < len(source):
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else len(source)
        elif source.startswith("/*", i):
            i = source.index("*/", i) + 2
        elif c in "\"'":
            end = i + 1
            while source[end] != c:
                end += 2 if source[end] == "\\" else 1
            out.append('""')
            i = end + 1
        elif c == "`":
            i += 1
            out.append('""')
            while source[i] != "`":
                if source.startswith("${", i):
                    depth, start = 1, i + 2
                    i += 2
                    while depth:
                        depth += {"{": 1, "}": -1}.get(source[i], 0)
                        i += 1
                    out.append(" (" + code_only(source[start : i - 1]) + ") ")
                else:
                    i += 2 if source[i] == "\\" else 1
            i += 1
        elif c == "/" and re.search(r"[(,=:!&|?]\s*$", "".join(out[-3:])):
            end = i + 1
            while source[end] != "/":
                end += 2 if source[end] == "\\" else 1
            i = end + 1
            while i < len(source) and source[i].isalpha():
                i += 1
            out.append('""')
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _names(operand: str) -> list[str]:
    """The name an operand ends in (`walk.steps[n - 1].backward`: "backward"), or every name in
    a parenthesised one."""
    if operand.startswith("("):
        return re.findall(r"[A-Za-z_$][\w$]*", re.sub(r"\[[^\]]*\]", "", operand))
    names = re.findall(r"[A-Za-z_$][\w$]*", re.sub(r"\[[^\]]*\]|\([^()]*\)", "", operand))
    return names[-1:]


def problems(source: str) -> list[str]:
    """Each line of `source` that converts or computes with a value that is not a count."""
    found = []
    for number, line in enumerate(code_only(source).splitlines(), 1):
        converted = re.findall(r"\bNumber\([^()]*\)", line)
        found += [f"{number}: {c}" for c in converted if c not in CONVERSIONS]
        found += [f"{number}: {m.group(0)}" for m in FORBIDDEN_CALLS.finditer(line)]
        for match in _ARITHMETIC.finditer(line):
            for side in ("left", "right"):
                operand = match.group(side)
                for name in _names(operand):
                    if name not in COUNTING | GEOMETRY | _KEYWORDS:
                        said = " ".join(match.group("left", "op", "right"))
                        found.append(f"{number}: {said} ({name!r} is not a count)")
    return found


def test_walk_js_does_no_arithmetic_on_the_labs_numbers():
    found = problems(WALK_JS.read_text(encoding="utf-8"))
    assert not found, "walk.js computes with the lab's numbers (format them in walk.py):\n" + (
        "\n".join(found)
    )


def test_the_rule_catches_arithmetic_planted_in_walk_js():
    """The rule above is meaningful: each planted line, added to walk.js, is refused."""
    source = WALK_JS.read_text(encoding="utf-8")
    planted = (
        "const doubled = value * 2;",
        "const shown = parseFloat(block.shown[j]);",
        "const sum = info.value + info.gradient;",
        "cell.textContent = String(block.full[j] - 1);",
        "const x2 = Number(check.line);",
        "const r = Math.round(s.rows[0][1]);",
        "const g = +info.gradient;",
        "const half = `${block.shown[j] / 2}`;",
        "const err = (s.checks[0].why) * 10;",
    )
    for line in planted:
        assert problems(source + "\n" + line + "\n"), f"the rule lets {line!r} through"
