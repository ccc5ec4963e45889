"""Drawing a checked derivation: how the lab read the formula, the verdict and why, the input
that breaks a wrong formula with the entries that differ there, and the mistake it makes.

Everything shown comes from the DerivationCheck; the student's typed text only appears
through `literal`, never as Markdown or LaTeX.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ln_core.audit.symbols import GRADIENT_NAMES
from ln_core.derivation import LAYERNORM, TARGETS, DerivationCheck, ProbeResult, usable
from ln_core.verdict import agreeing_digits
from teaching.verdicts import percent
from ui.draw.audit_view import ICONS, plain
from ui.entry.literal import literal

LEFT_SIDES = {"dgamma": r"\mathrm{d}\gamma", "dbeta": r"\mathrm{d}\beta"}


def names_list(target: str) -> None:
    """The names a formula for `target` may use, with what each one is."""
    allowed = usable(target)
    rows = [
        f"| {' · '.join(plain(s) for s in symbol.spellings)} | {plain(symbol.meaning)} |"
        for symbol in LAYERNORM.symbols
        if symbol.name not in GRADIENT_NAMES or symbol.name in allowed
    ]
    rows += [
        f"| {' · '.join(plain(s) for s in f.spellings)}( … ) | {plain(f.meaning)} |"
        for f in LAYERNORM.functions
    ]
    st.markdown(
        "| name | is |\n|---|---|\n" + "\n".join(rows) + "\n\n"
        "Also: \\+ − \\* / ^ or \\*\\* (powers), ² ³ ½, Σ (sums the bracket right after "
        "it, else the product after it; Σ\\_j and its bounds are read), √, brackets ( ) [ ] { }. "
        "A product may omit its sign (2 γ x̂); x\\_i reads as x. var( … ), std( … ), E[ … ] "
        "and x̄ are statistics over the features; dL/dy and ∂L/∂y are dy. LaTeX: `\\hat{x}`, "
        "`\\frac{a}{b}`, `\\sum`, `\\sqrt{…}`, `\\cdot` and Greek letters. N is D, the "
        "features of one vector."
    )


def outcome(result: ProbeResult) -> str:
    """A verdict in plain words with a number a student knows: "wrong, off by 50 %", "right,
    agrees to 15 digits"; the reasoning stays one click away."""
    error = result.error
    if result.verdict == "wrong" and error is not None:
        return f"wrong, off by {percent(error)}"
    if result.verdict == "correct" and error is not None:
        if error == 0:
            return "right, agrees exactly"
        digits = agreeing_digits(error, 1.0)
        return f"right, agrees to {digits} digit{'s' if digits != 1 else ''}"
    return {"correct": "right", "wrong": "wrong"}.get(result.verdict, result.verdict)


def _error(check: DerivationCheck) -> None:
    error = check.error
    where = f"At character {error.position + 1}"
    if error.found:
        where += f" ({literal(error.found)})"
    st.error(f"{where}: {plain(error.problem)}", icon=":material/error:")
    if error.kind == "unknown-name":
        st.caption(
            "Use one of the names listed beside the box; letters that look alike in "
            "another alphabet are different names."
        )


def _inputs(check: DerivationCheck, link: str | None) -> None:
    """The probe that shows the formula wrong, as numbers to redo by hand, and its link."""
    example = check.counterexample
    if example is None:
        return
    st.markdown(
        f"**Redo it by hand.** The input “{plain(example.label)}”, with "
        f"ε = {example.eps:.6g}: compute your formula and the true value on it, and compare "
        "them with the table below."
    )
    rows = example.rows()
    st.dataframe(
        pd.DataFrame(
            {
                f"entry {j + 1}": [f"{row[j]:.6g}" for row in rows.values()]
                for j in range(example.x.shape[1])
            },
            index=list(rows),
        )
    )
    if link is not None:
        st.link_button("Open this input in the lab", link, icon=":material/open_in_new:")
        st.caption("The link opens the Stepper on these numbers, to follow them node by node.")


def _differences(check: DerivationCheck) -> None:
    if not check.differences:
        return
    st.markdown(f"Where it differs on “{plain(check.exposed_by)}”, largest gaps first:")
    st.dataframe(
        pd.DataFrame(
            {
                "vector": [d.vector + 1 for d in check.differences],
                "entry": [d.entry + 1 for d in check.differences],
                "your formula": [f"{d.yours:.6g}" for d in check.differences],
                "true value": [f"{d.true:.6g}" for d in check.differences],
            }
        ),
        hide_index=True,
    )


def _unnamed(check: DerivationCheck) -> str:
    """What the lab can say about a wrong formula that makes no mistake it knows."""
    text = "It makes none of the slips the lab knows."
    if check.differs_most is not None:
        text += f" The part that differs is {plain(check.differs_most)}"
        text += ": the gap is nearly a multiple of it. The table below shows on which entries."
    else:
        text += (
            " The gap is spread over more than one part; the table below shows on which entries."
        )
    return text


def draw(check: DerivationCheck, link: str | None = None) -> None:
    """The whole result, in reading order; `link` opens the counterexample in the lab."""
    if check.latex is not None:
        st.markdown("**How the lab reads your formula**")
        left = LEFT_SIDES.get(check.target) or LAYERNORM.latex_of(check.target)
        st.latex(f"{left} = {check.latex}")
    if check.error is not None:
        _error(check)
        return
    st.header(f"{check.verdict.capitalize()}")
    icon = ICONS[check.verdict]
    # st.error stays for a formula the lab cannot read: a wrong one is a finding, not a failure.
    if check.verdict == "correct":
        st.success(plain(check.summary), icon=icon)
    elif check.verdict == "wrong":
        st.warning(plain(check.summary), icon=icon)
    else:
        st.info(plain(check.summary), icon=icon)
    st.markdown(f"**On your inputs:** {outcome(check.yours)}.")
    with st.expander("Why we can say so"):
        st.markdown(plain(check.yours.reason))
    if check.mistake is not None:
        st.warning(
            f"**The mistake:** {plain(check.mistake.name)} {plain(check.mistake.explanation)} "
            f"The page *{plain(check.mistake.page)}* shows it.",
            icon=":material/lightbulb:",
        )
        if check.mistake.note:
            st.caption(f"Note: {plain(check.mistake.note)}")
    elif check.verdict == "wrong":
        st.info(_unnamed(check), icon=":material/search:")
    _inputs(check, link)
    _differences(check)
    # A list, not a table: a table's row is one line, and it cut every reason mid-sentence.
    with st.expander("Every input it was tried on"):
        st.markdown(
            "\n".join(
                f"- **{plain(p.label)}**: {outcome(p)}. {plain(p.reason)}" for p in check.probes
            )
        )


def target_label(key: str) -> str:
    return TARGETS[key].label
