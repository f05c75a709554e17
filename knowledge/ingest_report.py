"""What an ingest run did, per file and in total (the CLI, the Library tab and the child's JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knowledge.manifest import DocumentInfo

if TYPE_CHECKING:
    from knowledge.types import Chunk

STATUSES = ("added", "updated", "unchanged", "removed", "failed", "skipped")


@dataclass
class FileResult:
    source_path: str
    status: str  # one of STATUSES
    chunks: int = 0  # chunks stored for the file after this run
    seconds: float = 0.0
    reason: str = ""
    duplicates: int = 0  # chunks not stored because their text is already stored
    same_as: str = ""  # the (first) file that already holds that text


def duplicate_note(kept: list[Chunk], dups: int, same_as: list[str]) -> str:
    others = same_as[0] + (f" and {len(same_as) - 1} other file(s)" if len(same_as) > 1 else "")
    if not kept:
        return f"same text as {others}: nothing new to index"
    return f"{dups} passage(s) with the same text as {others} not stored twice"


@dataclass
class IngestReport:
    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0
    embedder: str = ""
    total_chunks: int = 0  # chunks in the store after the run

    @property
    def totals(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for f in self.files:
            counts[f.status] = counts.get(f.status, 0) + 1
        return counts

    @property
    def chunks_written(self) -> int:
        return sum(f.chunks for f in self.files if f.status in ("added", "updated"))

    def by_path(self) -> dict[str, FileResult]:
        return {f.source_path: f for f in self.files}


def unchanged_result(old: DocumentInfo | None, file_hash: str, stored_chunks: int) -> FileResult | None:
    """The result of a file whose content is what the manifest says was read last time, when that
    settles it: indexed with all its chunks stored (unchanged), or failed/skipped (again). None: read it."""
    if old is None or old.file_hash != file_hash:
        return None
    if old.status == "indexed" and stored_chunks == old.chunks:
        return FileResult(old.source_path, "unchanged", chunks=old.chunks, duplicates=old.duplicates)
    if old.status in ("failed", "skipped"):
        return FileResult(old.source_path, old.status, reason=f"{old.error} (unchanged since the last run)")
    return None
