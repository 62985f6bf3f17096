"""Versions shown alike by replay keep an evaluation's results (eval/equivalence.py): a mode whose
tapes all play back the same on today's code joins the versions that recorded them; one tape that
plays otherwise, or a tape that does not say which code recorded it, shows nothing."""

from __future__ import annotations

import json
from pathlib import Path

from retrac_local.config import Settings
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.eval.equivalence import alike, joined, prove
from retrac_local.eval.harness import Evaluation
from retrac_local.eval.tapes import write_tape
from tests.test_eval import QUESTIONS, _result
from tests.test_recording import _tape


def _today(mode: str) -> str:
    return {"retrac": "new-retrac", "rag": "new-rag"}[mode]


def _tapes(folder: Path, settings: Settings, corpus: MemoryCorpus, mode: str, codes: list[str]) -> None:
    for i, code in enumerate(codes):
        tape = _tape(mode, settings, corpus)
        tape.code = code
        write_tape(folder, f"q{i}-{mode}", tape, corpus.titles() if mode == "retrac" else [])


def test_classes_join_through_any_shared_version() -> None:
    classes = [["a", "b"], ["c"], ["d", "e"]]
    assert joined(classes, {"b", "c"}) == [["d", "e"], ["a", "b", "c"]]
    assert joined([], {"x", "y"}) == [["x", "y"]]


def test_a_mode_whose_tapes_all_play_the_same_joins_the_versions_that_recorded_them(
    tmp_path: Path, settings: Settings, orrin: MemoryCorpus
) -> None:
    tapes, file = tmp_path / "tapes", tmp_path / "equivalent.json"
    _tapes(tapes, settings, orrin, "retrac", ["old-retrac", "old-retrac"])
    _tapes(tapes, settings, orrin, "rag", ["old-rag"])
    played = prove([tapes], file, today=_today, log=lambda line: None)
    assert played["retrac"].alike and played["retrac"].tapes == 2
    assert alike(file, "retrac", "new-retrac") == {"old-retrac"}
    assert alike(file, "rag", "old-rag") == {"new-rag"} and alike(file, "rag", "other") == set()
    proofs = json.loads(file.read_text())["retrac"]["proofs"]
    assert proofs == [{"version": "new-retrac", "alike": ["old-retrac"], "tapes": 2}]
    prove([tapes], file, today=_today, log=lambda line: None)  # the same proof again: the file is as it was
    assert json.loads(file.read_text())["retrac"]["proofs"] == proofs


def test_one_tape_that_plays_otherwise_or_an_untagged_one_shows_nothing(
    tmp_path: Path, settings: Settings, orrin: MemoryCorpus
) -> None:
    changed, untagged, file = tmp_path / "changed", tmp_path / "untagged", tmp_path / "equivalent.json"
    _tapes(changed, settings, orrin, "rag", ["old-rag"])
    tape = _tape("retrac", settings, orrin)
    tape.code = "old-retrac"
    tape.outcome["result"]["answer"] = "1850"  # what the recorded run answered, and today's code does not
    write_tape(changed, "q9-retrac", tape, orrin.titles())
    _tapes(untagged, settings, orrin, "retrac", [""])
    played = prove([changed, untagged], file, today=_today, log=lambda line: None)
    assert not played["retrac"].alike and played["retrac"].differing[0].startswith("changed/q9-retrac:")
    assert alike(file, "retrac", "new-retrac") == set() and alike(file, "rag", "new-rag") == {"old-rag"}
    only_untagged = tmp_path / "only-untagged.json"
    assert not prove([untagged], only_untagged, today=_today, log=lambda line: None)["retrac"].alike
    assert not only_untagged.exists()


def test_results_of_an_alike_version_are_carried_over_not_set_aside(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    run = {mode: (lambda q: _result("Paris", [100], ["d1#0"])) for mode in ("retrac", "rag")}
    Evaluation(out, {"x": 1, "code": {"retrac": "old-retrac", "rag": "r1"}}).run(QUESTIONS, run)
    evaluation = Evaluation(
        out, {"x": 1, "code": {"retrac": "new-retrac", "rag": "r2"}}, legacy_code={"retrac": {"old-retrac"}}
    )
    assert evaluation.set_aside == {"rag": "r1"}  # rag's code changed and nothing shows it alike
    assert {(r.mode, r.code) for r in evaluation.rows} == {("retrac", "new-retrac")}


def test_tapes_of_versions_not_shown_alike_prove_nothing_until_played_one_recorder_at_a_time(
    tmp_path: Path, settings: Settings, orrin: MemoryCorpus
) -> None:
    """Two versions whose evaluations differ can each leave tapes that play the same on today's code
    (each set too narrow to see the difference): joining both through today would carry the results
    of either over as today's."""
    tapes, file = tmp_path / "tapes", tmp_path / "equivalent.json"
    _tapes(tapes, settings, orrin, "retrac", ["old-retrac", "older-retrac"])
    lines: list[str] = []
    played = prove([tapes], file, today=_today, log=lines.append)
    assert not played["retrac"].alike and played["retrac"].apart == [["old-retrac"], ["older-retrac"]]
    assert "--recorded-by" in lines[-1] and not file.exists()
    played = prove([tapes], file, today=_today, log=lines.append, recorded_by="old-retrac")
    assert played["retrac"].alike and played["retrac"].tapes == 1
    assert alike(file, "retrac", "new-retrac") == {"old-retrac"}
    # Versions already shown alike to each other are one recorder as far as a proof goes.
    file.write_text(json.dumps({"retrac": {"classes": [["old-retrac", "older-retrac"]], "proofs": []}}))
    assert prove([tapes], file, today=_today, log=lines.append)["retrac"].alike
    assert alike(file, "retrac", "new-retrac") == {"old-retrac", "older-retrac"}
