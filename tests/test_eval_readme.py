"""The README's evaluation tables are written from the report, between named markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.eval.harness import Evaluation
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.readme import missing_rows, replace_block
from tests.test_eval import QUESTIONS, _result

DOC = "# Title\n\nIntro.\n\n<!-- first-2 -->\nold table\nold row\n<!-- /first-2 -->\n\nAfter.\n"


def test_the_block_is_replaced_and_all_around_it_is_kept() -> None:
    new = replace_block(DOC, "first-2", "| a |\n| b |\n")
    assert new == "# Title\n\nIntro.\n\n<!-- first-2 -->\n| a |\n| b |\n<!-- /first-2 -->\n\nAfter.\n"
    assert replace_block(new, "first-2", "| a |\n| b |") == new  # writing the same report again: no change


@pytest.mark.parametrize(
    "doc",
    [
        "no markers at all\n",
        "<!-- first-2 -->\nonly the opening one\n",
        "<!-- /first-2 -->\nclosed before\n<!-- first-2 -->\n",
        "<!-- first-2 -->\na\n<!-- /first-2 -->\n<!-- first-2 -->\nb\n<!-- /first-2 -->\n",
    ],
)
def test_a_document_without_one_clean_pair_of_markers_is_refused(doc: str) -> None:
    with pytest.raises(ValueError, match="first-2"):
        replace_block(doc, "first-2", "table")


def test_a_similar_name_is_not_the_block() -> None:
    doc = "<!-- first-20 -->\nkeep\n<!-- /first-20 -->\n<!-- first-2 -->\nx\n<!-- /first-2 -->\n"
    new = replace_block(doc, "first-2", "y")
    assert new == "<!-- first-20 -->\nkeep\n<!-- /first-20 -->\n<!-- first-2 -->\ny\n<!-- /first-2 -->\n"


def test_a_marker_quoted_in_a_sentence_is_text_not_a_marker() -> None:
    doc = "The tables go between `<!-- first-2 -->` and `<!-- /first-2 -->`.\n" + DOC
    new = replace_block(doc, "first-2", "y")
    assert new.startswith("The tables go between `<!-- first-2 -->` and `<!-- /first-2 -->`.\n# Title")
    assert "<!-- first-2 -->\ny\n<!-- /first-2 -->\n\nAfter.\n" in new


def test_a_block_at_the_very_end_keeps_the_document_as_it_ended() -> None:
    assert replace_block("<!-- first-2 -->\nx\n<!-- /first-2 -->", "first-2", "y") == (
        "<!-- first-2 -->\ny\n<!-- /first-2 -->"
    )


def _evaluated(tmp_path: Path) -> tuple[Path, Path]:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": q.id, "question": q.question, "answers": q.answers, "type": q.type}) + "\n"
            for q in QUESTIONS
        )
    )
    out = tmp_path / "eval"

    def run(question: EvalQuestion) -> object:
        return _result("Paris" if question.id == "a" else "no", [100, 200], ["d1#0"])

    Evaluation(out, {"x": 1}).run(QUESTIONS, {"retrac": run, "rag": run})
    return questions, out


def test_report_only_writes_the_report_into_the_readme(tmp_path: Path) -> None:
    questions, out = _evaluated(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(DOC)
    args = ["eval", "--questions", str(questions), "--out", str(out), "--mode", "retrac,rag"]
    args += ["--report-only", "--report-name", "first-2", "--readme", str(readme)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    table = (out / "first-2.md").read_text().strip()
    assert f"<!-- first-2 -->\n{table}\n<!-- /first-2 -->" in text
    assert text.startswith("# Title\n\nIntro.\n\n") and text.endswith("\n\nAfter.\n")
    assert "old table" not in text and "| retrac | 2 |" in text


def test_a_readme_without_the_markers_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    questions, out = _evaluated(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\nno block here\n")
    args = ["eval", "--questions", str(questions), "--out", str(out), "--mode", "retrac,rag"]
    args += ["--report-only", "--report-name", "first-2", "--readme", str(readme)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert str(readme) in result.output and "<!-- first-2 -->" in result.output
    assert readme.read_text() == "# Title\n\nno block here\n"
    assert (out / "first-2.md").exists()  # the report itself was written


def test_a_mode_without_results_leaves_the_readme_and_the_report_as_they_were(tmp_path: Path) -> None:
    questions, out = _evaluated(tmp_path)  # retrac and rag ran; react never did
    readme = tmp_path / "README.md"
    readme.write_text(DOC)
    args = ["eval", "--questions", str(questions), "--out", str(out), "--mode", "retrac,rag,react"]
    args += ["--report-only", "--report-name", "first-2", "--readme", str(readme)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "react has 0 of 2" in result.output and "retrac has" not in result.output
    assert readme.read_text() == DOC
    assert not (out / "first-2.md").exists()  # nothing redrawn either


def test_missing_rows_counts_per_mode_the_questions_without_a_result(tmp_path: Path) -> None:
    _, out = _evaluated(tmp_path)
    rows = Evaluation(out, {"x": 1}).rows
    ids = [q.id for q in QUESTIONS]
    assert missing_rows(rows, ids, ["retrac", "rag"]) == {}
    assert missing_rows(rows, [*ids, "z"], ["retrac", "react"]) == {"retrac": 1, "react": len(ids) + 1}
    assert missing_rows([r for r in rows if r.id != ids[0]], ids, ["rag"]) == {"rag": 1}
