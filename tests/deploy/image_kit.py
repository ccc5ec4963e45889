"""deploy/Containerfile read as the tests need it, and its image's files laid out without a
container runtime: what each COPY line copies (less what .dockerignore leaves out of the build
context), the folders its RUN lines give the app's user, that user, its environment and its
command. Only the instructions the Containerfile uses are understood; any other line fails
here, naming itself, so the file set can never silently differ from the image's.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
# The one install the image runs: what this venv was installed from (tests/server/test_install).
PIP_INSTALL = (
    "pip install --no-cache-dir --disable-pip-version-check -r requirements.txt -c constraints.txt"
)


@dataclass(frozen=True)
class Copy:
    sources: tuple[str, ...]  # relative to the build context (the repository)
    dest: PurePosixPath  # absolute, in the image
    into: bool  # dest is a folder the sources go into (it ends with "/"), not a file's new name


@dataclass(frozen=True)
class Folder:
    """A folder a RUN line makes for the app's user: `install -d -o UID -g GID -m MODE PATH`."""

    path: PurePosixPath
    uid: int
    gid: int
    mode: int


@dataclass(frozen=True)
class Recipe:
    workdir: PurePosixPath
    copies: tuple[Copy, ...]
    folders: tuple[Folder, ...]
    uid: int
    gid: int
    env: dict[str, str]
    port: int
    command: tuple[str, ...]


def _instructions(text: str) -> list[tuple[str, str]]:
    lines = [line.strip() for line in text.splitlines()]
    found = [tuple(line.split(maxsplit=1)) for line in lines if line and not line.startswith("#")]
    assert all(len(parts) == 2 and not parts[1].endswith("\\") for parts in found), found
    return [(word.upper(), rest) for word, rest in found]


def _folder(rest: str) -> Folder:
    words = shlex.split(rest)
    assert words[:2] == ["install", "-d"] and len(words) == 9, f"RUN {rest}: not understood"
    flags = dict(zip(words[2:8:2], words[3:8:2], strict=True))
    assert set(flags) == {"-o", "-g", "-m"}, f"RUN {rest}: needs -o UID -g GID -m MODE"
    return Folder(PurePosixPath(words[8]), int(flags["-o"]), int(flags["-g"]), int(flags["-m"], 8))


def read(path: Path = CONTAINERFILE) -> Recipe:
    workdir, copies, folders, user, env, port, command = None, [], [], None, {}, None, None
    for word, rest in _instructions(path.read_text()):
        if word == "FROM":
            continue
        if word == "WORKDIR":
            workdir = PurePosixPath(rest)
        elif word == "COPY":
            *sources, dest = shlex.split(rest)
            assert not rest.startswith("--"), f"COPY {rest}: flags are not understood"
            assert workdir is not None, "COPY before WORKDIR"
            into = dest.endswith("/") or len(sources) > 1
            copies.append(Copy(tuple(sources), workdir / dest, into))
        elif word == "RUN" and rest == PIP_INSTALL:
            continue
        elif word == "RUN":
            folders.append(_folder(rest))
        elif word == "USER":
            uid, gid = rest.split(":")
            user = (int(uid), int(gid))  # numeric: Kubernetes' runAsNonRoot can check it
        elif word == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(rest))
        elif word == "EXPOSE":
            port = int(rest)
        elif word == "CMD":
            command = tuple(json.loads(rest))
        else:
            raise AssertionError(f"{word} {rest}: not understood by tests/deploy/image_kit.py")
    assert workdir and user and port and command, "WORKDIR, USER, EXPOSE and CMD are needed"
    return Recipe(workdir, tuple(copies), tuple(folders), *user, env, port, command)


def _ignored() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _left_out(relative: str, patterns: list[str]) -> bool:
    """Whether .dockerignore leaves this path (relative to the context) out of the build."""
    parts = PurePosixPath(relative).parts
    for pattern in patterns:
        if pattern.startswith("**/"):
            if any(fnmatch.fnmatchcase(part, pattern[3:]) for part in parts):
                return True
        elif fnmatch.fnmatchcase(parts[0], pattern):
            return True
    return False


def _copy(copy: Copy, image: Path, patterns: list[str]) -> None:
    target = image / copy.dest.relative_to("/")
    for source in copy.sources:
        origin = ROOT / source
        assert origin.exists(), f"COPY {source}: no such file in the repository"
        if origin.is_dir():
            # Docker's COPY of a folder copies what is in it into the destination.
            for path in sorted(origin.rglob("*")):
                relative = path.relative_to(ROOT).as_posix()
                if path.is_file() and not _left_out(relative, patterns):
                    placed = target / path.relative_to(origin)
                    placed.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, placed)
        else:
            placed = target / origin.name if copy.into else target
            placed.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, placed)


@dataclass(frozen=True)
class Image:
    """The image's files under `root` (its / ), served by its user."""

    recipe: Recipe
    root: Path

    @property
    def workdir(self) -> Path:
        return self.root / self.recipe.workdir.relative_to("/")

    def folder(self, folder: Folder) -> Path:
        return self.root / folder.path.relative_to("/")

    def env(self, **extra: str) -> dict[str, str]:
        """The environment the image's command gets: no variable of this machine but PATH,
        and a home folder the user cannot write (USER names a uid with no home)."""
        return {"PATH": os.environ["PATH"], "HOME": str(self.root), **self.recipe.env, **extra}

    def command(self, args: list[str]) -> list[str]:
        """`args` run as the image's user: where this process is root, as that uid and gid
        (setpriv), with this interpreter reachable (_reach_python); where it is not, it is
        unprivileged already, and the files it may not write were made read-only (build)."""
        if os.geteuid() != 0:
            return args
        user = f"exec setpriv --reuid={self.recipe.uid} --regid={self.recipe.gid} --clear-groups"
        script = "set -e\n" + _reach_python(self.recipe.uid) + user + ' -- "$@"'
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
                *args]  # fmt: skip

    def run(self, args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(args), cwd=self.workdir, env=self.env(), capture_output=True,
            text=True, check=False, **kwargs,
        )  # fmt: skip


def _closed_to(uid: int, path: Path) -> Path | None:
    """The first folder on the way to `path` that `uid` may not pass through, if any."""
    for folder in [*reversed(path.parents), path]:
        mode = folder.stat()
        if folder.is_dir() and mode.st_uid != uid and not mode.st_mode & 0o001:
            return folder
    return None


def _reach_python(uid: int) -> str:
    """Shell lines, for a private mount namespace, that let `uid` reach this interpreter and
    its venv and nothing else of the folder that hides them: a machine's Python may live in
    root's home (pyenv under /root, mode 0700), which the image's user could not enter. An
    empty folder is mounted over the closed one, with the interpreter's folders bound back
    in at their own paths."""
    kept = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()})
    closed = {path: _closed_to(uid, path) for path in kept}
    moves = [(i, shlex.quote(str(path))) for i, path in enumerate(kept) if closed[path]]
    lines = [f"stash{i}=$(mktemp -d); mount --bind {path} $stash{i}" for i, path in moves]
    lines += [
        f"mount -t tmpfs -o mode=0755,size=1m lnlab {shlex.quote(str(folder))}"
        for folder in sorted({folder for folder in closed.values() if folder})
    ]
    lines += [
        f"mkdir -p {path}; mount --move $stash{i} {path}; rmdir $stash{i}" for i, path in moves
    ]
    return "".join(line + "\n" for line in lines)


def build(recipe: Recipe) -> Image:
    """Lay the image's files out in a new folder: root's, readable by all, writable by nobody
    but root, except the folders the Containerfile gives the app's user."""
    root = Path(tempfile.mkdtemp(prefix="lnlab-image-"))
    root.chmod(0o755)  # mkdtemp's 0700 would keep the image's user out of its own files
    patterns = _ignored()
    for copy in recipe.copies:
        _copy(copy, root, patterns)
    image = Image(recipe, root)
    image.workdir.mkdir(parents=True, exist_ok=True)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    for folder in recipe.folders:
        made = image.folder(folder)
        made.parent.chmod(0o755)
        made.mkdir(parents=True, exist_ok=True)
        made.parent.chmod(0o555)
        if os.geteuid() == 0:
            os.chown(made, folder.uid, folder.gid)
        made.chmod(folder.mode)
    return image


def remove(image: Image) -> None:
    for path in [image.root, *image.root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.rmtree(image.root)
