"""Crossed switches through the running app (issue #8): six people in six browser contexts, each
with their own Settings, ask at the same time; every turn takes the path of ITS OWN switches.

Real everything: the app of `hark_app` (same models and library) answered by a loopback
OpenAI-compatible server (so the prompt each turn sends is visible on the wire), web search against
a loopback SerpAPI server, headless Chromium. What each person sees is read from the page:
- "Always search the web" → the intent line says `web_search (…, switch)` and the evidence column
  shows web results for that person's own question; without it → library sources, no web results;
- memory "none" → "what was my first question?" gets the memory-off reply, the others get their own;
- reasoning strategy and prompt profile → the answer request of that turn carries that strategy's
  instructions and that profile's role (read from the YAML files here, not from the code);
- speak answers → only that person's page fetches spoken-answer audio.
Toggling a switch in one context never changes another's (read back from each Settings tab).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import yaml

from tests.conftest import ROOT
from tests.llm_server import LLMServer, Reply
from tests.ui.conftest import app_sharing_models, chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANSWER_TIMEOUT = 90_000  # ms; a turn takes ~2 s here, but the machine is shared
LLM_WAIT = 1.5  # s the loopback LLM waits before its first token, so the six turns overlap
SERP_KEY_ENV = "HARK_TEST_SWITCHES_SERP_KEY"
CANNED = "Answer: This is what the sources say [1]."
FIRST_Q = "What was my first question?"
MEMORY_OFF = "not keeping a memory of this conversation"


@dataclass
class Person:
    name: str
    question: str
    doc: str  # the library file that answers `question`
    web: bool = False
    memory: str = "window"
    reasoning: str = "rag"
    profile: str = "default"
    speak: bool = False
    ctx: object = None
    page: object = None
    audio: list[str] = field(default_factory=list)  # spoken sentences (WAV URLs) the page fetched


def _people() -> list[Person]:
    return [
        Person("A", "How much is the rent per month?", "rental_agreement.md", web=True, reasoning="cot"),
        Person("B", "What pressure should the city bike tyres have?", "bike_manual.txt", web=True,
               profile="tutor"),
        Person("C", "When are the tomatoes sown?", "garden.md", web=True, memory="none"),
        Person("D", "How large is the security deposit?", "rental_agreement.md", reasoning="react"),
        Person("E", "How often should I lubricate the chain?", "bike_manual.txt", profile="researcher",
               speak=True),
        Person("F", "When should I water the basil?", "garden.md", memory="none"),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def switch_app(hark_app):
    """The app of `hark_app` answered by a loopback LLM, with web search on a loopback SerpAPI."""
    from assistant.config import ProviderSettings
    from tests.serp_server import SerpServer

    with (
        LLMServer(default=Reply(CANNED, ttft=LLM_WAIT), max_lifetime=600) as llm,
        SerpServer() as serp,
        pytest.MonkeyPatch.context() as mp,
    ):
        serp.state.answer = None  # organic results only: each names the query it answers
        mp.setenv(SERP_KEY_ENV, "serp-test-key")
        cfg = hark_app.cfg.model_copy(deep=True)
        cfg._base_dir = hark_app.base_dir
        cfg.websearch.base_url = serp.url
        cfg.websearch.key_env = SERP_KEY_ENV
        cfg.llm.order = ["loop"]
        cfg.llm.providers = {
            "loop": ProviderSettings(kind="openai_compatible", model="loop", base_url=llm.openai_url)
        }
        cfg.ui.concurrency_limit = 6
        with app_sharing_models(hark_app, cfg) as url:
            yield url, llm, serp


# ---- what the test knows about the prompts (from the YAML files, not from the code) ----------------
def _prompt_markers() -> tuple[dict[str, str], dict[str, str]]:
    """(profile → its role text, strategy → its instructions), whitespace-normalised."""
    folder = ROOT / "assistant" / "prompts"
    profiles = yaml.safe_load((folder / "profiles.yaml").read_text(encoding="utf-8"))
    strategies = yaml.safe_load((folder / "reasoning.yaml").read_text(encoding="utf-8"))
    norm = " ".join
    return (
        {k: norm(v["role"].split()) for k, v in profiles.items()},
        {k: norm(v["instructions"].split()) for k, v in strategies.items()},
    )


def _messages(body: dict) -> tuple[str, str]:
    """(system text, user text) of an OpenAI-style request, whitespace-normalised."""
    system = " ".join(
        str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system"
    )
    user = " ".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")
    return " ".join(system.split()), " ".join(user.split())


def _answer_request(llm: LLMServer, question: str):
    """The one answer request (system prompt with a reasoning strategy) whose question is `question`."""
    found = []
    for r in llm.requests:
        system, user = _messages(r.body)
        if "Reasoning:" in system and f"Question: {question}" in user:
            found.append(r)
    assert len(found) == 1, f"{len(found)} answer requests for {question!r}"
    return found[0]


# ---- the page --------------------------------------------------------------------------------------
def _is_speech(response) -> bool:
    """A spoken sentence's WAV from the speech route (not its long polls' empty replies)."""
    return "/hark/speech/" in response.url and response.status == 200 and (
        response.headers.get("content-type", "").startswith("audio/wav")
    )


def _open(browser, url: str, person: Person) -> None:
    person.ctx = browser.new_context(viewport={"width": 1360, "height": 900})
    page = person.page = person.ctx.new_page()
    page.on("response", lambda r: person.audio.append(r.url) if _is_speech(r) else None)
    page.goto(url)
    page.locator("#question textarea").wait_for()


def _pick(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=value, exact=True).click()


def _apply_settings(person: Person) -> None:
    page = person.page
    page.get_by_role("tab", name="Settings").click()
    if person.web:
        page.locator("#always-web input[type=checkbox]").check()
    if person.speak:
        page.locator("#speak input[type=checkbox]").check()
    for elem_id, value, default in (
        ("memory", person.memory, "window"),
        ("reasoning", person.reasoning, "rag"),
        ("profile", person.profile, "default"),
    ):
        if value != default:
            _pick(page, elem_id, value)
    page.get_by_role("tab", name="Chat").click()


def _read_settings(person: Person) -> dict:
    page = person.page
    page.get_by_role("tab", name="Settings").click()
    shown = {
        "web": page.locator("#always-web input[type=checkbox]").is_checked(),
        "speak": page.locator("#speak input[type=checkbox]").is_checked(),
        "memory": page.locator("#memory input").input_value(),
        "reasoning": page.locator("#reasoning input").input_value(),
        "profile": page.locator("#profile input").input_value(),
    }
    page.get_by_role("tab", name="Chat").click()
    return shown


def _expected_settings(p: Person) -> dict:
    return {
        "web": p.web,
        "speak": p.speak,
        "memory": p.memory,
        "reasoning": p.reasoning,
        "profile": p.profile,
    }


def _send(person: Person, question: str) -> None:
    box = person.page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")


def _wait_answer(person: Person, n: int) -> str:
    page = person.page
    page.wait_for_function(
        """n => { const b = document.querySelectorAll("#chat [data-testid='bot']");
                  return b.length >= n && b[n - 1].innerText.trim() !== '…'
                         && !document.querySelector('#chat .generating, #question .generating'); }""",
        arg=n,
        timeout=ANSWER_TIMEOUT,
    )
    page.wait_for_timeout(300)  # the last streamed update
    return page.locator("#chat [data-testid='bot']").nth(n - 1).inner_text()


def _seen(person: Person) -> tuple[str, str]:
    """(intent/meta line, the whole evidence column including collapsed cards)."""
    page = person.page
    return page.locator("#meta").inner_text(), page.locator("#evidence").text_content() or ""


def _max_overlap(requests) -> int:
    """How many of `requests` were waiting at the LLM at the same moment."""
    spans = [(r.received_at, r.first_token_at or r.received_at + LLM_WAIT) for r in requests]
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


def _check_path(person: Person, meta: str, evidence: str, web: bool, question: str) -> list[str]:
    problems = []
    if web:
        if "web_search" not in meta or "switch)" not in meta:
            problems.append(f"{person.name}: switch on but the turn was not routed by it: {meta!r}")
        if "Web results" not in evidence or f"about {question}" not in evidence:
            problems.append(f"{person.name}: no web results for its own question: {evidence[:300]!r}")
    else:
        if "switch)" in meta:
            problems.append(f"{person.name}: switch off but the turn says switch: {meta!r}")
        if "Web results" in evidence or "example.org" in evidence:
            problems.append(f"{person.name}: switch off but web results shown: {evidence[:300]!r}")
        if person.doc not in evidence:
            problems.append(f"{person.name}: its own document {person.doc} is not among the sources")
    return problems


def test_six_tabs_at_once_each_take_the_path_of_their_own_switches(browser, switch_app):
    url, llm, serp = switch_app
    roles, instructions = _prompt_markers()
    people = _people()
    by_name = {p.name: p for p in people}
    try:
        for p in people:
            _open(browser, url, p)
        for p in people:
            _apply_settings(p)
        for p in people:
            assert _read_settings(p) == _expected_settings(p), p.name
        llm.clear()

        # ---- round 1: all six ask at once ---------------------------------------------------------
        for p in people:
            _send(p, p.question)
        answers = {p.name: _wait_answer(p, 1) for p in people}
        problems = []
        for p in people:
            meta, evidence = _seen(p)
            problems += _check_path(p, meta, evidence, p.web, p.question)
            if "what the sources say" not in answers[p.name]:
                problems.append(f"{p.name}: unexpected answer {answers[p.name]!r}")
        assert not problems, "\n".join(problems)
        # the web was searched once per switched-on tab, each for that tab's own question
        assert sorted(q["q"][0] for q in serp.state.requests) == sorted(p.question for p in people if p.web)
        # each answer request carries its own tab's reasoning strategy and prompt profile, only those
        requests = []
        for p in people:
            r = _answer_request(llm, p.question)
            requests.append(r)
            system, _ = _messages(r.body)
            assert instructions[p.reasoning] in system, (p.name, p.reasoning)
            assert roles[p.profile] in system, (p.name, p.profile)
            others = {v for k, v in instructions.items() if k != p.reasoning} | {
                v for k, v in roles.items() if k != p.profile
            }
            assert not [o for o in others if o in system], p.name
        overlap = _max_overlap(requests)
        assert overlap >= 3, f"the turns did not run at the same time (at most {overlap} at once)"

        # speak answers: only E's page fetches sentence audio
        speaker = by_name["E"]
        for _ in range(150):
            if speaker.audio:
                break
            speaker.page.wait_for_timeout(200)
        assert speaker.audio, "E's page fetched no spoken sentence"
        assert {p.name for p in people if p.audio} == {"E"}, {p.name: p.audio for p in people}

        # ---- toggles: A turns the web off, D turns it on; nobody else changes --------------------
        for name, on in (("A", False), ("D", True)):
            p = by_name[name]
            p.page.get_by_role("tab", name="Settings").click()
            p.page.locator("#always-web input[type=checkbox]").set_checked(on)
            p.page.get_by_role("tab", name="Chat").click()
            p.web = on
        for p in people:
            assert _read_settings(p) == _expected_settings(p), p.name

        # ---- round 2 at once: A and D ask new questions, the others ask about their own memory ---
        serp.state.requests.clear()
        second = {"A": "When is the rent due each month?", "D": "What notice period must the landlord give?"}
        for p in people:
            _send(p, second.get(p.name, FIRST_Q))
        problems = []
        for p in people:
            answer = _wait_answer(p, 2)
            meta, evidence = _seen(p)
            if p.name in second:
                problems += _check_path(p, meta, evidence, p.web, second[p.name])
            elif p.memory == "none":
                if MEMORY_OFF not in answer:
                    problems.append(f"{p.name}: memory off, but answered {answer!r}")
            elif answer.strip() != f'Your first question was: "{p.question}"':
                problems.append(f"{p.name}: crossed or lost memory: {answer!r}")
        assert not problems, "\n".join(problems)
        assert [q["q"][0] for q in serp.state.requests] == [second["D"]]
        # the prompt history of A and D is their own first exchange (both keep a window memory)
        for name in ("A", "D"):
            _, user = _messages(_answer_request(llm, second[name]).body)
            assert f"User: {by_name[name].question}" in user, (name, user)
            foreign = [o.question for o in people if o.name != name and o.question in user]
            assert not foreign, (name, foreign)
    finally:
        for p in people:
            if p.ctx is not None:
                p.ctx.close()
