"""One ingest at a time per library, also across machines sharing object storage.

Two ingests writing one table at once can store the same chunk twice (LanceDB's merge_insert does
not see another writer's inserts) and each may remove the other's fresh files as left-overs; so an
ingest first takes a lease: one row in a small table beside the chunks table (`<table>__lock`).

- Taking it is one conditional `update` (`owner = '' OR expires < now`): LanceDB commits are atomic
  on a folder and on S3 (conditional writes), and a writer that loses the race re-runs the update
  against the winner's version, so it matches nothing: exactly one ingest gets the lease. Two
  creators at once can leave two free rows; an ingest that took one while another's lease stands
  gives it back.
- The holder renews it every third of `store.ingest_lock_seconds`; a crashed holder's lease
  expires after that time, and at once when it ran on this machine and its process is gone.
  Expiry compares wall clocks: machines sharing a library should keep their clocks in sync.
- A holder that finds its lease taken over (it could not renew it in time) stops before its next
  commit.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

import pyarrow as pa

from knowledge.manifest import sql_str
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

SCHEMA = pa.schema(
    [
        pa.field("lock", pa.string()),
        pa.field("owner", pa.string()),
        pa.field("host", pa.string()),
        pa.field("pid", pa.int64()),
        pa.field("started", pa.float64()),
        pa.field("expires", pa.float64()),
    ]
)
_ATTEMPTS = 6
_FREE = {"lock": "ingest", "owner": "", "host": "", "pid": 0, "started": 0.0, "expires": 0.0}


class IngestBusy(HarkError):
    """Another ingest holds this library's lease (or took it over from this one)."""


class IngestLock:
    """The ingest lease of one chunks table (opened or created now): `acquire()` … `release()`, or
    use it as a context manager around a whole ingest."""

    def __init__(self, db: Any, name: str, seconds: float) -> None:
        self._db = db
        self.name = name
        self.seconds = seconds
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:12]}"
        self._table: Any = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False
        self._open()

    def _open(self) -> Any:
        """The lock table, created with one free row when missing. Two creators at once: one may
        find the other's table half made (retried), or leave two free rows (every update below
        covers all rows alike)."""
        for attempt in range(_ATTEMPTS):
            try:
                if self._table is None:
                    if self.name in self._db.list_tables().tables:
                        self._table = self._db.open_table(self.name)
                    else:
                        data = pa.Table.from_pylist([_FREE], SCHEMA)
                        self._table = self._db.create_table(self.name, data=data, exist_ok=True)
                return self._table
            except (ValueError, RuntimeError) as exc:
                if attempt == _ATTEMPTS - 1 or not _racing(exc):
                    raise
                self._table = None
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def holder(self) -> dict[str, Any] | None:
        """The current lease row when someone holds an unexpired lease, else None."""
        held = self._held()
        return held[0] if held else None

    def _held(self) -> list[dict[str, Any]]:
        """The unexpired lease rows (one, but two creators at once can leave two free rows, and two
        ingests can then each take one)."""
        table = self._open()
        table.checkout_latest()
        now = time.time()
        return [row for row in table.to_arrow().to_pylist() if row["owner"] and row["expires"] >= now]

    def acquire(self) -> None:
        values = {"owner": self.owner, "host": self.host, "pid": self.pid}
        for attempt in range(_ATTEMPTS):
            now = time.time()
            taken = f"owner = '' OR expires < {now!r}"
            dead = self._dead_local_holder()
            if dead:
                taken += f" OR owner = {sql_str(dead)}"
            try:
                got = self._open().update(where=taken, values={**values, "started": now,
                                                               "expires": now + self.seconds})
                break
            except RuntimeError as exc:  # a table being created meanwhile: read it again
                if attempt == _ATTEMPTS - 1 or not _racing(exc):
                    raise
                self._table = None
                time.sleep(0.05 * (attempt + 1))
        held = self._held()
        others = [row for row in held if row["owner"] != self.owner]
        if got.rows_updated == 0 or others or len(held) == len(others):
            if len(held) > len(others):  # took a second free row beside another's lease: give it back
                self._open().update(where=f"owner = {sql_str(self.owner)}", values=dict(_FREE))
            raise _busy(others[0] if others else None, self.seconds)
        self.lost = False
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name="ingest-lock", daemon=True)
        self._renewer.start()

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=10)
            self._renewer = None
        self.lost = False
        try:
            self._open().update(where=f"owner = {sql_str(self.owner)}", values=dict(_FREE))
        except Exception as exc:  # noqa: BLE001 - the lease then expires on its own
            log.warning("could not release the ingest lock (it expires within %.0f s): %s", self.seconds,
                        type(exc).__name__)

    def check(self) -> None:
        """Raise IngestBusy when the lease was taken over (before a commit)."""
        if self.lost:
            raise IngestBusy(
                "this ingest lost its lock on the library (it could not renew it in time) and another "
                "ingest took over; it stopped before writing more",
                "run it again when the other ingest has finished",
            )

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                res = self._open().update(where=f"owner = {sql_str(self.owner)}",
                                          values={"expires": time.time() + self.seconds})
            except Exception as exc:  # noqa: BLE001 - retried at the next beat; the lease may expire
                log.debug("could not renew the ingest lock: %s", type(exc).__name__)
                continue
            if res.rows_updated == 0:
                self.lost = True
                return

    def _dead_local_holder(self) -> str:
        """The owner of a lease held by a process of this machine that no longer runs ("" if none)."""
        for row in self._open().to_arrow().to_pylist():
            if row["owner"] and row["host"] == self.host and row["pid"] != self.pid and not _alive(row["pid"]):
                return row["owner"]
        return ""

    def __enter__(self) -> IngestLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _racing(exc: BaseException) -> bool:
    """A failure of two writers creating or changing the lock table at the same moment."""
    text = str(exc).lower()
    return any(w in text for w in ("incompatible transaction", "conflict", "was not found", "already exists"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _busy(row: dict[str, Any] | None, seconds: float) -> IngestBusy:
    since = ""
    if row:
        started = time.strftime("%H:%M:%S UTC", time.gmtime(row["started"]))
        since = f" (since {started}, on {row['host']}, process {row['pid']})"
    return IngestBusy(
        f"another ingest is running on this library{since}; this one did not start",
        f"run it again when that one has finished (a crashed ingest's lock expires after {seconds:.0f} s, "
        "at once on the machine it ran on)",
    )
