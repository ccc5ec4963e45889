"""A second app process for the store tests: joins and votes as browsers, then reports.

    python tests/live/voter.py URL CODE QUESTION_ID FIRST COUNT [--hold]

Votes option (browser number % 3) for browsers FIRST..FIRST+COUNT-1, printing one line per
acknowledged vote ("ok <browser>") as it is committed; with --hold it then waits to be killed.
A store busy past its lock wait (StoreUnavailable: the student is told so) is clicked again, as
the student would, up to TRIES times; a click the store said was busy must not have counted.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ui.live.rules import Refused
from ui.live.store import Store, StoreUnavailable

TRIES = 20


def main() -> None:
    url, code, question_id, first, count = sys.argv[1:6]
    store = Store(url)
    for number in range(int(first), int(first) + int(count)):
        browser = f"browser-{number:010d}"
        for _ in range(TRIES):
            try:
                store.join(code, browser)
                store.vote(code, browser, int(question_id), 1, number % 3)
                print(f"ok {browser}", flush=True)
            except Refused as err:
                print(f"refused {browser} {err}", flush=True)
            except StoreUnavailable:
                continue  # busy: the student clicks again
            break
    if "--hold" in sys.argv:
        time.sleep(600)


if __name__ == "__main__":
    main()
