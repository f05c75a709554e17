"""Fixtures for the UI tests: a tiny real library, the real app (real Assistant, MiniLM, whisper
tiny.en, extractive answers, no LLM keys) served on 127.0.0.1 in this process, and spoken
questions made with espeak-ng + sox.

The app is started once per test run of this folder (session scope) and shared by the browser
and the gradio_client tests.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

log = logging.getLogger(__name__)

ARTIFACTS = ROOT / "tests" / "_artifacts"

DOCS = {
    "rental_agreement.md": (
        "# Rental agreement — Flat 4B, 12 Harbour Street\n\n"
        "The tenant may end this tenancy by giving the landlord a written notice period of two months.\n"
        "The landlord must give the tenant a notice period of three months.\n\n"
        "Rent is 950 euros per month, due on the first working day of each month, paid by bank transfer.\n"
        "The security deposit is 1,900 euros and is returned within 30 days after the keys are handed back.\n"
    ),
    "bike_manual.txt": (
        "Bicycle maintenance manual.\n\n"
        "Inflate the tyres of the city bike to 4.5 bar. Lubricate the chain every 300 kilometres with a "
        "dry lubricant. The brake pads should be replaced when the groove on the pad is no longer visible.\n"
    ),
    "garden.md": (
        "# Garden notes\n\n"
        "Tomatoes are sown indoors in March and planted out after the last frost in mid May.\n"
        "Water the basil in the morning and never let the pots stand in water.\n"
    ),
}


@dataclass
class RunningApp:
    url: str
    assistant: object
    cfg: object
    library_dir: Path
    base_dir: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def speak_to_wav(text: str, out: Path) -> Path:
    """A spoken question as a 48 kHz mono WAV (word gaps help tiny.en)."""
    raw = out.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en+m3", "-s", "150", "-g", "6", "-w", str(raw), text], check=True)
    subprocess.run(
        ["sox", str(raw), "-r", "48000", "-c", "1", "-b", "16", str(out), "pad", "0.3", "0.3"], check=True
    )
    raw.unlink()
    return out


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def spoken_question(tmp_path_factory) -> Path:
    return speak_to_wav(
        "what is the notice period in my rental agreement", tmp_path_factory.mktemp("audio") / "question.wav"
    )


def demo_library(base: Path, speech_model: str):
    """The tiny library's documents under `base`/docs and a config for an app over them (MiniLM,
    `speech_model`, the trained intent adapter, data under `base`)."""
    from assistant.config import load_config

    docs = base / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    cfg = load_config(ROOT / "config.yaml")
    cfg.embedder.backend = "minilm"
    cfg.speech.model = speech_model
    cfg.intent.adapter_dir = str(ROOT / "models" / "intent_adapter")
    cfg._base_dir = base
    return docs, cfg


@pytest.fixture(scope="session")
def hark_app(tmp_path_factory):
    """The real app on a free port; the tiny library is ingested before the page is served."""
    import os

    from assistant.assistant import Assistant
    from models.runtime.errors import HarkError
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    base = tmp_path_factory.mktemp("hark_app")
    docs, cfg = demo_library(base, "tiny.en")
    cfg.speech.beam_size = 5  # beam 5 hears espeak reliably
    cfg.ui.max_upload_mb = 1
    cfg.ui.max_upload_files = 5

    assistant = Assistant(cfg)
    try:
        assistant.warm_up()
    except HarkError as exc:
        if (ROOT / "models" / "intent_adapter").exists():
            raise
        # not trained yet in this checkout: the Assistant routes by rules, as it does for users
        log.warning("warm-up without the intent adapter: %s", exc)
    report = assistant.ingest([docs])
    assert {f.status for f in report.files} == {"added"}, report

    demo = build_app(assistant, cfg)
    port = free_port()
    plan = LaunchPlan(host="127.0.0.1", port=port, share=False, auth=None)
    url, _ = serve(demo, cfg, plan, block=False)
    yield RunningApp(
        url=url, assistant=assistant, cfg=cfg, library_dir=cfg.path(cfg.ui.library_dir), base_dir=base
    )
    demo.close()
    shutil.rmtree(base, ignore_errors=True)


@contextmanager
def app_sharing_models(hark_app: RunningApp, cfg) -> Iterator[str]:  # noqa: ANN001 - a HarkConfig
    """Another running app with its own config (providers, limits…) that shares `hark_app`'s loaded
    models and library; yields its URL."""
    from assistant.assistant import Assistant
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    parts = hark_app.assistant.parts
    assistant = Assistant(
        cfg,
        embedder=parts.embedder.get(),
        store=parts.store.get(),
        classifier=parts.classifier.get_or_none(),
        transcriber=parts.transcriber.get_or_none(),
        synthesiser=parts.synthesiser.get_or_none(),
    )
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
    try:
        yield url
    finally:
        demo.close()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def fake_microphone(wav: Path, autoplay: bool = False) -> tuple[str, ...]:
    """Chromium flags for a microphone that plays `wav` once from the moment the page opens it."""
    flags = (
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}%noloop",
    )
    return ("--autoplay-policy=no-user-gesture-required", *flags) if autoplay else flags


def vowel_blip(folder: Path, seconds: float, rate: int = 48000) -> Path:
    """`seconds` of a spoken vowel between 0.3 s of quiet and 2 s of quiet: a sound, not a word."""
    raw = folder / "ah.wav"
    subprocess.run(["espeak-ng", "-v", "en+m3", "-s", "150", "-w", str(raw), "aah"], check=True)
    out = folder / f"blip_{seconds}_{rate}.wav"
    subprocess.run(
        [
            "sox",
            str(raw),
            "-r",
            str(rate),
            "-c",
            "1",
            "-b",
            "16",
            str(out),
            "trim",
            "0.05",
            str(seconds),
            "pad",
            "0.3",
            "2",
        ],
        check=True,
    )
    return out


@contextmanager
def chromium(*extra_args: str) -> Iterator:
    """Debian's headless Chromium driven by Playwright (closed network: no background fetches)."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail("Debian chromium is required for the browser tests (.ci/install --test)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args])
        try:
            yield browser
        finally:
            browser.close()
