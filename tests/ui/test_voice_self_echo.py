"""Hark's own voice, played back into its microphone, is not the user (real Chromium, the real app).

The page's playback reaches the microphone through `tests/ui/echo_path.py` (delayed, attenuated,
with room noise, after the browser's own audio processing). With the server's echo canceller off,
that voice pauses or interrupts the answer, as a laptop's speakers would; with it on (the default),
the answer plays to its end. The user's voice over the same playback still stops it. And in
hands-free, a question with a hesitation and a pause in the middle is one turn, not two.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.ui.conftest import chromium, fake_microphone, speak_to_wav
from tests.ui.echo_path import echo_path_script
from tests.ui.test_voice_browser import TIMEOUT, _users
from tests.ui.test_voice_turn_end import paused_question

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.microphone]

QUESTION = "What notice period must the tenant give, and how is the rent paid?"


@pytest.fixture(scope="module")
def quiet(tmp_path_factory):
    path = tmp_path_factory.mktemp("echo") / "quiet.wav"
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(path), "trim", "0", "40"], check=True)
    return path


def _page(browser, url, delay_s: float, gain: float):
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    ctx.add_init_script(echo_path_script(delay_s, gain))
    page = ctx.new_page()
    page.goto(url)
    page.locator("#question textarea").wait_for()
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input").check()
    page.wait_for_timeout(500)  # the setting reaches the session
    return ctx, page


def _kinds(page) -> list[str]:
    return [e["kind"] for e in page.evaluate("window.harkVoiceLog")]


def _answer_aloud_hands_free(browser, url, delay_s: float, gain: float) -> list[str]:
    """Hands-free on, then a typed question answered aloud into the open microphone; the voice
    log once the answer has played to its end (or been cut)."""
    ctx, page = _page(browser, url, delay_s, gain)
    page.locator("#hands-free input").check()
    page.get_by_role("tab", name="Chat").click()
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'mic-open')", timeout=TIMEOUT)
    box = page.locator("#question textarea")
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'playing')", timeout=TIMEOUT)
    page.wait_for_function(
        "() => harkVoiceLog.some(e => ['ended', 'cut', 'barge-in'].includes(e.kind))", timeout=TIMEOUT
    )
    page.wait_for_timeout(1500)  # the echo's tail, a turn it might start
    kinds, taps = _kinds(page), page.evaluate("window.harkEcho.taps")
    ctx.close()
    assert taps >= 1, "the playback was not routed into the microphone"
    return kinds


def test_hark_does_not_take_its_own_voice_for_the_user(quiet, hark_app):
    streaming = hark_app.cfg.speech.streaming
    with chromium(*fake_microphone(quiet, autoplay=True)) as browser:
        streaming.echo_cancel = False
        try:  # the control: the same voice, not taken out, is heard as the user
            bare = _answer_aloud_hands_free(browser, hark_app.url, 0.1, 0.3)
        finally:
            streaming.echo_cancel = True
        assert "hold" in bare or "barge-in" in bare, " ".join(bare)
        kinds = _answer_aloud_hands_free(browser, hark_app.url, 0.1, 0.3)
    assert "ended" in kinds, " ".join(kinds)
    assert not {"hold", "barge-in", "cut", "turn"} & set(kinds), " ".join(kinds)


@pytest.fixture(scope="module")
def interruption(tmp_path_factory):
    return speak_to_wav("stop, how much is the deposit for the flat", tmp_path_factory.mktemp("echo") / "b.wav")


def test_the_user_still_interrupts_over_hark_s_voice(interruption, hark_app):
    """The answer plays; hands-free goes on and the user speaks over the answer and its echo."""
    with chromium(*fake_microphone(interruption, autoplay=True)) as browser:
        ctx, page = _page(browser, hark_app.url, 0.08, 0.3)
        page.get_by_role("tab", name="Chat").click()
        box = page.locator("#question textarea")
        box.fill(QUESTION)
        box.press("Enter")
        page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'playing')", timeout=TIMEOUT)
        page.get_by_role("tab", name="Settings").click()
        page.locator("#hands-free input").check()  # the microphone opens: the user speaks
        page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'cut')", timeout=TIMEOUT)
        page.get_by_role("tab", name="Chat").click()
        users = _users(page, 2)
        kinds = _kinds(page)
        ctx.close()
    assert kinds.index("mic-open") < kinds.index("barge-in"), kinds
    # the next turn is what the user said (its first sound may be clipped while the fit catches up:
    # "stop" was heard as "top" once)
    assert "how much" in users[1] and "flat" in users[1], users


@pytest.fixture(scope="module")
def hesitation(tmp_path_factory):
    folder = tmp_path_factory.mktemp("paused")
    clip = paused_question(folder, "what is the notice period, um", "in my rental agreement", 0.8)
    out = folder / "paused48.wav"
    subprocess.run(["sox", str(clip), "-r", "48000", str(out)], check=True)
    return out


def test_a_question_with_a_pause_in_the_middle_is_one_turn(hesitation, hark_app):
    with chromium(*fake_microphone(hesitation, autoplay=True)) as browser:
        ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
        page = ctx.new_page()
        page.goto(hark_app.url)
        page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
        page.get_by_role("tab", name="Settings").click()
        page.locator("#hands-free input").check()
        page.get_by_role("tab", name="Chat").click()
        users = _users(page, 1)
        page.wait_for_timeout(3000)  # a second turn from the rest of the question would come by now
        users = _users(page, 1)
        kinds = _kinds(page)
        ctx.close()
    assert kinds.count("turn") == 1 and len(users) == 1, (kinds, users)
    assert "notice" in users[0] and "rental" in users[0], users
