"""Asking the class for a typed formula ("derive dx"): what can be asked, each student's box and
verdict, and the room's mistakes at a glance.

A typed question is a question without options (Store.ask_derivation). Each student's formula
is judged in their own session by the derive page's judge (ln_core.derivation through
ui.server.compute), on the one vector the instructor had when asking, and only its category
goes to the room: correct, the slip the judge named, wrong without a name, unreadable. A
student's text is shown to nobody but them and, when they open it, the instructor, and always
literally (a table cell or `literal`), never as Markdown, HTML or LaTeX: what is typeset is the
lab's own reading of the formula, built from its parse tree.
"""

from __future__ import annotations

import csv
import html
import io
import math
import textwrap
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ln_core.derivation import LAYERNORM, TARGETS, DerivationCheck, read
from ln_core.formula import FormulaError, to_latex
from ln_core.formula.tokens import MAX_CHARS
from teaching.inputs import Inputs
from ui.entry.literal import literal
from ui.export.download import download
from ui.live import connect, tally
from ui.live.rules import Refused, check_formula
from ui.live.store import (
    Asked,
    Derivation,
    FormulaAnswer,
    Histogram,
    Judged,
    Question,
    StoreUnavailable,
    categories,
)
from ui.server import compute
from ui.session import clicks, share, state

LIVE = "live_formula_live"  # the instructor shows the room's answers before the reveal
REFRESH_S = 1.0
LEFT_SIDES = {"dgamma": r"\mathrm{d}\gamma", "dbeta": r"\mathrm{d}\beta"}
LABEL_WIDTH = 40  # characters of a category's name per line on the chart


def choices() -> dict[str, str]:
    """Title -> gradient, for every gradient the derive page checks."""
    return {f"Derive {target.label}": key for key, target in TARGETS.items()}


def derivation(target: str) -> tuple[str, Derivation]:
    """The prompt and what the answers are judged on: the instructor's first vector (the one
    the lab's other questions are about) and their derive page's ε and γ settings."""
    layer = state.inputs().affine_as_numbers()
    first = layer.vector((0,) * (layer.x.ndim - 1))
    s = st.session_state
    with_eps, scalar = bool(s.get("derive_eps", True)), bool(s.get("derive_scalar", False))
    model = ("with ε" if with_eps else "without ε") + (
        ", one scalar γ and β" if scalar else ", one γ and β per feature"
    )
    prompt = (
        f"Type {TARGETS[target].label.split(' — ')[0]} = … on your screen: the right-hand side, "
        f"as on Check your derivation ({model}). N is D, the features of one vector."
    )
    numbers = [tuple(float(v) for v in np.ravel(a)) for a in (first.x, first.gamma, first.beta,
                                                             first.dout)]  # fmt: skip
    return prompt, Derivation(target, with_eps, scalar, *numbers, eps=float(first.eps))


def check(spec: Derivation, text: str) -> DerivationCheck:
    """The derive page's verdict on `text`, on the question's vector and the probes."""
    inputs = Inputs(*(np.array(a) for a in (spec.x, spec.gamma, spec.beta, spec.dout)),
                    eps=spec.eps, dtype="float64")  # fmt: skip
    return compute.derivation(inputs, spec.target, text, spec.with_eps, spec.scalar_gamma)


def judged(result: DerivationCheck) -> Judged:
    """The category a verdict counts in: correct, a named slip, wrong, or unreadable."""
    if result.error is not None:
        return Judged("unreadable")
    mistake = result.mistake.name if result.mistake is not None else ""
    return Judged(result.verdict, mistake if result.verdict == "wrong" else "")


def _words(text: str, limit: int = 1200) -> str:
    """Text for a Markdown message with every Markdown character shown as itself (the
    quoting of a student's text, without the quotes)."""
    return literal(text, limit=limit)[1:-1]


# The student's side.


def _reading(target: str, text: str) -> None:
    """How the lab reads the text, typeset from its parse tree, or what stops it and what to
    type instead (the grammar's own message)."""
    tree = read(text, target)
    if isinstance(tree, FormulaError):
        where = f"At character {tree.position + 1}"
        if tree.found:
            where += f" ({literal(tree.found)})"
        st.error(f"{where}: {_words(tree.problem, 400)}", icon=":material/error:")
        return
    left = LEFT_SIDES.get(target) or LAYERNORM.latex_of(target)
    st.latex(f"{left} = {to_latex(tree, LAYERNORM)}")


def revealed(
    code: str, question: Question, histogram: Histogram | None, mine: FormulaAnswer | None
) -> None:
    """Once revealed: the student's own verdict first, then the room's histogram."""
    _verdict(code, question, mine)
    if histogram and any(histogram.values()):
        st.plotly_chart(chart(histogram), key="live_formula_chart",
                        config={"displayModeBar": False})  # fmt: skip


def sent(code: str, question: Question, mine: FormulaAnswer) -> None:
    st.success("Your formula is in; your verdict comes when the instructor reveals it.")
    _reading(_spec(code, question).target, mine.text)


def box(code: str, question: Question, tell: Callable[[Question, str], None]) -> None:
    """The box, how the lab reads what is typed (before it is sent), and Send; `tell` keeps
    what this tab is told about its formula."""
    key = f"live_formula_{question.id}_{question.round}"
    st.text_input("Your formula", key=key, max_chars=MAX_CHARS + 1, placeholder="rstd * (…)")
    typed = st.session_state.get(key) or ""
    if typed.strip():
        _reading(_spec(code, question).target, typed)
    # The bar's timer can deliver this click twice (ui/session/clicks.py); the run of the first
    # delivery draws no Send button, so the second finds this drawing already acted on.
    send = clicks.once(f"live_send_{question.id}_{question.round}", _send, code, question, key,
                       tell)  # fmt: skip
    st.button("Send", **send, type="primary", disabled=not typed.strip())


def _spec(code: str, question: Question) -> Derivation:
    return connect.store().derivation(code, question.id)


def _send(code: str, question: Question, key: str, tell: Callable[[Question, str], None]) -> None:
    text = st.session_state.get(key) or ""
    said = ""
    try:
        check_formula(text)
        result = judged(check(_spec(code, question), text))
        connect.store().answer(code, connect.browser_id(), question.id, question.round, text,
                               result)  # fmt: skip
    except Refused as err:
        said = f"Your formula was not sent: {err}"
    except StoreUnavailable as err:
        said = f"Your formula was not counted. {connect.unavailable(err)}"
    tell(question, said)


def _verdict(code: str, question: Question, mine: FormulaAnswer | None) -> None:
    """The student's own verdict, as the derive page words it: the slip by name and why."""
    if mine is None:
        st.info("You sent no formula in this round.")
        return
    result = check(_spec(code, question), mine.text)
    if result.error is not None:
        _reading(result.target, mine.text)
        st.caption("The lab could not read your formula, so it counted as unreadable.")
        return
    st.latex(f"{LEFT_SIDES.get(result.target) or LAYERNORM.latex_of(result.target)} = "
             f"{result.latex}")  # fmt: skip
    summary = _words(result.summary, 600)
    if result.verdict == "correct":
        st.success(f"Right. {summary}", icon=":material/check_circle:")
    elif result.verdict != "wrong":
        st.info(summary)
    elif result.mistake is not None:
        mistake = result.mistake
        st.warning(
            f"**The mistake:** {_words(mistake.name, 600)} {_words(mistake.explanation)}",
            icon=":material/lightbulb:",
        )
    else:
        part = f" The part that differs is {result.differs_most}." if result.differs_most else ""
        st.warning(f"{summary} It makes none of the slips the lab knows.{part}",
                   icon=":material/search:")  # fmt: skip


# The instructor's side.


def chart(histogram: Histogram) -> go.Figure:
    """The room's typed formulas by category, one bar per round: each bar's count and share
    of its round's answers; correct first, then the named slips, the most common first."""
    order = categories(histogram)
    labels = [_wrapped(judged) for judged in order]
    top = max((n for counts in histogram.values() for n in counts.values()), default=0)
    # Plotly gives each category the same height: the tallest label (or a bar per round) sets it.
    lines = max((label.count("<br>") + 1 for label in labels), default=1)
    slot = max(26 * len(histogram), 16 * lines + 12)

    def text(counts: dict[Judged, int]) -> list[str]:
        total = sum(counts.values())
        return [f"{counts.get(j, 0)} · {tally.share(counts.get(j, 0), total)}" for j in order]

    fig = go.Figure(
        [
            go.Bar(
                name=f"round {number}",
                y=labels,
                x=[counts.get(judged, 0) for judged in order],
                orientation="h",
                text=text(counts),
                textposition="outside",
                cliponaxis=False,  # a phone's narrow plot would cut the share off
                marker_color=tally.ROUND_COLOURS[(number - 1) % len(tally.ROUND_COLOURS)],
                hovertemplate="%{text}<extra>" + f"round {number}</extra>",
            )
            for number, counts in sorted(histogram.items())
        ]
    )
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels,
                     autorange="reversed")  # fmt: skip
    fig.update_xaxes(title="answers", tick0=0, dtick=max(1, math.ceil(top / 5)), tickformat="d",
                     range=[0, max(top, 1) * 1.5])  # fmt: skip
    fig.update_layout(
        barmode="group",
        height=70 + slot * max(1, len(order)),
        margin=dict(l=10, r=30, t=10, b=40),
        legend_orientation="h",
    )
    return fig


def _wrapped(judged: Judged) -> str:
    # The lab's own words, escaped all the same: Plotly reads a few HTML tags in labels.
    label = judged.label[:1].upper() + judged.label[1:]
    if judged.verdict == "correct":
        label += " ✓"
    return "<br>".join(html.escape(line) for line in textwrap.wrap(label, LABEL_WIDTH))


def _commonest(histogram: Histogram) -> tuple[Judged, int, int] | None:
    """The latest round's most common named slip, its answers and the round's; None if none."""
    latest = histogram.get(max(histogram, default=0), {})
    named = [(n, j) for j, n in latest.items() if j.mistake and n]
    if not named:
        return None
    count, judged = max(named, key=lambda pair: pair[0])
    return judged, count, sum(latest.values())


def most_common(histogram: Histogram) -> str:
    """The room's most common named slip in the latest round, in words ("" for none)."""
    found = _commonest(histogram)
    if found is None:
        return ""
    judged, count, total = found
    return f"Most common slip: {judged.mistake} ({count} of {total} answers)."


def _slipped(
    code: str, secret: str, question: Question, histogram: Histogram
) -> DerivationCheck | None:
    """The verdict on one formula of the latest round's most common slip, if it has a
    counterexample: what the projector redoes. The formula's text goes no further."""
    found = _commonest(histogram)
    if found is None:
        return None
    answers = connect.store().answers(code, secret, question.id)
    latest = max(histogram)
    text = next(a.text for a in answers if a.judged == found[0] and a.round == latest)
    result = check(_spec(code, question), text)
    return result if result.counterexample is not None and result.differences else None


def common_slip(code: str, secret: str, question: Question, histogram: Histogram) -> bool:
    """The most common slip redone on the projector: the input that shows it as numbers,
    the slip's value beside the true one where they differ most, and the link that opens
    the input in the lab; no text is shown. Whether there is one to redo."""
    result = connect.shown(lambda: _slipped(code, secret, question, histogram))
    if result is None:
        return False
    example = result.counterexample
    st.markdown(f"**Redo the most common slip by hand**: the input “{_words(example.label)}”, "
                f"ε = {example.eps:.6g}.")  # fmt: skip
    rows = example.rows()
    entries = range(example.x.shape[1])
    st.dataframe({"": list(rows), **{f"entry {j + 1}": [f"{r[j]:.6g}" for r in rows.values()]
                                     for j in entries}}, hide_index=True)  # fmt: skip
    gaps = result.differences
    st.dataframe({"vector": [d.vector + 1 for d in gaps], "entry": [d.entry + 1 for d in gaps],
                  "with the slip": [f"{d.yours:.6g}" for d in gaps],
                  "true": [f"{d.true:.6g}" for d in gaps]}, hide_index=True)  # fmt: skip
    link = share.input_link(example.x, example.gamma, example.beta, example.dy, example.eps)
    st.link_button("Open this input in the lab", link, icon=":material/open_in_new:")
    return True


def redo_question(code: str, secret: str) -> Asked:
    """A vote that follows the histogram: the true value at the entry where the room's most
    common slip is farthest off, on its counterexample, with the slip's value among the
    choices. Refused when the typed question revealed has no such slip."""
    status = connect.store().status(code, secret)
    question = status.question
    if question is None or question.asked.options or not question.revealed:
        raise Refused("Reveal a typed question first: the vote redoes its most common slip.")
    result = _slipped(code, secret, question, status.histogram)
    if result is None:
        raise Refused("No slip of this question has an input to redo.")
    example, gap = result.counterexample, result.differences[0]
    # (+ 0.0: a -0.0 would be a choice "-0" beside "0".)
    values = {
        f"{v + 0.0:.4g}": v for v in (gap.true, gap.yours, -gap.true, 2 * gap.true - gap.yours)
    }
    options = sorted(values, key=values.get)
    if f"{gap.true + 0.0:.4g}" == f"{gap.yours + 0.0:.4g}":
        raise Refused("The slip and the true value agree to 4 digits there: nothing to vote on.")
    symbol = TARGETS[result.target].label.split(" — ")[0]
    where = f"vector {gap.vector + 1}, " if example.x.shape[0] > 1 else ""
    shown = "; ".join(f"{name} = ({', '.join(f'{v:.6g}' for v in row)})"
                      for name, row in example.rows().items())  # fmt: skip
    prompt = (
        f"Redo it by hand: with {shown} and ε = {example.eps:.6g}, what is the true {symbol} "
        f"at {where}entry {gap.entry + 1}?"
    )
    explanation = (
        f"The true value is {gap.true:.6g}; the room's most common slip "
        f"({result.mistake.name.rstrip('.')}) gives {gap.yours:.6g}."
    )
    return Asked(f"Redo the slip: {symbol}", prompt, tuple(options),
                 options.index(f"{gap.true + 0.0:.4g}"), explanation)  # fmt: skip


def moved(histogram: Histogram) -> str:
    """How many were right, round by round, in words."""
    return "; ".join(
        f"round {number}: {counts.get(Judged('correct'), 0)} of {sum(counts.values())} right"
        if counts
        else f"round {number}: no answers"
        for number, counts in sorted(histogram.items())
    )


def answers_csv(answers: list[FormulaAnswer]) -> str:
    """The typed formulas, one line each in the order given, with no name nor browser."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["answer", "round", "verdict", "slip", "formula"])
    for number, answer in enumerate(answers, start=1):
        judged = answer.judged
        row = [number, answer.round, judged.verdict, judged.mistake, answer.text]
        writer.writerow([tally.cell(value) for value in row])
    return out.getvalue()


def instructor(code: str, secret: str, question: Question) -> None:
    """The Class page's typed question: once revealed (or live, if the instructor turns it
    on), the room's histogram and its most common slip; the texts only when opened. Only the
    live histogram reruns on a timer: the page's count already does every second, and each
    timer more keeps a loaded server's page from ever falling quiet."""
    if not question.revealed:
        st.toggle("Show the room's answers as they come in", key=LIVE)
    if not question.revealed and st.session_state.get(LIVE):
        _live_room(code, secret)
    else:
        _room(code, secret)


def _room(code: str, secret: str) -> None:
    status = connect.shown(lambda: connect.store().status(code, secret))
    if status is None:
        return
    question, histogram = status.question, status.histogram
    if question is None or question.asked.options:
        return  # the class moved on; the page's next run draws the new question
    if not any(histogram.values()):
        st.caption("No formula sent yet.")
    elif question.revealed or st.session_state.get(LIVE):
        st.plotly_chart(chart(histogram), key="live_formula_room",
                        config={"displayModeBar": False})  # fmt: skip
        st.caption(f"{moved(histogram)}. {most_common(histogram)}".strip())
    else:
        st.caption("The room's answers show here when you reveal them.")
    opened = st.toggle("Open the typed formulas (not for the projector)",
                       key=f"live_formula_open_{question.id}")  # fmt: skip
    if opened:
        answers = connect.shown(lambda: connect.store().answers(code, secret, question.id))
        if answers is None:
            return
        # A table shows each text as typed: no Markdown, HTML or LaTeX is read in a cell.
        st.dataframe(
            {
                "round": [a.round for a in answers],
                "category": [a.judged.label for a in answers],
                "formula, as typed": [a.text for a in answers],
            },
            hide_index=True,
        )
        download(st, "Download the typed formulas (CSV)", answers_csv(answers),
                 f"class_{code}_formulas_{question.id}.csv", "text/csv", "download")  # fmt: skip


_live_room = st.fragment(run_every=REFRESH_S)(_room)
