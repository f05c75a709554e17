"""`launch.py eval followups` on a small real file: the dialogs replayed into real Sessions, the
scores computed from Hark's queries and the people's rewrites, the halves split by dialog, and bad
input refused with a clear message."""

from __future__ import annotations

import json

import launch
from assistant.followup_eval import half_of, kind_of, read_items

CURIE = [  # (question, rewrite, answer)
    ("Where was she born?", "Where was Marie Curie born?", "She was born in Warsaw in 1867."),
    ("When did she move to Paris?", "When did Marie Curie move to Paris?", "In 1891 she moved to Paris to study."),
    ("Did she win the Nobel Prize?", "Did Marie Curie win the Nobel Prize?", "Yes, in 1903 and 1911."),
    ("Who did Marie Curie marry?", "Who did Marie Curie marry?", "Pierre Curie, in 1895."),
]
BEATLES = [
    ("When did they form?", "When did The Beatles form?", "The band formed in Liverpool in 1960."),
    ("anything else about their early years?", "anything else about The Beatles' early years besides forming in Liverpool?",
     "They played in Hamburg clubs."),
    ("How long did the Beatles stay in Hamburg?", "How long did the Beatles stay in Hamburg?", "About two years."),
]  # fmt: skip


def _write(path, dialogs):
    lines = []
    for dialog, title, section, turns in dialogs:
        history = []
        for n, (q, rw, a) in enumerate(turns, 1):
            lines.append(json.dumps({"dialog": dialog, "turn": n, "title": title, "section": section,
                                     "history": list(history), "question": q, "rewrite": rw}))  # fmt: skip
            history.append([q, a])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _config(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  order: []\n", encoding="utf-8")  # offline: the heuristic rewriter
    return str(cfg)


def test_eval_followups_through_the_cli(tmp_path, capsys):
    data = _write(tmp_path / "f.jsonl", [("curie", "Marie Curie", "Early life", CURIE),
                                         ("beatles", "The Beatles", "Early years", BEATLES)])  # fmt: skip
    out = tmp_path / "out.json"
    assert launch.main(["eval", "followups", "--file", str(data), "--json", str(out), "--config", _config(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "resolution" in printed and "left alone" in printed and "pronoun" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert {"resolution", "precision", "left_alone", "n", "rows"} <= set(report) and report["n"] == 7
    queries = {r["question"]: r["query"] for r in report["rows"]}
    assert set(report["rows"][0]) >= {"question", "rewrite", "query"}
    assert queries["Where was she born?"] == "Where was Marie Curie born?"
    assert queries["Did she win the Nobel Prize?"] == "Did Marie Curie win the Nobel Prize?"
    assert queries["When did they form?"] == "When did The Beatles form?"
    # the two questions people left alone are left alone
    assert queries["Who did Marie Curie marry?"] == "Who did Marie Curie marry?"
    assert report["left_alone"] == 1.0 and report["kinds"]["standalone"]["n"] == 2
    # every word people added is in Hark's queries but the "anything else" question's "forming" and
    # "liverpool" (2 of the 10 added words the conversation holds); Hark adds nothing people did not
    assert report["resolution"] == 0.8 and report["precision"] == 1.0
    assert report["kinds"]["anything else"]["n"] == 1 and report["methods"]["llm"] == 0


def test_halves_split_by_dialog(tmp_path):
    dialogs = [(f"d{i}", "Marie Curie", "Early life", CURIE) for i in range(20)]
    items = read_items(_write(tmp_path / "f.jsonl", dialogs))
    select, report = half_of(items, "select"), half_of(items, "report")
    assert select and report and len(select) + len(report) == len(items)
    assert not {it.dialog for it in select} & {it.dialog for it in report}


def test_kinds():
    assert kind_of("What about his brother?", "What about Pierre Curie's brother?") == "what about"
    assert kind_of("Anything else?", "Anything else about Marie Curie?") == "anything else"
    assert kind_of("When did she die?", "When did Marie Curie die?") == "pronoun"
    assert kind_of("Did the band tour?", "Did the band INXS tour?") == "ellipsis"
    assert kind_of("Who was Pierre Curie?", "Who was Pierre Curie?") == "standalone"


def test_bad_input_is_refused_with_a_message(tmp_path, capsys):
    cfg = _config(tmp_path)
    assert launch.main(["eval", "followups", "--file", str(tmp_path / "missing.jsonl"), "--config", cfg]) == 2
    assert "no followups file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dialog": "a", "turn": 1, "history": [], "question": "q", "rewrite": "q"}\n{"dialog": "a"}\n')
    assert launch.main(["eval", "followups", "--file", str(bad), "--config", cfg]) == 2
    assert "bad.jsonl:2" in capsys.readouterr().err


def test_eval_followups_with_a_loopback_llm_checks_its_rewrites(tmp_path, capsys):
    """`--llm URL`: the rewrites go through a real OpenAI-compatible server on 127.0.0.1; one that
    brings words from nowhere is refused, so the queries are the heuristic's."""
    from tests.llm_server import LLMServer, Reply

    data = _write(tmp_path / "f.jsonl", [("curie", "Marie Curie", "Early life", CURIE)])
    out = tmp_path / "out.json"
    with LLMServer(default=Reply("What is the weather forecast for Paris tomorrow?")) as server:
        args = ["eval", "followups", "--file", str(data), "--json", str(out), "--llm", server.openai_url,
                "--config", _config(tmp_path)]  # fmt: skip
        assert launch.main(args) == 0
        asked = len(server.requests)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert asked == 3 == report["methods"]["heuristic"] and report["methods"]["llm"] == 0
    assert {r["question"]: r["query"] for r in report["rows"]}["Where was she born?"] == "Where was Marie Curie born?"
    assert "LLM http://127.0.0.1" in capsys.readouterr().out
