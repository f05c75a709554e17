"""Hands-free in a real browser: five questions in a row from one open microphone (a WAV file with
the questions 6 s apart), each ended by the silence after it, none from the silences between; and
barge-in: the user speaks while Hark is speaking its answer, and the playback stops."""

from __future__ import annotations

import subprocess

import pytest

from tests.ui.conftest import chromium, fake_microphone, speak_to_wav, vowel_blip
from tests.ui.test_voice_browser import TIMEOUT, _users

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.microphone]

FIVE = [
    ("what is the notice period in my rental agreement", ("notice", "rental")),
    ("how much is the rent", ("rent",)),
    ("what is the security deposit", ("deposit",)),
    ("how often should the chain be lubricated", ("lubricated",)),
    ("how much is the rent per month", ("how much",)),
]


def _silence(path, seconds: float):
    subprocess.run(
        ["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(path), "trim", "0", str(seconds)], check=True
    )
    return path


def _join(out, parts):
    subprocess.run(["sox", *map(str, parts), str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def five_questions(tmp_path_factory):
    """Five questions 6 s apart in one file: the microphone stays open between them."""
    folder = tmp_path_factory.mktemp("hands_free")
    gap = _silence(folder / "gap.wav", 6)
    parts = []
    for i, (text, _) in enumerate(FIVE):
        parts += [speak_to_wav(text, folder / f"q{i}.wav"), gap]
    return _join(folder / "five.wav", parts[:-1])


def _open_page(browser, url):
    """A tab with microphone access, once the page has its voice token."""
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    page = ctx.new_page()
    page.goto(url)
    page.locator("#question textarea").wait_for()
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
    return ctx, page


def _hands_free_page(browser, url, speak: bool):
    ctx, page = _open_page(browser, url)
    page.get_by_role("tab", name="Settings").click()
    if speak:
        page.locator("#speak input").check()
        page.wait_for_timeout(500)  # the setting reaches the session before the microphone opens
    page.locator("#hands-free input").check()  # the microphone opens now: the file starts
    page.get_by_role("tab", name="Chat").click()
    return ctx, page


def test_hands_free_turns_one_after_another(five_questions, hark_app):
    earlier = len(hark_app.assistant.parts.trace.read())
    with chromium(*fake_microphone(five_questions)) as browser:
        ctx, page = _hands_free_page(browser, hark_app.url, speak=False)
        try:  # ~45 s of audio: wait for the five turns to start, then for the last transcript
            page.wait_for_function(
                "() => harkVoiceLog.filter(e => e.kind === 'turn').length >= 5", timeout=3 * TIMEOUT
            )
            users = _users(page, 5)
        except Exception:
            log = page.evaluate("window.harkVoiceLog")
            shown = page.locator("#chat").inner_text()
            raise AssertionError(f"voice log {log}; chat {shown!r}") from None
        assert len(users) == 5, users  # no turn from the silences between
        for heard, (_, keys) in zip(users, FIVE, strict=True):
            assert all(k in heard for k in keys), users
        kinds = [e["kind"] for e in page.evaluate("window.harkVoiceLog")]
        assert kinds.count("turn") == 5 and kinds.count("mic-open") == 1, kinds  # one open microphone
        ctx.close()
    # each turn was run while the silence that ended it was still being waited for, and adopted
    turns = hark_app.assistant.parts.trace.read()[earlier:]
    assert len(turns) == 5 and all(t.get("ahead") for t in turns), [(t["question"], t.get("ahead")) for t in turns]


@pytest.fixture(scope="module")
def interruption(tmp_path_factory):
    """What the user says over Hark's answer (0.3 s of quiet first, then speech)."""
    return speak_to_wav(
        "stop, how much is the deposit for the flat", tmp_path_factory.mktemp("barge_in") / "b.wav"
    )


@pytest.fixture(scope="module")
def blip(tmp_path_factory):
    """0.16 s of a vowel. Through Chromium's echo canceller and noise suppressor, over the answer,
    the VAD heard 3 to 7 frames of it (12 runs, quiet and loaded): long enough to pause (3), too
    short for speech (8). The 0.12 s sound of tests/ui/test_voice_loop.py gave 2 to 4 here."""
    return vowel_blip(tmp_path_factory.mktemp("blip"), 0.16)


def _wait_for(page, kind: str) -> None:
    """Until the page logs `kind`; on a timeout the failure shows the page's whole voice log."""
    try:
        page.wait_for_function(f"() => harkVoiceLog.some(e => e.kind === '{kind}')", timeout=TIMEOUT)
    except Exception:
        raise AssertionError(f"no {kind!r} in the voice log {page.evaluate('window.harkVoiceLog')}") from None


def _answer_then_open_the_microphone(browser, url):
    """A typed question answered aloud; while Hark speaks, hands-free goes on: the microphone (the
    file plays from the moment it opens) sounds over the answer."""
    ctx, page = _open_page(browser, url)
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input").check()
    page.get_by_role("tab", name="Chat").click()
    page.wait_for_timeout(500)  # the setting reaches the session
    box = page.locator("#question textarea")
    box.fill("What notice period must the tenant give, and how is the rent paid?")
    box.press("Enter")
    _wait_for(page, "playing")
    page.get_by_role("tab", name="Settings").click()
    page.locator("#hands-free input").check()
    return ctx, page


def _browser(path):
    return chromium(*fake_microphone(path, autoplay=True))


def test_speaking_over_the_answer_stops_it(interruption, hark_app):
    """The playback pauses as the user starts to speak and stops for good once it is speech; the
    next turn is what the user said; the interrupted answer is marked cut off."""
    with _browser(interruption) as browser:
        ctx, page = _answer_then_open_the_microphone(browser, hark_app.url)
        _wait_for(page, "cut")
        page.get_by_role("tab", name="Chat").click()
        users = _users(page, 2)
        log = page.evaluate("window.harkVoiceLog")
        t = {e["kind"]: e["t"] for e in reversed(log)}  # the first time of each kind
        kinds = [e["kind"] for e in log]
        assert (
            kinds.index("playing") < kinds.index("mic-open") < kinds.index("hold") < kinds.index("barge-in")
        ), log
        assert "pause" in kinds[kinds.index("hold") :] and "resume" not in kinds, log  # paused, never resumed
        speech = t["mic-open"] + 300  # the file's speech starts 0.3 s in
        assert t["hold"] - speech < 2000, f"playback paused {t['hold'] - speech:.0f} ms after the user spoke"
        assert "stop" in users[1] and "how much" in users[1], users  # the next turn is what the user said
        page.wait_for_function(
            """() => [...document.querySelectorAll("#chat [data-testid='bot']")]
                     .some(b => b.innerText.includes('cut off'))""",
            timeout=TIMEOUT,
        )
        ctx.close()


def test_a_short_sound_over_the_answer_only_pauses_it(blip, hark_app):
    """A cough over the answer pauses it; it plays on after the quiet that follows."""
    with _browser(blip) as browser:
        ctx, page = _answer_then_open_the_microphone(browser, hark_app.url)
        _wait_for(page, "resume")
        page.wait_for_timeout(1500)
        kinds = [e["kind"] for e in page.evaluate("window.harkVoiceLog")]
        assert kinds.index("mic-open") < kinds.index("hold") < kinds.index("resume"), kinds
        assert "playing" in kinds[kinds.index("resume") :], kinds  # the answer plays on
        assert "barge-in" not in kinds and "cut" not in kinds and "turn" not in kinds, " ".join(kinds)
        ctx.close()
