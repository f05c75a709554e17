"""The voice loop in a real browser (headless Chromium, a WAV file as the microphone): push-to-talk
held on the button and on the space bar, with a live partial transcript (hands-free turns:
test_voice_hands_free.py). The fake microphone plays its file once from the moment it opens."""

from __future__ import annotations

import pytest

from tests.ui.conftest import chromium, fake_microphone

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.microphone]

TIMEOUT = 90_000


def _page(browser, url):
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    page = ctx.new_page()
    page.goto(url)
    page.locator("#question textarea").wait_for()
    page.locator("#ptt").wait_for()
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
    return ctx, page


def _users(page, n: int) -> list[str]:
    page.wait_for_function(
        """n => { const u = [...document.querySelectorAll("#chat [data-testid='user']")];
                  return u.length >= n && !u[n - 1].innerText.includes('transcribing'); }""",
        arg=n,
        timeout=TIMEOUT,
    )
    return [e.inner_text().lower() for e in page.locator("#chat [data-testid='user']").all()]


def _mic_open(page) -> None:
    page.wait_for_function(
        "() => (window.harkVoiceLog || []).some(e => e.kind === 'mic-open')", timeout=TIMEOUT
    )


def _partials(page, seconds: float) -> list[str]:
    """What the live transcript line showed, sampled every 100 ms for `seconds`."""
    seen: list[str] = []
    for _ in range(int(seconds * 10)):
        text = page.locator("#hark-partial").inner_text().strip()
        if text and (not seen or seen[-1] != text):
            seen.append(text)
        page.wait_for_timeout(100)
    return seen


@pytest.fixture(scope="module")
def question_browser(spoken_question):
    with chromium(*fake_microphone(spoken_question)) as b:
        yield b


def test_hold_the_button_to_talk_and_see_the_words_live(question_browser, hark_app):
    ctx, page = _page(question_browser, hark_app.url)
    assert "hold" in page.locator("#ptt").inner_text().lower()
    box = page.locator("#ptt").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    _mic_open(page)  # recording while held
    seen = _partials(page, 4.5)  # the clip is ~3.5 s
    page.mouse.up()
    heard = _users(page, 1)[0]
    assert "notice" in heard and "rental" in heard, heard
    assert any("notice" in s.lower() for s in seen), seen  # the words showed before the release
    log = page.evaluate("window.harkVoiceLog")
    kinds = [e["kind"] for e in log]
    assert kinds[:2] == ["press", "mic-open"] and "release" in kinds and "turn" in kinds, kinds
    # captured on the audio thread: a busy page delays the samples but never drops them
    assert [e.get("how") for e in log if e["kind"] == "capture"] == ["worklet"], log
    ctx.close()


def test_hold_the_space_bar_to_talk(question_browser, hark_app):
    ctx, page = _page(question_browser, hark_app.url)
    page.locator("h2").first.click()  # the focus away from the text box
    page.keyboard.down("Space")
    _mic_open(page)
    page.wait_for_timeout(4500)
    page.keyboard.up("Space")
    heard = _users(page, 1)[0]
    assert "notice" in heard and "rental" in heard, heard
    # in the text box the space bar types a space and records nothing
    page.locator("#question textarea").click()
    page.keyboard.press("Space")
    assert page.locator("#question textarea").input_value() == " "
    assert [e["kind"] for e in page.evaluate("window.harkVoiceLog")].count("press") == 1
    ctx.close()
