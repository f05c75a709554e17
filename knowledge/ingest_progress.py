"""How far an ingest run is, counted in chunks: embedded (or unchanged) out of the run's total.

The total is known for the files read so far; for the rest it is estimated from their sizes: at
least one chunk a file, one per PRIOR_BYTES_PER_CHUNK bytes of its kind (PDF, DOCX, text), scaled by
how the files of that kind read so far compared with the same estimate. Embedding is most of the run's time, so chunks done track time better than files
or bytes (a PDF's bytes are mostly not text). The same line goes to the CLI bar and the Library tab:
`"120 of ~400 chunks · lease.md"` (`~` while the total is an estimate).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

Progress = Callable[[float, str], None]

# bytes per 250-word chunk (200 new words after the overlap) before this run has read a file of the
# kind (a PDF carries fonts and layout)
PRIOR_BYTES_PER_CHUNK = {"pdf": 9_500.0, "docx": 6_000.0, "text": 1_250.0}


SEPARATOR = " · "


def current_file(line: str) -> str:
    """The file a progress line names (the whole line when it names none: "done", a stage)."""
    head, sep, rest = line.partition(SEPARATOR)
    return rest if sep and head.endswith(" chunks") else line


def prior_chunks(kind: str, size: int) -> int:
    return max(1, math.ceil(size / PRIOR_BYTES_PER_CHUNK[kind])) if size > 0 else 0


def file_kind(path: Path) -> str:
    suffix = path.suffix.lower()
    return "pdf" if suffix == ".pdf" else "docx" if suffix == ".docx" else "text"


class ChunkProgress:
    """Counts one run's chunks and reports `(fraction, line)`; the fraction never goes back."""

    def __init__(self, say: Progress, files: dict[str, tuple[str, int]]) -> None:
        self._say = say
        self._unread = dict(files)  # source_path → (kind, bytes), files not read yet
        self._read_prior = dict.fromkeys(PRIOR_BYTES_PER_CHUNK, 0)
        self._read_chunks = dict.fromkeys(PRIOR_BYTES_PER_CHUNK, 0)
        self.known = 0  # chunks of the files read
        self.done = 0  # chunks embedded, or unchanged
        self.current = ""
        self._fraction = 0.0

    def start(self, source_path: str) -> None:
        self.current = source_path
        self._report()

    def read(self, source_path: str, chunks: int, unchanged: bool = False) -> None:
        """The file's chunks are known (to embed, or already stored when `unchanged`)."""
        kind, size = self._unread.pop(source_path, ("text", 0))
        self._read_prior[kind] += prior_chunks(kind, size)
        self._read_chunks[kind] += chunks
        self.known += chunks
        if unchanged:
            self.done += chunks

    def finish(self, source_path: str) -> None:
        """The file is dealt with: a file read without chunks (failed, skipped) adds none."""
        if source_path in self._unread:
            self.read(source_path, 0)

    def embedded(self, chunks: int) -> None:
        self.done += chunks
        self._report()

    @property
    def estimated(self) -> bool:
        return bool(self._unread)

    @property
    def total(self) -> int:
        rest = 0.0
        for kind, size in self._unread.values():
            seen = self._read_prior[kind]
            guess = prior_chunks(kind, size) * (self._read_chunks[kind] / seen if seen else 1.0)
            rest += max(guess, 1.0) if size else 0.0
        return max(self.known + round(rest), self.done, 1)

    def line(self) -> str:
        counts = f"{min(self.done, self.total):,} of {'~' if self.estimated else ''}{self.total:,} chunks"
        return f"{counts}{SEPARATOR}{self.current}" if self.current else counts

    def _report(self) -> None:
        self._fraction = max(self._fraction, min(0.999, self.done / self.total))
        self._say(self._fraction, self.line())
