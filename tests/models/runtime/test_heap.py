"""models/runtime/heap.py on this machine's real glibc: freed heap memory goes back to the system."""

from __future__ import annotations

from pathlib import Path

from models.runtime.heap import trim_heap


def _heap_kb() -> dict[str, int]:
    """Rss (kB) summed over the [heap] mappings, from /proc/self/smaps."""
    out = {"Rss": 0}
    in_heap = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            in_heap = len(fields) > 5 and fields[5] == "[heap]"
        elif in_heap and fields[0].rstrip(":") in out:
            out[fields[0].rstrip(":")] += int(fields[1])
    return out


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
