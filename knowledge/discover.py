"""Which files an ingest looks at: folders walked safely (symlink loops reported), files as given."""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge import pdf_text

if TYPE_CHECKING:
    from knowledge.manifest import DocumentInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    root: Path  # the library root (absolute); source_path is relative to it
    path: Path  # the file as found (may be a symlink)
    source_path: str  # posix path relative to root (prefixed by the root's name: see `discover`)


@dataclass
class Problem:
    source_path: str
    status: str  # "failed" | "skipped"
    reason: str


@dataclass
class Discovery:
    candidates: list[Candidate] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)  # folders walked in full (for removals)


def _rel(root: Path, path: Path, prefix: str = "") -> str:
    rel = path.relative_to(root).as_posix()
    if rel == ".":
        return prefix.rstrip("/")
    return prefix + rel


def root_prefixes(folders: list[Path]) -> dict[Path, str]:
    """A distinct name per folder ("work/"), from its last path parts ("a/docs/" when two are "docs")."""
    out: dict[Path, str] = {}
    depth = 1
    while True:
        names = {f: "/".join(f.parts[-depth:]).lstrip("/") + "/" for f in folders}
        if len(set(names.values())) == len(names) or depth > max(len(f.parts) for f in folders):
            out = names
            break
        depth += 1
    return out


def discover(
    paths: list[Path], extensions: list[str], prefixed_roots: set[str] | frozenset[str] = frozenset()
) -> Discovery:
    """Files to ingest under `paths`. Folders are walked without ever looping; hidden entries skipped.

    With one folder, `source_path` is relative to it. With several folders, each folder's files are
    named under the folder's name ("work/notes.txt", "home/notes.txt") so that equal relative paths
    never replace each other; a folder in `prefixed_roots` (stored that way before) keeps the prefix.
    """
    exts = {e.lower() for e in extensions}
    out = Discovery()
    given_paths = [Path(g).expanduser() for g in paths]
    folders = list(dict.fromkeys(g.resolve() for g in given_paths if g.is_dir()))
    prefixes = root_prefixes(folders) if folders else {}
    for given in given_paths:
        if not given.exists() and not given.is_symlink():
            out.problems.append(Problem(str(given), "failed", "not found"))
            continue
        if given.is_dir():
            root = given.resolve()
            if root in out.roots:
                continue
            out.roots.append(root)
            prefix = prefixes[root] if len(folders) > 1 or str(root) in prefixed_roots else ""
            _walk(root, root, exts, out, visited={_dir_key(root)}, prefix=prefix)
            continue
        root = given.parent.resolve()
        cand = Candidate(root, root / given.name, given.name)
        problem = _check_file(cand)
        if problem:
            out.problems.append(problem)
        elif not given.is_file():
            out.problems.append(Problem(given.name, "failed", "not a regular file (device, pipe or socket)"))
        elif given.suffix.lower() not in exts:
            out.problems.append(
                Problem(given.name, "skipped", f"unsupported file type {given.suffix or '(none)'}")
            )
        else:
            out.candidates.append(cand)
    return out


def _dir_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return (st.st_dev, st.st_ino)


def _check_file(c: Candidate) -> Problem | None:
    try:
        c.path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 raises RuntimeError on a loop
        return Problem(c.source_path, "failed", "symlink loop")
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return Problem(c.source_path, "failed", "symlink loop")
        if c.path.is_symlink():
            return Problem(c.source_path, "failed", "broken symlink (its target does not exist)")
        return Problem(c.source_path, "failed", f"cannot access: {exc.strerror or exc}")
    return None


def _walk(
    root: Path,
    folder: Path,
    exts: set[str],
    out: Discovery,
    visited: set[tuple[int, int]],
    prefix: str = "",
) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        out.problems.append(
            Problem(_rel(root, folder, prefix) or ".", "failed", f"cannot list folder: {exc.strerror or exc}")
        )
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        cand = Candidate(root, path, _rel(root, path, prefix))
        problem = _check_file(cand)
        if problem:
            if path.suffix.lower() in exts or problem.reason == "symlink loop":
                out.problems.append(problem)
            continue
        if path.is_dir():
            key = _dir_key(path)
            if key in visited:
                out.problems.append(
                    Problem(cand.source_path, "skipped", "symlink loop (folder already visited)")
                )
                continue
            _walk(root, path, exts, out, visited | {key}, prefix)
        elif path.suffix.lower() in exts:
            if path.is_file():
                out.candidates.append(cand)
            else:
                out.problems.append(
                    Problem(cand.source_path, "failed", "not a regular file (device, pipe or socket)")
                )


def content_key(path: Path, cut: str = "") -> str:
    """What decides whether a file is read again: its bytes, for a PDF the version of its reading
    (knowledge/pdf_text.py), and `cut` (`chunking.cut_key`: how chunks are cut), so a library made
    before a better reading or another cut is read again by the next ingest."""
    return file_sha256(path) + key_suffix(path, cut)


def key_suffix(path: Path, cut: str = "") -> str:
    """The content key's part after the file's digest: the PDF reading's version and the cut."""
    pdf = f"+pdf{pdf_text.VERSION}" if path.suffix.lower() == ".pdf" else ""
    return f"{pdf}+{cut}" if cut else pdf


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prefixed_roots(manifest: dict[str, DocumentInfo]) -> set[str]:
    """Folders whose files were stored under the folder's name (an earlier run over several folders).

    A later run over one of them alone keeps that naming, so no file is removed and re-added.
    """
    by_root: dict[str, list[str]] = {}
    for sp, info in manifest.items():
        if info.root:
            by_root.setdefault(info.root, []).append(sp)
    out: set[str] = set()
    for root, sps in by_root.items():
        prefix = Path(root).name + "/"
        if all(sp.startswith(prefix) for sp in sps) and not (Path(root) / Path(root).name).is_dir():
            out.add(root)
    return out
