"""Where mcugen writes, and what it may replace: the one writer of every file and folder mcugen
hands the user.

A user's files are never deleted or overwritten. mcugen replaces a path only when it wrote it
itself and nobody changed it since: every output is recorded, with the SHA-256 of its bytes, in
a small manifest (`.mcugen-outputs`, JSON) in the folder that holds it. A folder output (build,
export, flash) carries its own manifest listing every file in it; a file output (report, charts,
run --output, optimize, train) is listed in the manifest of its folder.

- `check_output_file` / `check_output_dir`: called by the command line before any work, so a bad
  path costs nothing. They refuse the working folder, its parents, the home folder and `/`
  outright; a folder holding anything mcugen did not write; a file mcugen did not write (or that
  was changed since); a path that cannot be written (with the OS's reason, probed by creating
  and removing a temporary file there).
- `write_file`: a temporary file in the same folder and a rename, so the path is either as it was
  or complete; then the manifest. `staged_directory`: the folder is built under a temporary name
  beside it and renamed into place; the previous output is moved aside and removed only after
  the new one is in place. Interrupted or failed, nothing of the new output stays.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcugen import __version__
from mcugen.errors import OutputError

#: The manifest of what mcugen wrote in a folder: {"generator": ..., "files": {path: sha256}}.
MANIFEST = ".mcugen-outputs"

#: How many names an error line quotes before "and N more".
_QUOTED = 3


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_manifest(folder: Path) -> dict[str, str]:
    """The files mcugen recorded in `folder` (relative POSIX paths -> sha256); {} when there is
    no manifest or it is not one (then nothing in the folder counts as mcugen's)."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {str(k): str(v) for k, v in files.items()}


def _manifest_text(files: dict[str, str]) -> str:
    body = {"generator": f"mcugen {__version__}", "files": dict(sorted(files.items()))}
    return json.dumps(body, indent=1) + "\n"


def _is_ours(folder: Path, name: str, recorded: dict[str, str]) -> bool:
    """`folder/name` is a regular file mcugen wrote, unchanged since."""
    path = folder / name
    if path.is_symlink() or not path.is_file() or name not in recorded:
        return False
    return _digest(path) == recorded[name]


def foreign_entries(folder: Path) -> list[str]:
    """What in `folder` (recursively) mcugen did not write or that changed since: files not in
    its manifest or with other bytes, symbolic links, folders that hold nothing of mcugen's."""
    recorded = _read_manifest(folder)
    foreign: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        here = Path(root)
        for d in sorted(dirs):
            if (here / d).is_symlink():
                foreign.append((here / d).relative_to(folder).as_posix())
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink())
        if not dirs and not files and here != folder:
            foreign.append(here.relative_to(folder).as_posix() + "/")
        for name in sorted(files):
            rel = (here / name).relative_to(folder).as_posix()
            if rel != MANIFEST and not _is_ours(folder, rel, recorded):
                foreign.append(
                    rel + (" (changed since mcugen wrote it)" if rel in recorded else "")
                )
    return foreign


def _quote(names: list[str]) -> str:
    shown = ", ".join(names[:_QUOTED])
    return shown + (f" and {len(names) - _QUOTED} more" if len(names) > _QUOTED else "")


def _refuse_special(path: Path) -> None:
    """`/`, the home folder, the working folder and its parents are never an output."""
    resolved = path.resolve()
    cwd = Path.cwd().resolve()
    special = {Path("/"), Path.home().resolve(), cwd, *cwd.parents}
    if resolved in special:
        what = "a parent of the working folder"
        for name, folder in (
            ("/", Path("/")),
            ("the home folder", Path.home()),
            ("the working folder", cwd),
        ):
            if resolved == folder.resolve():
                what = name
                break
        raise OutputError(
            f"refusing to write the output over {what}",
            where=str(path),
            hint="give a new folder name, e.g. -o build/out",
        )


def _existing_ancestor(path: Path) -> Path:
    """The nearest folder of `path` that exists (the one a new output is created in)."""
    for parent in path.resolve().parents:
        if parent.exists():
            return parent
    return Path("/")


def _probe_writable(folder: Path, shown: Path) -> None:
    """Create and remove a temporary file in `folder`: the OS's own answer, root or not."""
    if not folder.is_dir():
        raise OutputError(
            "cannot write there: a part of the path is not a directory",
            where=str(shown),
            hint="choose another output path",
        )
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mcugen-probe.", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise OutputError(
            f"cannot write in {folder} ({exc.strerror or exc})",
            where=str(shown),
            hint="choose a writable output path",
        ) from None


def check_output_dir(path: Path) -> Path:
    """Refuse (one OutputError line) an output folder mcugen may not fill; returns it resolved.
    An absent folder, an empty one, or an earlier output of mcugen left unchanged are fine."""
    _refuse_special(path)
    resolved = path.resolve()
    if path.is_symlink():
        raise OutputError(
            "the output is a symbolic link", where=str(path), hint="give the folder itself"
        )
    if resolved.exists():
        if not resolved.is_dir():
            raise OutputError(
                "the output exists and is not a directory",
                where=str(path),
                hint="choose another -o",
            )
        foreign = foreign_entries(resolved)
        if foreign:
            raise OutputError(
                f"the output directory holds files mcugen did not write: {_quote(foreign)}",
                where=str(path),
                hint="give a new or empty directory; mcugen replaces only its own earlier output",
            )
        _probe_writable(resolved.parent, path)
    else:
        _probe_writable(_existing_ancestor(resolved), path)
    return resolved


def check_output_file(path: Path) -> Path:
    """Refuse (one OutputError line) an output file mcugen may not write; returns it resolved.
    Its folder must exist; the file must be absent or mcugen's own unchanged earlier output."""
    resolved = path.resolve() if path.exists() else path.parent.resolve() / path.name
    parent = resolved.parent
    if path.is_dir():
        raise OutputError("the output is a directory", where=str(path), hint="give a file name")
    if not parent.is_dir():
        raise OutputError(
            "the output directory does not exist", where=str(path), hint="create it first"
        )
    if path.exists() or path.is_symlink():
        if not _is_ours(parent, resolved.name, _read_manifest(parent)):
            raise OutputError(
                "the file exists and mcugen did not write it (or it changed since)",
                where=str(path),
                hint="choose a new file name, or move that file away first",
            )
    _probe_writable(parent, path)
    return resolved


def _record(folder: Path, entries: dict[str, str]) -> None:
    """Add `entries` to `folder`'s manifest (dropping entries whose files are gone), atomically."""
    recorded = {k: v for k, v in _read_manifest(folder).items() if (folder / k).is_file()}
    recorded.update(entries)
    _replace_file(folder / MANIFEST, _manifest_text(recorded).encode())


def _replace_file(path: Path, payload: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, 0o666 & ~current_umask())  # as open() would create it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file(path: Path, data: bytes | str) -> None:
    """Write `data` (text as UTF-8) to `path`, whole or not at all, and record it as mcugen's.
    The checks of `check_output_file` run again first; a failing file system is one line."""
    resolved = check_output_file(Path(path))
    payload = data.encode() if isinstance(data, str) else data
    try:
        _replace_file(resolved, payload)
        _record(resolved.parent, {resolved.name: hashlib.sha256(payload).hexdigest()})
    except OSError as exc:
        raise OutputError(
            f"cannot write the file ({exc.strerror or exc})", where=str(path)
        ) from None


def _record_tree(folder: Path) -> None:
    """The manifest of a folder output: every file in it, as it is now."""
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            p = Path(root) / name
            rel = p.relative_to(folder).as_posix()
            if rel != MANIFEST and p.is_file() and not p.is_symlink():
                files[rel] = _digest(p)
    _replace_file(folder / MANIFEST, _manifest_text(files).encode())


def _make_parents(folder: Path) -> list[Path]:
    """Create the missing folders above an output; the ones created, deepest first."""
    missing = [p for p in [folder, *folder.parents] if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _swap_in(new: Path, target: Path, shown: Path) -> None:
    """Put the finished `new` folder at `target`; an earlier output there is moved aside and
    removed once `new` is in place (checked again first: it must still be all mcugen's)."""
    old = None
    if target.exists():
        check_output_dir(shown)
        old = target.with_name(f".{target.name}.old.{os.getpid()}")
        target.rename(old)
    try:
        new.rename(target)
    except BaseException:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def staged_directory(out: Path) -> Iterator[Path]:
    """A temporary folder beside `out` to build the output in; on leaving the block without an
    error it gets its manifest and becomes `out`. On an error or an interrupt it is removed,
    with any folder created for it, and `out` stays as it was."""
    shown = Path(out)
    target = check_output_dir(shown)
    created: list[Path] = []
    staging: Path | None = None
    try:
        with _file_system_errors(shown):
            created = _make_parents(target.parent)
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
            staging.chmod(0o777 & ~current_umask())  # as mkdir makes it, not mkdtemp's 0700
        yield staging
        with _file_system_errors(shown):
            _record_tree(staging)
            _swap_in(staging, target, shown)
    except BaseException:
        _clean(staging, created)
        raise


@contextmanager
def _file_system_errors(shown: Path) -> Iterator[None]:
    """A failing file system (read-only, full, no permission) as one error line."""
    try:
        yield
    except OSError as exc:
        raise OutputError(
            f"cannot write the output directory ({exc.strerror or exc})", where=str(shown)
        ) from None


def _clean(staging: Path | None, created: list[Path]) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    for folder in created:  # deepest first; only if still empty
        try:
            folder.rmdir()
        except OSError:
            break


def write_tree(files: dict[str, bytes], directory: Path) -> None:
    """`files` (relative path -> bytes) under `directory`, which mcugen owns (a staging or
    scratch folder)."""
    for rel, data in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
