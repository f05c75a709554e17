"""Documents in the real app, in Debian Chromium (Playwright): a citation opens its PDF at the cited
page with the passage highlighted (checked against pypdfium2's character boxes of the passage), and
a folder watched from the Library tab stays in sync while the app runs."""

from __future__ import annotations

import base64
import io
import os
from urllib.parse import urljoin

import pypdfium2 as pdfium
import pytest
from PIL import Image

from tests.knowledge.docs_factory import write_text_pdf
from tests.ui.conftest import chromium, free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT = 90_000
PAGES = [
    ["Harbour Street tenancy handbook.", "The kitchen has a gas cooker and a fridge freezer."]
    + [f"Bins are collected from the yard on day {i} of the rota." for i in range(12)],
    ["Ending the tenancy.", "The tenant may end this tenancy with a written notice period of two months.",
     "The notice is sent by post to the landlord at the letting office."]
    + [f"Keys for room {i} are returned to the letting office on the last day." for i in range(12)],
    ["Parking.", "Residents park in bays 4 to 9 with a permit from the council."],
]


@pytest.fixture(scope="module")
def pdf_app(tmp_path_factory):
    from assistant.assistant import Assistant
    from assistant.config import load_config
    from tests.conftest import ROOT
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    base = tmp_path_factory.mktemp("pdf_app")
    docs = base / "docs"
    docs.mkdir()
    pdf = write_text_pdf(docs / "handbook.pdf", PAGES, title="Tenancy handbook")
    cfg = load_config(ROOT / "config.yaml")
    cfg.embedder.backend = "minilm"
    cfg.ingest.isolation = "inline"
    cfg.ingest.chunk_words = 60
    cfg.intent.adapter_dir = str(ROOT / "models" / "intent_adapter")
    cfg._base_dir = base
    assistant = Assistant(cfg)
    assistant.warm_up(speech=False, tts=False)
    report = assistant.ingest([docs])
    assert [f.status for f in report.files] == ["added"], report
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
    yield url, pdf
    if assistant.watcher is not None:
        assistant.watcher.stop()
    demo.close()


def _page_image(page) -> Image.Image:
    src = page.locator("#viewer img.hark-page").get_attribute("src")
    assert src and src.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB")


def _phrase_pixels(pdf, page_no: int, phrase: str, scale: float) -> list[tuple[int, int]]:
    """Bitmap pixels at the centre of each letter of `phrase`, from pypdfium2's own char boxes."""
    doc = pdfium.PdfDocument(str(pdf))
    try:
        p = doc[page_no - 1]
        height = p.get_height()
        tp = p.get_textpage()
        start, count = tp.search(phrase, match_case=True).get_next()
        out = []
        for i in range(start, start + count):
            left, bottom, right, top = tp.get_charbox(i)
            if right > left:
                out.append((int((left + right) / 2 * scale), int((height - (bottom + top) / 2) * scale)))
        return out
    finally:
        doc.close()


def _yellow(px: tuple[int, int, int]) -> bool:
    r, _g, b = px
    return r - b > 60  # yellow over white paper or over a black glyph; grey text and paper have r == b


def _near_highlight(img: Image.Image, xy: tuple[int, int]) -> bool:
    x, y = xy
    return any(_yellow(img.getpixel((x + dx, y + dy))) for dx in (-2, 0, 2) for dy in (-3, 0, 3))


def test_a_citation_opens_the_pdf_page_with_the_passage_highlighted(pdf_app, artifacts):
    from ui.page_view import SCALE

    url, pdf = pdf_app
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(url)
        box = page.locator("#question textarea")
        box.wait_for()
        box.fill("How long is the written notice period when the tenant ends the tenancy?")
        box.press("Enter")
        card = page.locator("#evidence .hark-source.cited").first
        card.wait_for(timeout=TIMEOUT)
        assert "Tenancy handbook" in card.inner_text() and "p. 2" in card.inner_text()
        assert "dense" not in card.inner_text()  # scores behind "Details"

        card.locator("a.hark-open").click()
        image = page.locator("#viewer img.hark-page")
        image.wait_for(timeout=30_000)
        assert image.get_attribute("data-page") == "2"
        assert int(image.get_attribute("data-highlights") or 0) >= 1
        img = _page_image(page)
        cited = _phrase_pixels(pdf, 2, "written notice period of two months", SCALE)
        assert cited and all(_near_highlight(img, xy) for xy in cited)
        elsewhere = _phrase_pixels(pdf, 2, "Keys for room 11", SCALE)  # the next chunk of the page
        assert elsewhere and not any(_near_highlight(img, xy) for xy in elsewhere)

        # the [n] in the answer opens it too
        page.locator("#viewer-close").click()
        image.wait_for(state="hidden", timeout=10_000)
        page.locator("#chat a.hark-cite").first.click()
        image.wait_for(timeout=30_000)
        assert image.get_attribute("data-page") == "2"
        page.screenshot(path=str(artifacts / "citation_viewer.png"))

        # the conversation downloads as Markdown (and JSON), with the cited file and page
        page.locator("#export").click()
        link = page.locator("#exported a[href*='.md']").first
        link.wait_for(timeout=30_000)
        md = page.request.get(urljoin(page.url, link.get_attribute("href") or "")).text()
        assert "written notice period" in md and "(handbook.pdf, p. 2" in md, md
        assert page.locator("#exported a[href*='.json']").count() == 1


def test_a_folder_watched_from_the_library_tab_follows_its_files(pdf_app, tmp_path):
    url, _pdf = pdf_app
    folder = tmp_path / "synced"
    folder.mkdir()
    (folder / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every October by Hanna.\n")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(url)
        page.get_by_role("tab", name="Library").click()
        page.locator("#watch-path textarea, #watch-path input").first.fill(str(folder))
        page.locator("#watch-add").click()
        page.locator("#docs", has_text="boiler.md").wait_for(timeout=TIMEOUT)
        assert str(folder) in page.locator("#watch-status").inner_text()

        (folder / "bins.txt").write_text("The recycling is collected every Thursday morning by Rota Green.\n")
        page.locator("#docs", has_text="bins.txt").wait_for(timeout=TIMEOUT)  # no click: the timer redraws
        assert "1 added" in page.locator("#watch-status").inner_text()
        (folder / "boiler.md").unlink()
        page.wait_for_function(
            "() => !document.querySelector('#docs').innerText.includes('boiler.md')", timeout=TIMEOUT
        )

        page.get_by_role("tab", name="Chat").click()
        box = page.locator("#question textarea")
        box.fill("When is the recycling collected?")
        box.press("Enter")
        page.locator("#evidence .hark-source.cited", has_text="bins.txt").wait_for(timeout=TIMEOUT)
        assert "Thursday" in page.locator("#chat [data-testid='bot']").last.inner_text()
