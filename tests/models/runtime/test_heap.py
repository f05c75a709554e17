"""models/runtime/heap.py on this machine's real kernel and glibc: freed heap memory goes back to the
system, the resident heap becomes huge pages without growing, and a kernel that cannot do it gets a
report instead of an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.runtime import heap
from models.runtime.heap import collapse_heap, trim_heap


def _heap_kb() -> dict[str, int]:
    """Rss and AnonHugePages (kB) summed over the [heap] mappings, from /proc/self/smaps."""
    out = {"Rss": 0, "AnonHugePages": 0}
    in_heap = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            in_heap = len(fields) > 5 and fields[5] == "[heap]"
        elif in_heap and fields[0].rstrip(":") in out:
            out[fields[0].rstrip(":")] += int(fields[1])
    return out


def test_the_resident_heap_becomes_huge_pages_and_nothing_grows() -> None:
    size, why = heap._support()
    blocks = [bytes([i % 251]) * (48 << 10) for i in range(2500)]  # ~120 MB of 48 KB heap allocations
    before = _heap_kb()
    report = collapse_heap()
    after = _heap_kb()
    if not size:  # a kernel without transparent huge pages: a reason, no change
        assert not report.supported and report.reason == why
        return
    assert report.supported, report.reason
    assert report.failed == 0
    assert report.collapsed_mb >= 64, str(report)
    assert after["AnonHugePages"] >= 64 * 1024
    assert after["Rss"] <= before["Rss"] * 1.05 + 4096  # only almost-full blocks are collapsed
    assert all(b[0] == i % 251 and len(b) == 48 << 10 for i, b in enumerate(blocks))  # contents intact
    again = collapse_heap()  # idempotent: the same blocks, already huge
    assert again.supported and again.collapsed_mb >= report.collapsed_mb * 0.9


def test_a_system_without_transparent_huge_pages_gets_a_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "enabled").write_text("always madvise [never]\n")
    (tmp_path / "hpage_pmd_size").write_text("2097152\n")
    monkeypatch.setattr(heap, "_THP", tmp_path)
    report = collapse_heap()
    assert not report.supported and "off" in report.reason and "huge pages not used" in str(report)
    monkeypatch.setattr(heap, "_THP", tmp_path / "missing")
    assert "no transparent huge pages" in collapse_heap().reason


def test_trim_returns_freed_heap_memory() -> None:
    keep = [bytes([1]) * (48 << 10) for _ in range(50)]
    freed = [bytes([2]) * (48 << 10) for _ in range(2000)]  # ~94 MB of heap allocations
    keep.append(bytes([3]) * (48 << 10))  # allocated after them: the freed ones are not at the top
    del freed
    before = _heap_kb()["Rss"]
    assert trim_heap()
    after = _heap_kb()["Rss"]
    assert before - after >= 60 * 1024, (before, after)
    assert all(len(b) == 48 << 10 for b in keep)


def test_settle_heap_collapses_only_when_asked() -> None:
    assert heap.settle_heap() is None  # the default: trim only, no huge pages
    report = heap.settle_heap(huge_pages=True)
    assert report is not None and (report.supported or report.reason)
