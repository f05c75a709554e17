"""The files manifest: one row per ingested file (path → content hash, chunks, status), stored as a
LanceDB table next to the chunks table it describes (`<chunks table>__files`).

An entry is written only after the file's chunks are committed, so a crash between the two leaves a
file whose chunks exist without (or with a stale) entry; the next ingest sees the mismatch and
replaces the file's chunks atomically.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

log = logging.getLogger(__name__)

def schema():  # noqa: ANN201 - a pyarrow.Schema; pyarrow is imported only where a table is touched
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("source_path", pa.string()),
            pa.field("root", pa.string()),
            pa.field("file_hash", pa.string()),
            pa.field("title", pa.string()),
            pa.field("chunks", pa.int32()),
            pa.field("duplicates", pa.int32()),
            pa.field("status", pa.string()),
            pa.field("error", pa.string()),
            pa.field("updated", pa.float64()),
        ]
    )


@dataclass
class DocumentInfo:
    """What the library knows about one file."""

    source_path: str
    title: str = ""
    chunks: int = 0
    file_hash: str = ""
    status: str = "indexed"  # indexed | failed | skipped
    error: str = ""
    updated: float = 0.0  # unix seconds
    root: str = ""  # the library root the file was found under (absolute path)
    duplicates: int = 0  # chunks not stored because the same text is already stored

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def table_name(prefix: str, identity: str) -> str:
    """The chunks table of an embedder's vector space (its manifest: `<name>__files`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", f"{prefix}__{identity}").strip("_")


def sql_str(value: str) -> str:
    """A SQL string literal for LanceDB filters."""
    return "'" + value.replace("'", "''") + "'"


class Manifest:
    """Read and write the manifest table (opened or created by the store)."""

    def __init__(self, db: Any, name: str) -> None:
        self._db = db
        self.name = name
        self._table = self._open()

    def _open(self) -> Any:
        if self.name in self._db.list_tables().tables:
            return self._db.open_table(self.name)
        return self._db.create_table(self.name, schema=schema(), exist_ok=True)

    @property
    def table(self) -> Any:
        return self._table

    def refresh(self) -> None:
        """See the latest committed version (another process may have written)."""
        self._table.checkout_latest()

    def all(self) -> dict[str, DocumentInfo]:
        rows = self._table.to_arrow().to_pylist()
        return {r["source_path"]: DocumentInfo(**r) for r in rows}

    def upsert(self, infos: list[DocumentInfo]) -> None:
        if not infos:
            return
        now = time.time()
        rows = []
        for info in infos:
            info.updated = info.updated or now
            rows.append(info.to_row())
        import pyarrow as pa

        data = pa.Table.from_pylist(rows, schema=schema())
        (
            self._table.merge_insert("source_path")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(data)
        )

    def delete(self, source_paths: list[str]) -> None:
        if source_paths:
            self._table.delete("source_path IN (" + ", ".join(sql_str(p) for p in source_paths) + ")")

    def clear(self) -> None:
        self._db.drop_table(self.name, ignore_missing=True)
        self._table = self._open()
