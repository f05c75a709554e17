"""The bad-file corpus through the real Ingestor (MiniLM, a real LanceDB table in tmp_path).

Each file is rejected with a clear reason or indexed (its marker sentence then searchable); the
good files beside them are indexed; nothing is written outside the data folder; no hostile filename
makes a shell run anything. The zip bomb runs in a child process watched for memory, so a loader
that inflates it cannot take the test run (or the machine) down with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.hostile.corpus import BadFile, build_bad_corpus, long_line, pwned_files, tree_listing

pytestmark = pytest.mark.timeout(240)

MAX_FILE_MB = 1.0
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x1b]")


def _clear(reason: str) -> bool:
    """A reason a person can read: short, no traceback, no object repr."""
    return bool(reason.strip()) and len(reason) < 400 and "Traceback" not in reason and " object at 0x" not in reason


def _open(root: Path, embedder, max_file_mb: float = MAX_FILE_MB):
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    store = ChunkStore.open(str(root / "data" / "lancedb"), embedder.identity, embedder.dim, StoreSettings())
    settings = IngestSettings(max_file_mb=max_file_mb, embed_batch_size=32)
    return store, Ingestor(store, embedder, settings)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, minilm):
    """The corpus (without the zip bomb) ingested once; shared by the assertions below."""
    root = tmp_path_factory.mktemp("badfiles")
    lib, cwd = root / "library", root / "cwd"
    cwd.mkdir()
    (root / "outside.txt").write_text("a file beside the library")
    files = build_bad_corpus(lib, max_file_mb=MAX_FILE_MB, long_line_mb=0.2, bomb_bytes=1 << 20)
    bomb = next(f for f in files if f.kind == "zip_bomb_docx")
    bomb.path.unlink()  # the real 2 GiB bomb runs in a watched child process (test below)
    files = [f for f in files if f.kind != "zip_bomb_docx"]
    store, ingestor = _open(root, minilm)
    before = tree_listing(root, exclude=(root / "data",))
    old_cwd = os.getcwd()
    os.chdir(cwd)  # a command built from a filename would run here
    try:
        t0 = time.perf_counter()
        report = ingestor.ingest([lib])
        seconds = time.perf_counter() - t0
    finally:
        os.chdir(old_cwd)
    after = tree_listing(root, exclude=(root / "data",))
    return {
        "root": root, "lib": lib, "files": files, "store": store, "ingestor": ingestor,
        "report": report, "seconds": seconds, "before": before, "after": after,
    }


def _result(ing, f: BadFile):
    by = ing["report"].by_path()
    rel = str(f.path.relative_to(ing["lib"]))
    return by.get(rel) or by.get(f.path.name)


def _found(store, minilm, marker: str, source: str, k: int = 5) -> bool:
    """The marker's codeword is found by full-text search, or the marker by dense search (top k)."""
    codeword = marker.rstrip(".").split()[-1]
    hits = store.fts_search(codeword, k) + store.search(minilm.embed_query(marker), k)
    return any(h.source_path.endswith(source) and codeword in h.chunk_text for h in hits)


def test_every_file_has_a_result_and_the_run_finished(ingested):
    missing = [f.kind for f in ingested["files"] if _result(ingested, f) is None]
    assert not missing, f"no per-file result for {missing}: {[r.source_path for r in ingested['report'].files]}"
    assert ingested["seconds"] < 180


@pytest.mark.parametrize("kind", [
    "truncated_pdf", "header_only_pdf", "empty_pdf", "encrypted_pdf", "png_named_pdf", "random_docx",
    "empty_txt", "whitespace_md", "binary_txt", "giant_line",
])
def test_bad_file_is_rejected_with_a_clear_reason(ingested, kind):
    f = next(x for x in ingested["files"] if x.kind == kind)
    r = _result(ingested, f)
    assert r is not None
    assert r.status in ("failed", "skipped"), f"{kind}: {r}"
    assert _clear(r.reason), f"{kind}: unclear reason {r.reason!r}"
    assert r.chunks == 0


def test_encrypted_and_oversized_reasons_say_why(ingested):
    by_kind = {f.kind: _result(ingested, f) for f in ingested["files"]}
    assert "encrypt" in by_kind["encrypted_pdf"].reason.lower() or "password" in by_kind["encrypted_pdf"].reason.lower()
    big = by_kind["giant_line"].reason.lower()
    assert "mb" in big or "large" in big or "size" in big, big


def test_good_and_recoverable_files_are_indexed_and_searchable(ingested, minilm):
    problems = []
    for f in ingested["files"]:
        r = _result(ingested, f)
        if f.expect == "index":
            if r is None or r.status != "added" or r.chunks < 1:
                problems.append(f"{f.kind}: {r}")
            elif not _found(ingested["store"], minilm, f.marker, f.path.name):
                problems.append(f"{f.kind}: indexed but its marker is not found")
        elif f.expect == "either" and r is not None:
            if r.status == "added":
                if f.marker and not _found(ingested["store"], minilm, f.marker, f.path.name):
                    problems.append(f"{f.kind}: indexed but its marker is not found")
            elif not _clear(r.reason):
                problems.append(f"{f.kind}: {r.status} without a clear reason: {r.reason!r}")
    assert not problems, "\n".join(problems)


def test_hostile_names_keep_their_names_and_run_nothing(ingested):
    root = ingested["root"]
    assert not pwned_files(root, Path.cwd()), "a filename was executed by a shell"
    stored = {d.source_path for d in ingested["store"].documents()}
    for f in ingested["files"]:
        if f.kind.startswith("name_") and f.expect == "index":
            assert f.path.name in stored, f"{f.path.name!r} not stored under its own name"


def test_nothing_written_outside_the_data_folder(ingested):
    root = ingested["root"]
    assert ingested["after"] == ingested["before"], (ingested["after"] ^ ingested["before"])
    assert not (root.parent / "zip_slip_escaped.txt").exists()
    assert not Path("/tmp/zip_slip_absolute.txt").exists()
    for p in (ingested["lib"],):  # the library itself is read, never modified
        assert all(f.path.exists() for f in ingested["files"] if f.path.parent == p)


def test_the_terminal_report_shows_names_without_escape_sequences(ingested):
    """`launch.py ingest` prints this report: a file name must not clear the screen or recolour it."""
    from ui.cli_ingest import format_report

    text = format_report(ingested["report"])
    bad = [line for line in text.splitlines() if "\x1b" in line or "\x07" in line]
    assert not bad, bad


def test_stored_text_has_no_terminal_control_characters(ingested):
    """Escape sequences and NULs in a document must not reach the terminal `ask`/`chat` or the UI."""
    rows = ingested["store"].table.to_arrow().select(["source_path", "chunk_text"]).to_pylist()
    bad = [(r["source_path"], CONTROL.findall(r["chunk_text"])[:5]) for r in rows if CONTROL.search(r["chunk_text"])]
    assert not bad, bad


def test_a_second_run_changes_nothing(ingested):
    before = ingested["store"].count()
    report = ingested["ingestor"].ingest([ingested["lib"]])
    assert report.totals["added"] == 0 and report.totals["updated"] == 0, report.totals
    assert ingested["store"].count() == before
    for f in ingested["files"]:
        r = report.by_path().get(str(f.path.relative_to(ingested["lib"])))
        if f.expect == "reject":
            assert r is not None and r.status in ("failed", "skipped"), (f.kind, r)


@pytest.mark.slow
def test_a_multi_megabyte_line_is_chunked_without_hanging(tmp_path, minilm):
    """One 1.5 MB line under a 10 MB limit: indexed (the spaCy 1,000,000-character limit is a trap)."""
    lib = tmp_path / "library"
    lib.mkdir()
    marker = "The fivemeg codeword of this document is fivemegzebra."
    (lib / "five_mb_line.txt").write_bytes(long_line(3 * 512 * 1024, marker))
    store, ingestor = _open(tmp_path, minilm, max_file_mb=10)
    t0 = time.perf_counter()
    report = ingestor.ingest([lib])
    seconds = time.perf_counter() - t0
    r = report.by_path()["five_mb_line.txt"]
    assert r.status == "added" and r.chunks >= 1, r
    assert _found(store, minilm, marker, "five_mb_line.txt")
    assert seconds < 120, seconds


ZIP_BOMB_CHILD = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from knowledge.loaders import LoadFailed, LoadSkipped, load_document
print("READY", flush=True)
for p in sorted(Path(sys.argv[2]).iterdir()):
    try:
        doc = load_document(p)
        print("RESULT", p.name, "added", len(doc.blocks), flush=True)
    except (LoadFailed, LoadSkipped) as exc:
        print("RESULT", p.name, "failed", str(exc).replace("\n", " "), flush=True)
"""


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@pytest.mark.slow
def test_zip_bomb_docx_is_refused_without_inflating(tmp_path):
    """A 3 MB .docx whose document.xml inflates to 2 GiB: refused from the zip directory alone.

    Runs the Ingestor's loader (`load_document`, where a bomb would inflate) in a child process,
    killed if its memory passes 2.5 GB (reading the member whole needs more than 2 GB) or after 90 s.
    """
    lib = tmp_path / "library"
    files = build_bad_corpus(lib, names=False)
    for f in files:
        if f.kind not in ("zip_bomb_docx", "good_docx"):
            f.path.unlink()
    proc = subprocess.Popen(
        [sys.executable, "-c", ZIP_BOMB_CHILD, str(ROOT), str(lib)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"},
    )
    peak, killed, t0 = 0.0, "", time.monotonic()
    try:
        while proc.poll() is None:
            peak = max(peak, _rss_mb(proc.pid))
            if peak > 2500:
                killed = f"memory passed 2.5 GB ({peak:.0f} MB): the bomb was inflated"
            elif time.monotonic() - t0 > 90:
                killed = "still running after 90 s"
            if killed:
                proc.kill()
                break
            time.sleep(0.05)
    finally:
        out = proc.communicate(timeout=30)[0]
    assert not killed, f"{killed}\n{out[-2000:]}"
    results = {line.split()[1]: line for line in out.splitlines() if line.startswith("RESULT ")}
    assert "zip_bomb.docx" in results, out[-2000:]
    assert " failed " in results["zip_bomb.docx"] or " skipped " in results["zip_bomb.docx"], results
    assert " added " in results.get("good.docx", ""), results
    assert peak < 2500


def test_same_file_name_in_two_folders_keeps_both(tmp_path, minilm):
    """`ingest ~/work ~/home`, both holding notes.txt: neither silently replaces the other."""
    a, b = tmp_path / "work", tmp_path / "home"
    a.mkdir()
    b.mkdir()
    (a / "notes.txt").write_text("The work notes codeword is saffronkestrel.\n")
    (b / "notes.txt").write_text("The home notes codeword is indigomarmot.\n")
    store, ingestor = _open(tmp_path, minilm)

    def stored() -> str:
        return " ".join(r["chunk_text"] for r in store.table.to_arrow().select(["chunk_text"]).to_pylist())

    report = ingestor.ingest([a, b])
    assert "saffronkestrel" in stored() and "indigomarmot" in stored(), (stored(), report.files)
    ingestor.ingest([a])  # a later run over one folder must not drop the other folder's file
    assert "saffronkestrel" in stored() and "indigomarmot" in stored(), stored()
