"""Start LayerNorm Lab: `streamlit run app.py` plus any options given (what ./run.sh runs).

Nothing else: the app needs no launcher of its own, so plain `streamlit run app.py` starts the
same thing. This module only keeps one command for run.sh, the benchmarks and the tests.
"""

import sys

from streamlit.web import cli


def main() -> None:
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
