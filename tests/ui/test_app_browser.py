"""The app in a real browser (Debian Chromium, headless, Playwright) against the real app:
typed and spoken questions, streamed answers with linked sources and the rerank picture,
uploads, and two people at once. Chromium plays a WAV file as the microphone. One browser for the module; each test opens its own context (its own Gradio session).
"""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.llm_server import LLMServer, Reply
from tests.ui.conftest import app_sharing_models, chromium, fake_microphone

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.microphone]

ANSWER_TIMEOUT = 90_000  # ms; a turn takes ~1 s, but the machine is shared


@pytest.fixture(scope="module")
def browser(spoken_question):
    with chromium(*fake_microphone(spoken_question)) as b:
        yield b


@pytest.fixture(scope="module")
def slow_llm_app(hark_app):
    """A second app whose answers come slowly from a loopback OpenAI-compatible server (the
    same models and library, shared with `hark_app`), so a person can press Stop mid-answer."""
    from assistant.config import ProviderSettings

    words = " ".join(f"word{i}" for i in range(80))
    with LLMServer(default=Reply(f"Rent is 950 euros per month [1]. {words}", chunk_delay=0.15)) as server:
        cfg = hark_app.cfg.model_copy(deep=True)
        cfg._base_dir = hark_app.base_dir
        cfg.llm.order = ["slow"]
        cfg.llm.providers = {
            "slow": ProviderSettings(kind="openai_compatible", model="slow", base_url=server.openai_url)
        }
        with app_sharing_models(hark_app, cfg) as url:
            yield url, server


def _open(browser, url, init_script: str | None = None):
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    if init_script:
        ctx.add_init_script(init_script)
    page = ctx.new_page()
    page.goto(url)
    page.locator("#question textarea").wait_for()
    return ctx, page


def _ask(page, question: str, n: int) -> str:
    """Type `question`; wait for the n-th answer to finish; return its text."""
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    return _answer(page, n)


def _answer(page, n: int) -> str:
    bot = page.locator("#chat [data-testid='bot']")
    page.wait_for_function(
        """n => { const b = document.querySelectorAll("#chat [data-testid='bot']");
                  return b.length >= n && b[n - 1].innerText.trim() !== '…'
                         && !document.querySelector('#chat .generating, #question .generating'); }""",
        arg=n,
        timeout=ANSWER_TIMEOUT,
    )
    page.wait_for_timeout(300)  # the last streamed update
    return bot.nth(n - 1).inner_text()


def test_typed_question_streams_a_cited_answer_with_sources_and_rerank(browser, hark_app, artifacts):
    ctx, page = _open(browser, hark_app.url)
    # record every text the answer bubble shows, to see it stream (placeholder first, then text)
    page.evaluate(
        """() => { window.__seen = [];
          new MutationObserver(() => {
            const b = document.querySelectorAll("#chat [data-testid='bot']");
            if (b.length) { const t = b[b.length - 1].innerText.trim();
              if (window.__seen[window.__seen.length - 1] !== t) window.__seen.push(t); }
          }).observe(document.querySelector('#chat'), {subtree: true, childList: true, characterData: true}); }"""
    )
    answer = _ask(page, "How long is the notice period for the tenant?", 1)
    assert "two months" in answer
    seen = [t for t in page.evaluate("window.__seen") if t]
    assert seen[0] == "…" and "two months" in seen[-1], seen  # placeholder first, then the streamed text

    cited = page.locator("#evidence .hark-source.cited")
    assert cited.count() >= 1
    assert "rental_agreement.md" in cited.first.inner_text()
    assert "dense" not in cited.first.inner_text()  # the scores wait behind "Details"
    assert page.locator("#evidence svg.hark-rerank g.cited").count() >= 1
    assert "intent" in page.locator("#meta").inner_text()

    # a citation in the answer leads to its source card, without leaving the page
    url = page.url
    page.locator("#chat a.hark-cite").first.click()
    page.locator("#hark-src-1-1.hark-flash").wait_for(timeout=5000)
    assert page.url == url
    # the scores and the full chunk are one click away
    page.locator("#hark-src-1-1 details summary").click()
    assert "security deposit" in page.locator("#hark-src-1-1 .hark-chunk").inner_text()
    details = page.locator("#hark-src-1-1 details").inner_text()
    assert "dense" in details and "diffusion" in details
    page.wait_for_timeout(400)
    page.screenshot(path=str(artifacts / "chat.png"))
    ctx.close()


def test_push_to_talk_transcribes_and_answers(browser, hark_app):
    ctx, page = _open(browser, hark_app.url)
    page.locator("#mic button.record-button").click()
    page.locator("#mic button.stop-button").wait_for(state="visible")
    page.wait_for_timeout(4500)  # the clip is ~3.5 s
    page.locator("#mic button.stop-button").click()
    page.wait_for_function(
        "() => document.querySelectorAll(\"#chat [data-testid='user']\").length >= 1", timeout=ANSWER_TIMEOUT
    )
    answer = _answer(page, 1)
    heard = page.locator("#chat [data-testid='user']").first.inner_text().lower()
    assert "notice" in heard and "rental" in heard, heard
    assert "months" in answer
    assert "rental_agreement.md" in page.locator("#evidence").inner_text()
    ctx.close()


MUTED_MICROPHONE = """
navigator.mediaDevices.getUserMedia = async () => {
  const ctx = new AudioContext();
  const out = ctx.createMediaStreamDestination();
  const tone = ctx.createOscillator();
  const mute = ctx.createGain();
  mute.gain.value = 0;
  tone.connect(mute).connect(out);
  tone.start();
  return out.stream;
};
"""


def test_a_recording_without_speech_never_leaves_the_transcribing_bubble(browser, hark_app):
    """A muted microphone (it records silence): "didn't catch that", and the user's bubble says so
    instead of "transcribing…" — at the end of this turn, not only when the next one starts."""
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    ctx.add_init_script(MUTED_MICROPHONE)
    page = ctx.new_page()
    page.goto(hark_app.url)
    page.locator("#question textarea").wait_for()
    for n in (1, 2):  # and again: the microphone still works after a turn that heard nothing
        page.locator("#mic button.record-button").click()
        page.locator("#mic button.stop-button").wait_for(state="visible")
        page.wait_for_timeout(1200)
        page.locator("#mic button.stop-button").click()
        answer = _answer(page, n)
        assert "didn't catch that" in answer.lower(), answer
        page.wait_for_function(
            """n => { const u = document.querySelectorAll("#chat [data-testid='user']");
                      return u.length >= n && !u[n - 1].innerText.includes('transcribing'); }""",
            arg=n,
            timeout=10_000,
        )
        assert "no speech recognised" in page.locator("#chat [data-testid='user']").nth(n - 1).inner_text()
        page.locator("#mic button.record-button").wait_for(state="visible", timeout=10_000)
    ctx.close()


def test_upload_a_document_then_ask_about_it(browser, hark_app, tmp_path):
    doc = tmp_path / "dishwasher warranty.txt"
    doc.write_text(
        "Dishwasher warranty card. The warranty of the dishwasher lasts five years from the date of "
        "purchase and covers the pump and the heating element.",
        encoding="utf-8",
    )
    ctx, page = _open(browser, hark_app.url)
    page.get_by_role("tab", name="Library").click()
    page.locator("#upload-files input[type=file]").set_input_files(str(doc))
    page.locator("#ingest-report", has_text="Indexed 1 of 1 files").wait_for(timeout=ANSWER_TIMEOUT)
    page.locator("#docs", has_text="dishwasher warranty.txt").wait_for(timeout=10_000)
    assert (hark_app.library_dir / "dishwasher warranty.txt").is_file()

    page.get_by_role("tab", name="Chat").click()
    answer = _ask(page, "How many years does the dishwasher warranty last?", 1)
    assert "five years" in answer
    assert "dishwasher warranty.txt" in page.locator("#evidence .hark-source.cited").first.inner_text()

    # delete it again: gone from the table, the index and the library folder
    page.get_by_role("tab", name="Library").click()
    page.locator("#doc-pick input").click()
    page.get_by_role("option", name="dishwasher warranty.txt").click()
    page.locator("#delete-doc").click()  # asks first; nothing is deleted yet
    page.locator("#ingest-report", has_text="will be removed from the library").wait_for(timeout=30_000)
    assert (hark_app.library_dir / "dishwasher warranty.txt").is_file()
    page.locator("#confirm-delete-yes").click()
    page.locator("#ingest-report", has_text="Deleted").wait_for(timeout=30_000)
    page.locator("#confirm-delete-yes").wait_for(state="hidden", timeout=10_000)
    assert "dishwasher warranty.txt" not in page.locator("#docs").inner_text()
    assert not (hark_app.library_dir / "dishwasher warranty.txt").exists()
    assert "dishwasher warranty.txt" not in [d.source_path for d in hark_app.assistant.documents()]
    ctx.close()


def test_two_people_keep_separate_conversations_and_switches(browser, hark_app):
    ctx_a, a = _open(browser, hark_app.url)
    ctx_b, b = _open(browser, hark_app.url)
    a.get_by_role("tab", name="Settings").click()
    a.locator("#always-web input[type=checkbox]").check()
    a.wait_for_timeout(500)
    a.get_by_role("tab", name="Chat").click()

    answer_b = _ask(b, "What pressure should the city bike tyres have?", 1)
    answer_a = _ask(a, "How much is the rent per month?", 1)
    assert "4.5 bar" in answer_b
    meta_a, meta_b = a.locator("#meta").inner_text(), b.locator("#meta").inner_text()
    assert "web_search" in meta_a and "switch)" in meta_a, meta_a  # A's switch routed A's turn…
    assert "switch)" not in meta_b, meta_b  # …and not B's (B's route is the classifier's own)
    assert "950" in answer_a  # no web search key: A still gets the answer from the documents

    # a follow-up is understood from each person's own conversation
    b.get_by_role("tab", name="Settings").click()
    assert not b.locator("#always-web input[type=checkbox]").is_checked()
    b.get_by_role("tab", name="Chat").click()
    _ask(b, "and how often should I lubricate the chain?", 2)
    users_a = a.locator("#chat [data-testid='user']").all_inner_texts()
    users_b = b.locator("#chat [data-testid='user']").all_inner_texts()
    assert users_a == ["How much is the rent per month?"]
    assert users_b == [
        "What pressure should the city bike tyres have?",
        "and how often should I lubricate the chain?",
    ]
    assert "300 kilometres" in b.locator("#chat [data-testid='bot']").nth(1).inner_text()
    # clicking an earlier answer brings back its own sources and rerank picture
    assert "answer 2" in b.locator("#evidence").inner_text()
    b.locator("#chat [data-testid='bot']").first.click()
    b.locator("#evidence h4", has_text="answer 1").first.wait_for(timeout=10_000)
    assert "bike_manual.txt" in b.locator("#evidence .hark-source").first.inner_text()
    ctx_a.close()
    ctx_b.close()


def test_stop_cancels_a_running_answer(browser, slow_llm_app):
    url, server = slow_llm_app
    ctx, page = _open(browser, url)
    page.locator("#question textarea").fill("How much is the rent per month?")
    page.locator("#question textarea").press("Enter")
    bot = page.locator("#chat [data-testid='bot']")
    page.wait_for_function(
        "() => { const b = document.querySelector(\"#chat [data-testid='bot']\"); "
        "return b && b.innerText.includes('word3'); }",
        timeout=ANSWER_TIMEOUT,
    )
    page.locator("#stop").click()
    page.wait_for_timeout(1500)
    stopped = bot.first.inner_text()
    page.wait_for_timeout(2500)  # at 0.15 s a word the full answer would grow by ~16 words here
    assert bot.first.inner_text() == stopped
    assert "Rent is 950 euros" in stopped and "word79" not in stopped
    # the next question is answered normally
    server.set_default(Reply("The deposit is 1,900 euros [1]."))
    answer = _ask(page, "How much is the security deposit?", 2)
    assert "1,900 euros" in answer
    ctx.close()


@pytest.mark.parametrize("player", ["worklet", "buffers"])
def test_spoken_answers_play_sentence_audio(browser, hark_app, tmp_path, player):
    """The page's worker fetches each spoken sentence's WAV from the speech route and the page plays
    it: on the audio thread (an AudioWorklet), or where there is none (a page served over plain http
    from another computer) as AudioBuffers on the main thread. It reads more than a second of audio
    and its AudioContext's clock runs on while that plays. The route serves real speech (Hark's own
    speech-to-text hears it), says when the answer ends, and knows no other token. The answer can be
    heard again, and Stop silences it."""
    ctx, page = _open(browser, hark_app.url, "delete window.AudioWorkletNode;" if player == "buffers" else None)
    wavs: list[str] = []
    page.on("response", lambda r: wavs.append(r.url) if "/hark/speech/" in r.url and r.status == 200 else None)
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input[type=checkbox]").check()
    page.wait_for_timeout(500)
    page.get_by_role("tab", name="Chat").click()
    answer = _ask(page, "How much is the rent per month?", 1)
    assert "950 euros" in answer
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'playing')", timeout=ANSWER_TIMEOUT)
    # still sounding a second of audio-clock time after it started: the scheduled speech plays
    page.wait_for_function(
        """() => { const at = harkVoiceLog.find(e => e.kind === 'playing').at;
                   return harkPlayer.sounding && harkPlayer.ctx.currentTime - at > 1.0; }""",
        timeout=ANSWER_TIMEOUT,
    )
    assert page.evaluate("harkPlayer.ctx.state") == "running"
    page.wait_for_function(  # the page heard the end and decoded every sentence it fetched
        """() => harkPlayer.next === -1 && harkVoiceLog.filter(e => e.kind === 'decoded').length
                 === harkVoiceLog.filter(e => e.kind === 'fetched').length""",
        timeout=ANSWER_TIMEOUT,
    )
    assert page.evaluate("(harkVoiceLog.find(e => e.kind === 'player') || {}).how") == player
    decoded = page.evaluate("harkVoiceLog.filter(e => e.kind === 'decoded').map(e => e.seconds)")
    assert sum(decoded) > 1.0 and len(wavs) == len(decoded), (decoded, wavs)
    token = page.evaluate("document.querySelector('#voice-token textarea, #voice-token input').value")
    turn = page.evaluate("harkPlayer.turn")

    base = f"{hark_app.url.rstrip('/')}/hark/speech"
    with urllib.request.urlopen(f"{base}/{token}?turn={turn}&n=0", timeout=30) as r:
        assert r.status == 200 and r.headers["Content-Type"] == "audio/wav"
        assert r.headers["X-Hark-Turn"] == str(turn) and r.headers["X-Hark-Index"] == "0"
        (tmp_path / "first.wav").write_bytes(r.read())
    heard = hark_app.assistant.parts.transcriber.get().transcribe(str(tmp_path / "first.wav")).text.lower()
    assert "rent" in heard or "950" in heard, heard  # the first clause: "Rent is 950 euros per month"
    with urllib.request.urlopen(f"{base}/{token}?turn={turn}&n={len(decoded)}", timeout=30) as r:
        assert r.status == 204 and r.headers["X-Hark-Speech"] == "end"
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(f"{base}/not-a-token?turn=1&n=0", timeout=30)
    assert unknown.value.code == 404
    # "Hear the answer again" plays the kept sentences once more; Stop silences them at once
    page.locator("#hear-again").click()
    page.wait_for_function(
        "() => harkPlayer.sounding && harkVoiceLog.filter(e => e.kind === 'playing').length >= 2",
        timeout=ANSWER_TIMEOUT,
    )
    page.locator("#stop").click()
    page.wait_for_function("() => !harkPlayer.sounding && harkPlayer.sources.length === 0", timeout=5000)
    assert page.evaluate("harkVoiceLog[harkVoiceLog.length - 1].kind") == "cut"
    ctx.close()
