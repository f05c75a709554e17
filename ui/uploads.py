"""Uploaded files → the library folder, safely.

Names are reduced to a plain, sanitised file name (no directories, no `..`, no shell or control
characters); the resolved target must sit directly inside the library folder; size, count and
extension limits are checked before anything is copied; each copy goes through a temporary file
and an atomic rename, so a reader never sees half a file. Nothing else about documents is decided
here: indexing is the Assistant's job.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_MAX_NAME = 120
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}


def sanitise_filename(name: str, fallback: str = "upload") -> str:
    """A safe single-component file name for `name` (any path parts and unsafe characters dropped)."""
    base = re.split(r"[\\/]", str(name))[-1]
    base = unicodedata.normalize("NFKC", base)
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = _UNSAFE.sub("_", base)
    base = re.sub(r"_+", "_", base).strip(" ._-")
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    stem = stem.strip(" ._-") or fallback
    if stem.lower() in _WINDOWS_RESERVED:
        stem = f"{stem}_"
    ext = ext.lower()[:10]
    stem = stem[: _MAX_NAME - len(ext) - 1]
    return f"{stem}.{ext}" if ext else stem


@dataclass
class Rejected:
    name: str  # the sanitised name, safe to show
    reason: str


@dataclass
class StagedUploads:
    saved: list[Path] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (name given, name saved) when they differ
    message: str = ""  # a batch-level refusal (e.g. too many files), empty when the batch was accepted


class UploadGuard:
    """Copies uploads into `library_dir` within the configured limits."""

    def __init__(
        self, library_dir: Path, max_mb: float, max_files: int, extensions: Iterable[str] | None = None
    ) -> None:
        self.library_dir = Path(library_dir).resolve()
        self.max_bytes = int(max_mb * 1024 * 1024)
        self.max_mb = max_mb
        self.max_files = max_files
        self.extensions = {e.lower() for e in extensions} if extensions else None

    def target_for(self, name: str) -> Path:
        """Where an upload called `name` goes; raises ValueError if that were outside the library."""
        target = (self.library_dir / sanitise_filename(name)).resolve()
        if target.parent != self.library_dir:
            raise ValueError(f"refusing to write outside the library folder: {name!r}")
        return target

    def stage(self, uploads: Sequence[tuple[str | os.PathLike[str], str]]) -> StagedUploads:
        """`uploads` = (temporary path, original name). Valid ones are copied; the rest are reported."""
        result = StagedUploads()
        if len(uploads) > self.max_files:
            result.message = (
                f"Too many files: {len(uploads)} in one upload, the limit is {self.max_files}. "
                "Nothing was added; upload them in smaller batches."
            )
            return result
        self.library_dir.mkdir(parents=True, exist_ok=True)
        used: set[str] = set()
        for tmp, original in uploads:
            safe = sanitise_filename(original)
            reason = self._check(Path(tmp), safe)
            if reason is None and safe in used:
                reason = "another file in this upload has the same name"
            if reason:
                result.rejected.append(Rejected(safe, reason))
                continue
            try:
                target = self.target_for(original)
                self._copy(Path(tmp), target)
            except (OSError, ValueError) as exc:
                log.warning("upload %s not saved: %s", safe, exc)
                result.rejected.append(Rejected(safe, "could not be saved to the library folder"))
                continue
            used.add(safe)
            result.saved.append(target)
            given = re.split(r"[\\/]", str(original))[-1]
            if given != target.name:
                result.renamed.append((given, target.name))
        return result

    def _check(self, tmp: Path, safe: str) -> str | None:
        try:
            if tmp.is_symlink() or not tmp.is_file():
                return "not a regular file"
            size = tmp.stat().st_size
        except OSError:
            return "could not be read"
        if size == 0:
            return "the file is empty"
        if size > self.max_bytes:
            return f"too large ({size / 1048576:.1f} MB; the limit is {self.max_mb:g} MB)"
        if self.extensions is not None and Path(safe).suffix.lower() not in self.extensions:
            allowed = ", ".join(sorted(self.extensions))
            return f"unsupported file type (supported: {allowed})"
        return None

    def _copy(self, src: Path, target: Path) -> None:
        fd, tmp_name = tempfile.mkstemp(prefix=".upload-", dir=self.library_dir)
        try:
            with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
                shutil.copyfileobj(inp, out, length=1 << 20)
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise

    def remove(self, name: str) -> bool:
        """Delete the library copy of an uploaded document (only a file directly in the library)."""
        if sanitise_filename(name) != name:
            return False  # not a name this guard could have written
        try:
            target = self.target_for(name)
        except ValueError:
            return False
        if target.is_file() and not target.is_symlink():
            target.unlink()
            return True
        return False
