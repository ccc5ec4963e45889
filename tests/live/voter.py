"""A second app process for the store tests: joins and votes as browsers, then reports.

    python tests/live/voter.py URL CODE QUESTION_ID FIRST COUNT [--hold]

Votes option (browser number % 3) for browsers FIRST..FIRST+COUNT-1, printing one line per
acknowledged vote ("ok <browser>") as it is committed; with --hold it then waits to be killed.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ui.live.rules import Refused
from ui.live.store import Store


def main() -> None:
    url, code, question_id, first, count = sys.argv[1:6]
    store = Store(url)
    for number in range(int(first), int(first) + int(count)):
        browser = f"browser-{number:010d}"
        try:
            store.join(code, browser)
            store.vote(code, browser, int(question_id), 1, number % 3)
            print(f"ok {browser}", flush=True)
        except Refused as err:
            print(f"refused {browser} {err}", flush=True)
    if "--hold" in sys.argv:
        time.sleep(600)


if __name__ == "__main__":
    main()
