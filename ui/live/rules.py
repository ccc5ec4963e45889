"""Who may do what in a live class, and the limits: pure rules, no database, no Streamlit.

A join code is 8 characters from an alphabet without look-alikes (no 0/O, 1/I/L): 31**8 is
about 8.5e11 codes, so guessing a live class's code is hopeless; wrong codes are rate-limited
per browser, counted only once a code is known to be wrong, so no limit ever refuses a right
code or a student of the class. The instructor's secret is 32 random bytes; only its
sha256 is stored, so a copy of the database cannot steer a class.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata
from dataclasses import dataclass

from ln_core.formula.tokens import MAX_CHARS

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8
ROUNDS = 2  # Peer Instruction: vote, discuss, vote again
CONFIDENCE = ("a guess", "fairly sure", "sure")  # what a student may say with a vote
NOT_SAID = "not said"  # a vote that said none of CONFIDENCE
MAX_COUNTDOWN_S = 600.0  # the longest countdown to the close of voting
# The instructor's own question: characters of its title, prompt and each choice; choices.
MAX_OWN_TITLE, MAX_OWN_PROMPT, MAX_OWN_OPTION, MAX_OWN_OPTIONS = 80, 400, 80, 5
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


class Refused(Exception):
    """An action the class's rules do not allow; the message says why, for the person acting."""


@dataclass(frozen=True)
class Limits:
    """Rate limits: at most `count` events of a kind within `seconds`."""

    joins_failed_per_browser: int = 5
    joins_failed_per_browser_s: float = 600.0
    votes_per_browser: int = 6
    votes_per_browser_s: float = 10.0


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def read_code(text: str) -> str:
    """A typed or linked join code in its stored form (upper case, no dash or spaces)."""
    code = re.sub(r"[\s-]", "", text).upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        raise Refused(
            f"A join code is {CODE_LENGTH} letters and digits, like {show_code('ABCD2345')}; "
            "check it with your instructor."
        )
    return code


def show_code(code: str) -> str:
    """How a code is shown to read aloud: two groups of four."""
    return f"{code[:4]}-{code[4:]}"


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(secret_hash(secret), stored_hash)


def new_browser_id() -> str:
    return secrets.token_urlsafe(16)


def check_browser_id(browser: str) -> str:
    if not _BROWSER_ID.fullmatch(browser):
        raise Refused("This browser's class id is not valid; reload the page to get a new one.")
    return browser


def check_option(option: int, options: list[str]) -> int:
    if not (isinstance(option, int) and 0 <= option < len(options)):
        raise Refused("That answer is not one of the question's choices.")
    return option


def check_own(title: str, prompt: str, options: tuple[str, ...]) -> None:
    """The instructor's own question as typed: its title, prompt and 2 to 5 choices within
    their lengths, no choice twice, no invisible character (a control, or a bidirectional
    control that would turn the class's screens around it)."""
    if not 2 <= len(options) <= MAX_OWN_OPTIONS:
        raise Refused(f"Give 2 to {MAX_OWN_OPTIONS} choices.")
    if len({option.strip() for option in options}) < len(options):
        raise Refused("Two choices read the same; make each different.")
    for what, text, limit in (
        ("The question's title", title, MAX_OWN_TITLE),
        ("The question", prompt, MAX_OWN_PROMPT),
        *((f"Choice {n}", option, MAX_OWN_OPTION) for n, option in enumerate(options, 1)),
    ):
        if not text.strip():
            raise Refused(f"{what} is empty.")
        if len(text) > limit:
            raise Refused(f"{what} is {len(text)} characters long; at most {limit}.")
        hidden = next((c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs")), None)
        if hidden is not None:
            raise Refused(
                f"{what} holds an invisible character (U+{ord(hidden):04X}), which could turn "
                "the text around it on the class's screens; type it again without it."
            )


def check_confidence(confidence: int | None) -> int | None:
    if confidence is not None and not (
        isinstance(confidence, int) and 0 <= confidence < len(CONFIDENCE)
    ):
        raise Refused("How sure you are is one of: " + ", ".join(CONFIDENCE) + ".")
    return confidence


def check_formula(text: str) -> str:
    """A typed answer the class may keep: some text, at most the formula grammar's length."""
    if not isinstance(text, str) or not text.strip():
        raise Refused("Type your formula first.")
    if "\x00" in text:
        # PostgreSQL keeps no NUL in text, and no formula has one.
        raise Refused("Your formula holds a NUL character (\\x00); type it again without it.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("Your formula holds a broken character; type it again.") from None
    if len(text) > MAX_CHARS:
        raise Refused(
            f"Your formula has {len(text):,} characters; the lab reads at most {MAX_CHARS:,}."
        )
    return text
