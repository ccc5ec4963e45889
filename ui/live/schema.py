"""The live class's tables (SQLAlchemy Core): the same schema on SQLite and PostgreSQL.

Times are seconds since the epoch (floats), so both databases store and compare them alike.
Columns added after a database was first created are nullable: the store adds what an older
database lacks (store._add_missing_columns), so a class's file outlives an upgrade.
One vote per browser per round is the database's own rule (`one_vote_per_round`), not only
the app's: two replicas racing to record the same student's vote cannot both succeed; so is
one typed formula per browser per round (`one_formula_per_round`).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

classes = Table(
    "lnlab_classes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("code", String(16), nullable=False, unique=True),
    # sha256 of the instructor's secret; the secret itself lives only in their browser.
    Column("secret_hash", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("ended_at", Float),
    # What following students show: the instructor's page and view as a link's query string.
    Column("follow_version", Integer, nullable=False, default=0),
    Column("follow_page", String(64), nullable=False, default=""),
    Column("follow_query", Text, nullable=False, default=""),
    # The class size the instructor expects (None: not said), and whether a browser beyond it
    # is refused: one person opening many browsers would otherwise vote many times.
    Column("expected", Integer),
    Column("capped", Boolean),
)

members = Table(
    "lnlab_members",
    metadata,
    Column("class_id", Integer, ForeignKey("lnlab_classes.id"), primary_key=True),
    Column("browser", String(64), primary_key=True),
    Column("joined_at", Float, nullable=False),
)

questions = Table(
    "lnlab_questions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, ForeignKey("lnlab_classes.id"), nullable=False, index=True),
    Column("title", String(200), nullable=False),
    Column("prompt", Text, nullable=False),
    Column("options", Text, nullable=False),  # a JSON list of the choices, in order
    Column("answer", Integer, nullable=False),  # index into options
    Column("explanation", Text, nullable=False),
    Column("asked_at", Float, nullable=False),
    Column("current_round", Integer, nullable=False),
    Column("round_open", Boolean, nullable=False),
    Column("revealed", Boolean, nullable=False),
    Column("own", Boolean),  # the instructor typed it: its text is shown as typed, never Markdown
)

rounds = Table(
    "lnlab_rounds",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("question_id", Integer, ForeignKey("lnlab_questions.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("opened_at", Float, nullable=False),
    Column("closes_at", Float),  # the instructor closed voting, or set a countdown to this
    UniqueConstraint("question_id", "number", name="one_round_number"),
)

votes = Table(
    "lnlab_votes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("round_id", Integer, ForeignKey("lnlab_rounds.id"), nullable=False),
    Column("browser", String(64), nullable=False),
    Column("option", Integer, nullable=False),
    Column("at", Float, nullable=False),
    Column("confidence", Integer),  # how sure the student said they were (rules.CONFIDENCE)
    UniqueConstraint("round_id", "browser", name="one_vote_per_round"),
)

# A question answered with a typed formula ("derive dx") is a question without options; this
# is what judges its answers: the gradient asked for, the model, and the inputs (one vector,
# JSON) every answer is judged on, the instructor's when it was asked.
derivations = Table(
    "lnlab_derivations",
    metadata,
    Column("question_id", Integer, ForeignKey("lnlab_questions.id"), primary_key=True),
    Column("target", String(32), nullable=False),
    Column("with_eps", Boolean, nullable=False),
    Column("scalar_gamma", Boolean, nullable=False),
    Column("inputs", Text, nullable=False),
)

# A student's typed formula and what the judge made of it. The text is the student's own and
# hostile: it is shown to the instructor only when they open it, and to nobody else.
formula_answers = Table(
    "lnlab_formula_answers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("round_id", Integer, ForeignKey("lnlab_rounds.id"), nullable=False),
    Column("browser", String(64), nullable=False),
    Column("text", Text, nullable=False),
    Column("verdict", String(16), nullable=False),  # correct, wrong, cannot decide, unreadable
    Column("mistake", Text, nullable=False),  # the slip the judge named; "" for none
    Column("at", Float, nullable=False),
    UniqueConstraint("round_id", "browser", name="one_formula_per_round"),
)

# Recent joins that failed and votes sent, per browser: what the rate limits count.
attempts = Table(
    "lnlab_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("who", String(64), nullable=False),
    Column("at", Float, nullable=False),
    Index("lnlab_attempts_by_who", "kind", "who", "at"),
)
