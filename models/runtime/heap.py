"""The process heap after the models load or the library changes: free pages returned to the system
(`trim_heap`), and, opt-in, the resident rest backed by transparent huge pages (`collapse_heap`).
`settle_heap(huge_pages)` does both, in that order; the app's wiring calls it after loading and
after each ingest or deletion (ui/app.py), never the turn or the Assistant.

Trim: loading models and reading the library's snapshot leave ~140 MB of freed but still resident
memory in glibc's heap (measured with CLIP, 10k chunks: VmRSS 1932 → 1790 MB after `malloc_trim`).

Huge pages (`runtime.huge_pages`, off by default) — when it helps: on a virtual machine that shadows
page tables, the first touch of each 4 KB page after the CPU has been idle costs microseconds, and
every turn starts idle (the previous answer's time to first token is ~200 ms of waiting). There, with
the heap in 2 MB pages, a query embedding after an idle pause costs about what it costs back to back.
On bare metal, or a VM with nested paging, there is nothing to win: leave it off.

What: every aligned 2 MB block of the `[heap]` that is almost entirely resident gets `MADV_COLLAPSE`
(Linux 6.1+): the kernel replaces its small pages by one huge page now. Blocks that are partly
untouched are left alone, so the resident size grows by at most `1 - min_resident` of what is
collapsed. Nothing else changes: no `MADV_HUGEPAGE` flag, so memory allocated later keeps small pages
and glibc's allocation pattern is untouched. Only the heap: collapsing the large anonymous mappings
as well (the ONNX and CTranslate2 weights, the vector matrix) made whisper's transcription slower and
the embedding and intent stages no faster than the heap alone.

Not Linux, transparent huge pages off, or a kernel without MADV_COLLAPSE: nothing happens and the
report says why. Never raises.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MADV_COLLAPSE = 25
_EINVAL = 22
_THP = Path("/sys/kernel/mm/transparent_hugepage")


@dataclass
class HugePageReport:
    supported: bool
    reason: str = ""  # why nothing was done, when not supported
    blocks: int = 0  # huge pages made (or already there)
    failed: int = 0  # blocks the kernel refused (e.g. no free huge page)
    block_mb: float = 2.0

    @property
    def collapsed_mb(self) -> float:
        return self.blocks * self.block_mb

    def __str__(self) -> str:
        if not self.supported:
            return f"huge pages not used: {self.reason}"
        return f"huge pages: {self.collapsed_mb:.0f} MB of the heap collapsed ({self.failed} blocks refused)"


class _NoCollapse(Exception):
    pass


def _support() -> tuple[int, str]:
    """(huge page size in bytes, "") or (0, why not)."""
    if not sys.platform.startswith("linux"):
        return 0, "not Linux"
    try:
        mode = (_THP / "enabled").read_text()
        size = int((_THP / "hpage_pmd_size").read_text())
    except (OSError, ValueError):
        return 0, "the kernel has no transparent huge pages"
    if "[never]" in mode:
        return 0, "transparent huge pages are off (/sys/kernel/mm/transparent_hugepage/enabled)"
    return size, ""


def _heap_ranges() -> list[tuple[int, int]]:
    out = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[5] == "[heap]":
            start, end = (int(x, 16) for x in fields[0].split("-"))
            out.append((start, end))
    return out


def _collapse_range(
    libc: Any, start: int, end: int, huge: int, min_resident: float, report: HugePageReport
) -> None:
    first, last = -(-start // huge) * huge, end // huge * huge
    if last <= first:
        return
    page = os.sysconf("SC_PAGE_SIZE")
    per_block = huge // page
    resident = (ctypes.c_ubyte * ((last - first) // page))()
    if libc.mincore(ctypes.c_void_p(first), ctypes.c_size_t(last - first), resident) != 0:
        return  # the mapping changed under us: leave it
    present = (np.frombuffer(resident, dtype=np.uint8) & 1).reshape(-1, per_block).sum(axis=1)
    for b in np.flatnonzero(present >= min_resident * per_block):
        addr = first + int(b) * huge
        if libc.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(huge), MADV_COLLAPSE) == 0:
            report.blocks += 1
        elif ctypes.get_errno() == _EINVAL and report.blocks == 0 and report.failed == 0:
            raise _NoCollapse
        else:
            report.failed += 1


def collapse_heap(min_resident: float = 0.95) -> HugePageReport:
    """Turn the almost fully resident 2 MB blocks of the heap into huge pages (see the module doc)."""
    huge, why = _support()
    if not huge:
        return HugePageReport(False, why)
    report = HugePageReport(True, block_mb=huge / 2**20)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        for start, end in _heap_ranges():
            _collapse_range(libc, start, end, huge, min_resident, report)
    except _NoCollapse:
        return HugePageReport(False, "the kernel has no MADV_COLLAPSE (Linux 6.1+)")
    except (OSError, AttributeError, ValueError) as exc:
        return HugePageReport(False, f"{type(exc).__name__}: {exc}")
    log.info("%s", report)
    return report


def trim_heap() -> bool:
    """Return the heap's free pages to the system (glibc `malloc_trim`); False where there is none."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return False


def settle_heap(huge_pages: bool = False) -> HugePageReport | None:
    """After the models load or the library changes: return the heap's free pages, then (only with
    `huge_pages`) back the resident rest with huge pages. The report when it collapsed, else None."""
    trim_heap()  # first: what is free goes back, and is not made a huge page
    return collapse_heap() if huge_pages else None
