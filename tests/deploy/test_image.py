"""The image deploy/Containerfile builds serves the lab: from exactly the files its COPY lines
name, as its own unprivileged user, writing only the folder it gives that user (the store's).

No container runtime is needed: tests/deploy/image_kit.py lays the files out as the image has
them (root's, read-only to the app's user) and runs commands as the image's uid and gid, with
this venv's interpreter in the place of the image's `python` (both installed from
requirements.txt with constraints.txt).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import urllib.request
from pathlib import Path

from bench.bench_class import CODE, teacher_click
from bench.ws_client import Session, run_blocking

ROOT = Path(__file__).resolve().parents[2]
STORE = "classes.sqlite3"  # the live class's SQLite file in the store's folder (ui/live/connect)
# Every page app.py registers, by its script (the Class page too, which no menu lists).
SCRIPTS = re.findall(r'st\.Page\(\s*"([^"]+)"', (ROOT / "app.py").read_text())

# Run by the image's user from the image's working folder: every page in AppTest, then a class
# started on the Class page, which opens the store. Prints what it saw as JSON.
EVERY_PAGE = """
import json, sys
from pathlib import Path
from streamlit.testing.v1 import AppTest
import ui

def problems(at):
    return [str(e.value) for e in at.exception] + [e.value for e in at.error]

at = AppTest.from_file("app.py", default_timeout=180).run()
report = {"ui": ui.__file__, "first_run": problems(at), "pages": {}}
for script in sys.argv[1:] if not report["first_run"] else []:
    at.switch_page(script).run()
    report["pages"][script] = {"problems": problems(at), "texts": len(at.markdown) + len(at.title)}
if not report["first_run"]:
    next(b for b in at.button if b.label == "Start a class").click().run()
live = at.session_state["live"] if "live" in at.session_state else None
report["teaching"] = bool(live and live.teaching)
report["class_problems"] = problems(at)
print(json.dumps(report))
"""


def _views() -> set[str]:
    """The files under pages/ a page imports: the views only it uses, beside it
    (`from pages.<name> import <view>` or `from pages.<name>.<view> import ...`)."""
    found = set()
    for path in (ROOT / "pages").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pages."):
                folder = node.module.replace(".", "/")
                found |= {f"{folder}.py", *(f"{folder}/{a.name}.py" for a in node.names)}
    return found


def test_app_py_registers_every_page_script() -> None:
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").rglob("*.py"))
    assert sorted(SCRIPTS) == [f for f in files if f not in _views()]


def test_every_page_runs_from_the_image_files_as_its_user(image) -> None:
    ran = image.run([sys.executable, "-c", EVERY_PAGE, *SCRIPTS], timeout=280)
    assert ran.returncode == 0, ran.stderr[-4000:]
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    # The app came from the image's files, not from this repository.
    assert Path(report["ui"]).is_relative_to(image.workdir), report["ui"]
    assert not report["first_run"], f"{report['first_run']}\n{ran.stderr[-3000:]}"
    assert list(report["pages"]) == SCRIPTS
    for script, seen in report["pages"].items():
        assert not seen["problems"], f"{script}: {seen['problems']}"
        assert seen["texts"], f"{script} drew no text"
    # Starting a class wrote the store, in the one folder the image gives its user.
    assert report["teaching"] and not report["class_problems"], report
    (data,) = image.recipe.folders
    assert (image.folder(data) / STORE).is_file()


async def _every_page(port: int) -> list[str]:
    """Each page over the websocket, as a browser opens it; then a class started. What failed."""
    failed = []
    for script in SCRIPTS:
        page = "" if script == "pages/home/home.py" else Path(script).stem
        async with Session(port, timeout=120.0) as tab:
            shown = await tab.rerun(page, query_string="")
            if shown.page != page or not shown.texts:
                failed.append(f"/{page} showed /{shown.page}: {shown.texts[:3]}")
    async with Session(port, timeout=120.0) as teacher:
        await teacher.rerun("class", query_string="")
        started = await teacher_click(teacher, "Start a class")
        if not any(CODE.search(text) for text in started.texts):
            failed.append(f"no join code after 'Start a class': {started.alerts}")
    return failed


def test_the_image_command_serves_every_page_as_its_user(served) -> None:
    base = f"http://127.0.0.1:{served.port}"
    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=30) as health:
        assert health.read() == b"ok"
    with urllib.request.urlopen(f"{base}/", timeout=30) as index:
        assert index.status == 200 and b"<html" in index.read().lower()
    failed = run_blocking(_every_page(served.port))
    assert not failed, "\n".join(failed) + "\n\nserver log:\n" + served.output()[-3000:]
    assert "Traceback" not in served.output(), served.output()[-3000:]
    (data,) = served.image.recipe.folders
    assert (served.image.folder(data) / STORE).is_file()


def test_the_image_user_writes_only_the_store_folder(image) -> None:
    (data,) = image.recipe.folders
    probe = data.path.relative_to(image.recipe.workdir) / "probe"
    wrote = image.run(["sh", "-c", f"touch {probe} && rm {probe}"])
    assert wrote.returncode == 0, wrote.stderr
    for path in ("app.py", "ui/probe", "probe"):
        refused = image.run(["sh", "-c", f"touch {path}"])
        assert refused.returncode != 0, f"the image's user could write {path}"
    assert data.uid != 0 and image.recipe.uid == data.uid and image.recipe.gid == data.gid
