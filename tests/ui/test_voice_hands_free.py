"""Hands-free in a real browser: three questions in a row from one open microphone (a WAV file with
the questions 7 s apart), each ended by the silence after it, none from the silences between."""

from __future__ import annotations

import subprocess

import pytest

from tests.ui.conftest import chromium, speak_to_wav
from tests.ui.test_voice_browser import _users

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def three_questions(tmp_path_factory):
    """Three questions 7 s apart in one file: the microphone stays open between them."""
    folder = tmp_path_factory.mktemp("hands_free")
    parts = []
    for i, text in enumerate(
        ["what is the notice period in my rental agreement", "how much is the rent", "who is the landlord"]
    ):
        parts.append(speak_to_wav(text, folder / f"q{i}.wav"))
    gap = folder / "gap.wav"
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(gap), "trim", "0", "7"], check=True)
    out = folder / "three.wav"
    subprocess.run(["sox", str(parts[0]), str(gap), str(parts[1]), str(gap), str(parts[2]), str(out)], check=True)
    return out


def test_hands_free_turns_one_after_another(three_questions, hark_app):
    with chromium(
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={three_questions}%noloop",
    ) as browser:
        ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
        page = ctx.new_page()
        page.goto(hark_app.url)
        page.locator("#question textarea").wait_for()
        page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
        page.get_by_role("tab", name="Settings").click()
        page.locator("#hands-free input").check()  # the microphone opens now: the file starts
        page.get_by_role("tab", name="Chat").click()
        try:
            users = _users(page, 3)
        except Exception:
            log = page.evaluate("window.harkVoiceLog")
            shown = page.locator("#chat").inner_text()
            raise AssertionError(f"voice log {log}; chat {shown!r}") from None
        assert "notice" in users[0] and "rental" in users[0], users
        assert "rent" in users[1], users
        assert "landlord" in users[2], users
        assert len(users) == 3  # no turn from the silences between
        kinds = [e["kind"] for e in page.evaluate("window.harkVoiceLog")]
        assert kinds.count("turn") == 3 and kinds.count("mic-open") == 1, kinds  # one open microphone
        ctx.close()
