"""`launch.py eval answers` on two real PDFs from Debian packages (installed by .ci/install): the
folder read, cut and searched by Hark itself, each question asked through `ask`'s code, the answers
judged against strings and pages, a rerun that does not read the PDFs again, and bad input refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import launch
from assistant.answers_eval import holds, in_half

PDFS = [Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"), Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")]
QUESTIONS = [
    {"id": "mime-01", "question": "Which version of the Shared MIME-info Database specification is this?",
     "kind": "answerable", "file": "shared-mime-info-spec.pdf", "page": 1, "answers": ["0.21"], "language": "en"},
    {"id": "mime-02", "question": "Which media type is provided for directories and other filesystem objects?",
     "kind": "answerable", "file": "shared-mime-info-spec.pdf", "page": 15, "answers": ["inode"], "language": "en"},
    {"id": "tasn-01", "question": "What is the header file of libtasn1?", "kind": "answerable",
     "file": "libtasn1.pdf", "page": 7, "answers": ["libtasn1.h"], "language": "en",
     "also_in": [{"file": "libtasn1.pdf", "page": 30}]},
    {"id": "oos-01", "question": "Who won the football world cup in 1998?", "kind": "out_of_scope",
     "language": "en", "why": "other domain"},
    {"id": "oos-02", "question": "How do I import a MusicXML file into libtasn1?", "kind": "out_of_scope",
     "language": "en", "why": "near domain"},
]  # fmt: skip


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    lib = tmp_path / "pdfs"
    lib.mkdir()
    for p in PDFS:
        (lib / p.name).symlink_to(p)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  order: []\n", encoding="utf-8")  # offline: the extractive answer
    return lib, questions, cfg


def test_eval_answers_reads_asks_and_judges_real_pdfs(tmp_path, monkeypatch, capsys):
    lib, questions, cfg = _setup(tmp_path)
    monkeypatch.setenv("HARK_EVAL_DIR", str(tmp_path / "cache"))
    out = tmp_path / "answers.json"
    args = ["eval", "answers", "--config", str(cfg), "--library", str(lib), "--questions", str(questions), "--json", str(out)]
    assert launch.main(args) == 0
    result = json.loads(out.read_text())
    for key in ("answerable_right", "answerable_right_de", "out_of_scope_refused", "near_domain_refused",
                "cited_page_right", "gold_in_context", "sentences_p50", "n_answerable", "n_out_of_scope", "rows"):  # fmt: skip
        assert key in result, key
    assert result["n_answerable"] == 3 and result["n_out_of_scope"] == 2
    rows = {r["id"]: r for r in result["rows"]}
    for qid in ("mime-01", "mime-02"):
        row = rows[qid]
        assert row["right"] == (not row["not_known"] and holds(row["answer"], QUESTIONS[0 if qid == "mime-01" else 1]["answers"]))
    assert rows["mime-01"]["right"], rows["mime-01"]["answer"]
    assert rows["mime-01"]["cited_page_right"] and rows["mime-01"]["gold_in_context"]
    assert rows["oos-01"]["right"] and rows["oos-01"]["not_known"]
    assert rows["oos-02"]["right"], rows["oos-02"]  # "MusicXML" is in neither PDF
    assert abs(result["answerable_right"] - sum(rows[q]["right"] for q in ("mime-01", "mime-02", "tasn-01")) / 3) < 1e-3
    # the first sentence is what a listener hears first: it holds the answer only where the answer does
    for row in rows.values():
        first = re.split(r"(?<=\]\.)\s+", row["answer"])[0] if row["kind"] == "answerable" else ""
        assert row["first_right"] == (row["kind"] == "answerable" and not row["not_known"]
                                      and holds(first, QUESTIONS[[q["id"] for q in QUESTIONS].index(row["id"])]["answers"]))
    assert result["first_sentence_right"] <= result["answerable_right"]
    assert "answerable_right:" in capsys.readouterr().out
    # a rerun reads nothing again: every file is unchanged in the library's cache
    assert launch.main(args) == 0
    assert "2 unchanged" in capsys.readouterr().out


def test_halves_are_disjoint_and_cover_the_questions():
    ids = [f"q-{i}" for i in range(200)]
    select = {i for i in ids if in_half(i, "select")}
    report = {i for i in ids if in_half(i, "report")}
    assert not select & report and select | report == set(ids) and 60 < len(select) < 140


def test_bad_input_is_a_clear_message(tmp_path, capsys):
    lib, questions, cfg = _setup(tmp_path)
    assert launch.main(["eval", "answers", "--config", str(cfg), "--library", str(tmp_path / "none"),
                        "--questions", str(questions)]) == 2  # fmt: skip
    assert "not a folder" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    assert launch.main(["eval", "answers", "--config", str(cfg), "--library", str(lib), "--questions", str(bad)]) == 2
    assert "cannot read the questions" in capsys.readouterr().out
