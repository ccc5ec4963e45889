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
from dataclasses import dataclass

from ln_core.formula.tokens import MAX_CHARS

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8
ROUNDS = 2  # Peer Instruction: vote, discuss, vote again
MAX_COUNTDOWN_S = 600.0  # the longest countdown to the close of voting
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
