"""The guided path through the lab: pages in teaching order, what each teaches, what to try on
it, and at the foot of every page a predict-then-check exercise and a link to the next page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from ui.entry.literal import literal
from ui.lesson.exercises import Exercise, exercise
from ui.session import share, state
from ui.session.errors import shown_errors


@dataclass(frozen=True)
class Stop:
    """One page on the path, named by its URL path ("" for the Overview)."""

    url_path: str
    teaches: str
    tries: tuple[str, ...]

    @property
    def script(self) -> str:
        """The page's script, in its folder and named after its URL path as Streamlit names the
        path."""
        name = self.url_path or "home"
        return f"pages/{name}/{name}.py"


PATH: tuple[Stop, ...] = (
    Stop(
        "",
        "What LayerNorm computes, and the order to explore the lab in.",
        (
            "Pick a preset in the sidebar and read what it demonstrates under the box.",
            "Choose *Classroom (D = 4, integers)*: its two rows can be followed by hand.",
        ),
    ),
    Stop(
        "inputs",
        "The numbers everything starts from: x, gamma, beta and the upstream gradient dout.",
        (
            "Edit one entry of x and watch every output of its row change on the Stepper.",
            "Set every gamma to 1 and every beta to 0: the output is then normalized_x itself.",
            "Switch dout to *one-hot at one output* to follow a single output's gradient.",
        ),
    ),
    Stop(
        "stepper",
        "The ten nodes forward, then their gradients backward, each checked numerically.",
        (
            "Step forward to sve with the *Constant vector* preset: sample_var is 0.",
            "Turn on *Predict before reveal* and guess every backward step before it shows.",
            "Stop at step 19 and step 20: the two places where gradients from two paths add up.",
        ),
    ),
    Stop(
        "jacobian",
        "Why every input moves every output: J = dy/dx and its three paths.",
        (
            "Show the three paths and compare their sizes with the sum.",
            "Set eps to 0 and watch the eigenvalue for x_hat fall to 0.",
        ),
    ),
    Stop(
        "gradcheck",
        "How an independent numerical check catches a wrong backward pass, and when it can't.",
        (
            "Switch the dtype to float32 with the *Large common offset* preset.",
            "Break the backward with each bug and read the Jacobian gap it leaves.",
        ),
    ),
    Stop(
        "audit",
        "Every formula of the five source derivations, judged in its own document's model on "
        "your inputs: correct, wrong (with the smallest fix) or cannot decide.",
        (
            "Change the seed and the shape: a verdict must never flip, only turn to cannot decide.",
            "Set D = 2 and eps = 0: why can these inputs not tell right formulas from wrong ones?",
            "Pick the all-ones upstream gradient: which dgamma formulas go undecided, and why?",
        ),
    ),
    Stop(
        "derive",
        "Your own derivation judged like the documents': type a formula for dx (or any "
        "gradient), see how the lab reads it, and find the input that breaks it.",
        (
            "Start from the broken example and read which mistake it makes and where it shows.",
            "Type the compact dx with x − μ instead of x̂: what must change for it to be right?",
            "Untick ε and type the documents' dx without ε: on which probe does it fail?",
        ),
    ),
    Stop(
        "residual",
        "LayerNorm inside a post-LN residual block: x's gradient along two paths.",
        (
            "Compare the three bars of each feature: the skip hands dz straight back, F adds its "
            "share, and dx is their sum.",
            "Change the seed to draw another sublayer F.",
        ),
    ),
    Stop(
        "batchnorm",
        "The same graph over another axis (BatchNorm) or without the mean (RMSNorm).",
        (
            "Switch between the three normalizations and compare their gradients.",
            "Use the rows shape with several rows: BatchNorm needs a batch.",
        ),
    ),
    Stop(
        "export",
        "Share the exact view with a link, or take the example away as a file.",
        (
            "Copy the link, open it in a private window: the same numbers come back.",
            "Download the bundle and load it in a notebook.",
        ),
    ),
)
STOPS = {stop.url_path: stop for stop in PATH}
# The guide's folds at the foot of every page.
TRY, PREDICT = "What to try", "Predict, then check"


def visible_path() -> list[Stop]:
    """The path without the pages a link hid."""
    hidden = st.session_state["hidden"]
    return [stop for stop in PATH if stop.url_path not in hidden]


def _check(url_path: str) -> None:
    st.session_state["guide_checked"] = st.session_state["guide_checked"] | {url_path}


def _exercise(url_path: str) -> None:
    """The page's predict-then-check question, folded: a prediction first, then the answer,
    computed only when asked for."""
    question = exercise(url_path, int(st.session_state["seed"]))
    if question is None:
        return
    with st.expander(PREDICT, icon=":material/quiz:"):
        _predict_then_check(url_path, question)


def _predict_then_check(url_path: str, question: Exercise) -> None:
    st.markdown(question.prompt)
    guess_key = f"guess_guide_{url_path or 'home'}"
    if url_path not in st.session_state["guide_checked"]:
        st.radio("Your prediction", question.options, index=None, key=guess_key, horizontal=True)
        st.button(
            "Check my prediction",
            key="guide_check",
            on_click=_check,
            args=(url_path,),
            disabled=st.session_state.get(guess_key) is None,
        )
        return
    guess = st.session_state.get(guess_key)
    if guess is not None:
        st.markdown(f"Your prediction: {literal(guess)}")
    with shown_errors(way_out=None):
        st.info(question.answer(state.inputs()), icon=":material/lightbulb:")


def following(current: str, shown: Sequence[StreamlitPage]) -> StreamlitPage | None:
    """The next page on the path among those shown, or None after the last."""
    by_path = {page.url_path: page for page in shown}
    order = [stop.url_path for stop in PATH]
    later = order[order.index(current) + 1 :] if current in order else []
    return next((by_path[path] for path in later if path in by_path), None)


def out_of_lesson(page: StreamlitPage) -> StreamlitPage:
    """`page` kept reachable by its URL but out of the menu (a link hid it)."""
    return st.Page(
        STOPS[page.url_path].script, title=page.title, url_path=page.url_path, visibility="hidden"
    )


def not_in_lesson(page: StreamlitPage, shown: Sequence[StreamlitPage]) -> None:
    """What a link to a hidden page shows instead of the page."""
    st.title(page.title)
    st.info(
        f"The {page.title} page is not part of this lesson: the link you opened leaves it out. "
        "Carry on from the start of the lesson.",
        icon=":material/visibility_off:",
    )
    st.page_link(shown[0], label=f"Go to {shown[0].title}", icon=":material/arrow_forward:")


def preceding(current: str, shown: Sequence[StreamlitPage]) -> StreamlitPage | None:
    """The page before `current` on the path among those shown, or None before the first."""
    by_path = {page.url_path: page for page in shown}
    order = [stop.url_path for stop in PATH]
    earlier = order[: order.index(current)] if current in order else []
    return next((by_path[path] for path in reversed(earlier) if path in by_path), None)


def footer(page: StreamlitPage, shown: Sequence[StreamlitPage]) -> None:
    """What to try on `page`, its exercise, and a link to the next of the `shown` pages."""
    stop = STOPS.get(page.url_path)
    if stop is None:
        return
    with st.container(key="guide"):
        st.divider()
        with st.popover("Copy a link to this view", icon=":material/link:"):
            st.caption(
                "Opens this page with these numbers in any browser (copy with the icon at the "
                "right of the box)."
            )
            warning = share.link_warning()
            if warning:
                st.caption(f":material/wifi_off: {warning}")
            left_out = share.left_out(st.session_state)
            if left_out:
                st.caption(f":material/link_off: {left_out}")
            st.code(share.current_link(), language=None, wrap_lines=True)
        # Folded: the first screen of a short page holds its own idea, not the guide's.
        with st.expander(TRY, icon=":material/science:"):
            st.markdown("\n".join(f"- {line}" for line in stop.tries))
        _exercise(page.url_path)
        # Keyed, so the stepper's keys (a clicker) lead on past its last step or back before
        # its first.
        before = preceding(page.url_path, shown)
        if before is not None:
            with st.container(key="guide_back"):
                st.page_link(before, label=f"Back: {before.title}", icon=":material/arrow_back:")
        after = following(page.url_path, shown)
        with st.container(key="guide_next"):
            if after is None:
                st.page_link(shown[0], label="Back to the start: Overview", icon=":material/home:")
            else:
                st.page_link(
                    after,
                    label=f"Next: {after.title}",
                    icon=":material/arrow_forward:",
                    help=STOPS[after.url_path].teaches,
                )
