"""Faults: storage that cannot be written (read-only, full), models that cannot load, the CLI's face.

Read-only and full file systems are made honestly with `mount` (a read-only bind mount; a small
tmpfs) — root's CAP_DAC_OVERRIDE ignores chmod, so permissions alone would prove nothing here. Where
`mount` is not permitted (a CI runner without privileges) and we are not root, chmod is used for the
read-only case; the disk-full case then cannot be made and is reported as skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.timeout(240)

V1 = "The storage test codeword is amberfalcon. The office opens at nine in the morning."
V2 = "The storage test codeword is cobaltheron. The office now opens at ten in the morning."


def _can_mount() -> bool:
    probe = Path(f"/tmp/hark-mount-probe-{uuid.uuid4().hex[:8]}")
    probe.mkdir()
    try:
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)],
                            capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", str(probe)], check=False)
        return ok
    finally:
        probe.rmdir()


CAN_MOUNT = sys.platform == "linux" and _can_mount()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` becomes read-only for this process (a bind mount; chmod when not root)."""
    if CAN_MOUNT:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    elif os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p, m in modes.items():
                p.chmod(m)
    else:
        pytest.skip("root without mount permission: a read-only folder cannot be made honestly here")


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "24m") -> Iterator[Path]:
    if not CAN_MOUNT:
        pytest.skip("mount is not permitted here: a full disk cannot be made honestly")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Fill the file system of `folder` to the last byte."""
    filler = folder / "filler.bin"
    with open(filler, "wb") as fh:
        block = b"\0" * (1 << 16)
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError:
            pass
    with contextlib.suppress(OSError), open(filler, "ab") as fh:  # the last partial block
        while True:
            fh.write(b"\0")
            fh.flush()
    return filler


def _library(tmp_path: Path, text: str) -> Path:
    lib = tmp_path / "library"
    lib.mkdir(exist_ok=True)
    (lib / "office.txt").write_text(text)
    (lib / "other.md").write_text("# Other\n\nThe garden is watered every Tuesday afternoon.\n")
    return lib


def _store(data: Path, minilm):
    from knowledge.settings import StoreSettings
    from knowledge.store import ChunkStore

    return ChunkStore.open(str(data / "lancedb"), minilm.identity, minilm.dim, StoreSettings())


def _ingest(store, minilm, lib: Path):
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings

    return Ingestor(store, minilm, IngestSettings()).ingest([lib])


def _top_text(store, minilm, q: str) -> str:
    hits = store.search(minilm.embed_query(q), 3)
    return " ".join(h.chunk_text for h in hits)


def _clear_failure(exc_or_report) -> str:
    """The user-facing text of a failed write: a HarkError's message or the report's reasons."""
    from models.runtime.errors import HarkError

    if isinstance(exc_or_report, HarkError):
        return str(exc_or_report)
    return " ".join(f.reason for f in exc_or_report.files if f.status == "failed")


def _write_fails_clearly(store, minilm, lib) -> str:
    from models.runtime.errors import HarkError

    try:
        report = _ingest(store, minilm, lib)
    except HarkError as exc:
        msg = str(exc)
    else:
        assert report.totals["failed"] >= 1, f"the write did not fail: {report.totals}"
        msg = _clear_failure(report)
    assert msg and "Traceback" not in msg and len(msg) < 600, msg
    return msg


def test_read_only_data_dir_gives_a_clear_error_and_keeps_the_index(tmp_path, minilm):
    data = tmp_path / "data"
    lib = _library(tmp_path, V1)
    store = _store(data, minilm)
    assert _ingest(store, minilm, lib).totals["added"] == 2
    (lib / "office.txt").write_text(V2)
    with read_only(data):
        msg = _write_fails_clearly(store, minilm, lib)
        low = msg.lower()
        assert "read-only" in low or "permission" in low or "cannot write" in low or "could not" in low, msg
        # the index answers searches while the folder is read-only, with the old version
        assert "amberfalcon" in _top_text(store, minilm, "storage test codeword")
        reopened = _store(data, minilm)
        assert "amberfalcon" in _top_text(reopened, minilm, "storage test codeword")
    # writable again: the re-run completes the job
    report = _ingest(_store(data, minilm), minilm, lib)
    assert report.totals["updated"] == 1, report.totals
    assert "cobaltheron" in _top_text(_store(data, minilm), minilm, "storage test codeword")


def test_full_disk_gives_a_clear_error_and_keeps_the_index(tmp_path, minilm):
    lib = _library(tmp_path, V1)
    with small_disk(tmp_path / "data") as data:
        store = _store(data, minilm)
        assert _ingest(store, minilm, lib).totals["added"] == 2
        count = store.count()
        (lib / "office.txt").write_text(V2 + " " + "More words to write. " * 3000)
        filler = fill(data)
        msg = _write_fails_clearly(store, minilm, lib)
        assert "space" in msg.lower() or "full" in msg.lower() or "could not" in msg.lower(), msg
        reopened = _store(data, minilm)
        assert reopened.count() == count
        assert "amberfalcon" in _top_text(reopened, minilm, "storage test codeword")
        filler.unlink()
        report = _ingest(_store(data, minilm), minilm, lib)
        assert report.totals["updated"] == 1, report.totals
        assert "cobaltheron" in _top_text(_store(data, minilm), minilm, "storage test codeword")


# ----------------------------------------------------------------------------- the CLI's face


def _config(tmp_path: Path, **blocks: dict) -> Path:
    cfg = {"embedder": {"backend": "minilm"}, "store": {"data_dir": "data"}, "speech": {"model": "tiny.en"}}
    for k, v in blocks.items():
        cfg.setdefault(k, {}).update(v)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _cli(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HOME": str(cwd / "hf_home")}  # an empty hub cache: nothing downloaded earlier helps
    return subprocess.run([sys.executable, str(ROOT / "launch.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_missing_speech_model_offline_is_a_clear_message(tmp_path):
    from tests.hostile.audio import spoken

    wav = spoken("what time does the office open", tmp_path / "q.wav")
    cfg = _config(tmp_path, speech={"model": "large-v3"})  # not bundled, not cached, offline
    r = _cli("transcribe", str(wav), "--config", str(cfg), cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "Traceback" not in out, out[-3000:]
    assert "large-v3" in out and ("offline" in out.lower() or "could not be loaded" in out.lower()), out[-2000:]


def test_missing_clip_weights_without_fallback_is_a_clear_message(tmp_path, capsys):
    """`launch.py ingest` (its real `main`, in this process) with CLIP required and no weights offline."""
    import launch

    lib = _library(tmp_path, V1)
    cfg = _config(tmp_path, embedder={"backend": "clip", "offline_fallback": False})
    rc = launch.main(["ingest", str(lib), "--config", str(cfg)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert rc != 0, text
    assert "Traceback" not in text, text[-3000:]
    assert "clip" in text.lower() or "weights" in text.lower(), text[-2000:]


# ----------------------------------------------------------------- web search and LLM providers


@pytest.fixture(scope="module")
def down_rig(tmp_path_factory, minilm):
    """An Assistant whose LLM providers all point at a closed port, and a switchable web search."""
    from tests.hostile.harness import make_assistant, provider_block
    from tests.serp_server import SerpServer, closed_port_url

    root = tmp_path_factory.mktemp("faults")
    lib = _library(root, V1)
    dead = closed_port_url()
    providers = {
        "openai": provider_block("openai", "m1", dead + "/v1", ["OPENAI_API_KEY"]),
        "groq": provider_block("groq", "m2", dead, ["GROQ_API_KEY"]),
        "gemini": provider_block("gemini", "m3", dead, ["GEMINI_API_KEY"]),
        "local": provider_block("openai_compatible", "m4", dead + "/v1", []),
    }
    with pytest.MonkeyPatch.context() as mp:
        for k in ("OPENAI_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY", "SERPAPI_API_KEY"):
            mp.setenv(k, f"fake-{k.lower()}-0123456789")
        with SerpServer(delay=6) as web:
            rig = make_assistant(root, minilm, library=lib, providers=providers, web_url=web.url, web_timeout=1.5)
            yield rig, web


def test_all_llm_providers_down_gives_the_extractive_answer_with_a_notice(down_rig):
    import time as _t

    rig, _web = down_rig
    t0 = _t.perf_counter()
    r = rig.turn(rig.assistant.new_session(), "When does the office open in the morning?")
    assert r.provider == "extractive", (r.provider, r.notices)
    assert "nine" in r.answer.lower(), r.answer
    assert r.notices, "no notice that the providers are down"
    assert _t.perf_counter() - t0 < 20


@pytest.mark.parametrize("mode", ["down", "slow", "garbage", "layout", "html", "http500", "huge"])
def test_web_search_faults_never_end_the_turn(down_rig, mode):
    import time as _t

    rig, web = down_rig
    if mode == "down":
        from tests.serp_server import closed_port_url

        rig.assistant.parts.websearch.get().close()
        rig.cfg.websearch.base_url = closed_port_url()
        rig.assistant.parts.websearch.get().settings.base_url = rig.cfg.websearch.base_url
    else:
        rig.assistant.parts.websearch.get().settings.base_url = web.url
        rig.assistant.parts.websearch.get().close()
    web.state.mode = mode
    s = rig.assistant.new_session()
    s.always_web_search = True
    t0 = _t.perf_counter()
    r = rig.turn(s, "When does the office open in the morning?")
    elapsed = _t.perf_counter() - t0
    assert r.answer, f"{mode}: no answer ({r.notices})"
    if mode == "huge":  # a valid (large) reply is allowed to be used
        assert elapsed < 20, elapsed
        return
    assert any("web" in n.lower() for n in r.notices), f"{mode}: no notice {r.notices}"
    assert "Traceback" not in " ".join(r.notices)
    assert elapsed < 1.5 + 15, f"{mode}: {elapsed:.1f} s"
