"""The evaluation instrument: standard scores, the baselines on the scripted LLM, and a harness
that writes each result as it ends and continues where it stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.baselines.rag import RagAnswerer
from retrac_local.baselines.react import ReactAgent
from retrac_local.cli.main import cli
from retrac_local.config import Settings
from retrac_local.contract.events import RunResult, RunStatus
from retrac_local.contract.schemas import ShortAnswer
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.errors import RetracError
from retrac_local.eval.codehash import closure, mode_version
from retrac_local.eval.harness import Evaluation, describe_questions, parse_modes, score
from retrac_local.eval.questions import EvalQuestion, load_questions
from retrac_local.eval.rows import EvalRow, read_rows
from retrac_local.eval.scoring import best, doc_recall, exact_match, f1, normalize_answer
from retrac_local.eval.summary import context_by_call, markdown, summarize, write_report
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import finish, search

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


# -- scoring ----------------------------------------------------------------------------------------


def test_scores_follow_the_squad_normalisation() -> None:
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert exact_match("the Eiffel tower", "Eiffel Tower.") == 1.0
    assert f1("Eiffel Tower in Paris", "Eiffel Tower") == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert f1("no", "yes") == 0.0 and f1("yes", "yes") == 1.0
    assert f1("yes it is", "yes") == 0.0  # yes/no answers score only when they match exactly
    assert best("Jonas Pell", ["Ada Vellacott", "Jonas Pell"]) == (1.0, 1.0)
    assert best(None, ["x"]) == (0.0, 0.0)
    assert doc_recall(["a", "c"], ["a", "b"]) == 0.5 and doc_recall(["a"], []) is None


# -- questions ------------------------------------------------------------------------------------


def test_questions_load_with_offset_and_limit_and_bad_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"question {i}?", "answers": [str(i)], "type": "bridge"} for i in range(5)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert [q.id for q in load_questions(path, offset=1, limit=2)] == ["q1", "q2"]
    path.write_text(json.dumps(rows[0]) + "\n" + '{"id": "q9", "question": "no answers"}\n')
    with pytest.raises(RetracError, match=r"q\.jsonl, line 2: not a question record"):
        load_questions(path)
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[0]) + "\n")
    with pytest.raises(RetracError, match="'q0' occurs more than once"):
        load_questions(path)
    for bad, why in (
        ('["q", "a"]', "a JSON list, not an object"),
        ('{"id": "q", "question": 42, "answers": ["a"]}', "question"),
        ('{"id": "q", "question": "q?", "answers": ["a"], "supporting_doc_ids": "d1"}', "supporting_doc_ids"),
        ('{"id": "q", "question": "q?", "answers": "a"}', "answers"),
    ):
        path.write_text(bad + "\n")
        with pytest.raises(RetracError, match=f"line 1: not a question record.*{why}"):
            load_questions(path)
    with pytest.raises(RetracError, match="unknown mode"):
        parse_modes("retrac,reflexion")


# -- the baselines ----------------------------------------------------------------------------------


def test_react_keeps_every_observation_in_one_growing_conversation(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue(
        search("Karn Point Lighthouse designer"), search("Ada Vellacott born"), finish("1849")
    )
    result = ReactAgent(llm, orrin, settings).run(Q)
    assert (
        result.answer == "1849"
        and result.status == RunStatus.ANSWERED
        and result.stop_reason == "planner-finished"
    )
    assert result.rounds == 2 and result.llm_calls == 3
    last = llm.calls[-1].messages
    assert len(last) == 6 and "Ada Vellacott" in last[3]["content"] and "1849" in last[5]["content"]
    prompts = [c["prompt_tokens"] for c in result.calls]
    assert prompts == sorted(prompts) and prompts[0] < prompts[-1]  # the context only grows
    assert "ada-vellacott#0" in result.retrieved and result.citations == []


def test_react_is_forced_to_answer_when_the_step_budget_is_spent(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    settings = settings.model_copy(
        update={"budget": settings.budget.model_copy(update={"max_rounds": 1, "max_steps_per_round": 2})}
    )
    llm = ScriptedLLM().enqueue(search("Karn Point"), search("Ada Vellacott"), ShortAnswer(answer="1849"))
    result = ReactAgent(llm, orrin, settings).run(Q)
    assert (
        result.answer == "1849"
        and result.status == RunStatus.BUDGET_EXHAUSTED
        and result.stop_reason == "budget-steps"
    )
    assert (
        llm.calls[-1].schema is ShortAnswer
        and "No tool calls are left" in llm.calls[-1].messages[-1]["content"]
    )


def test_react_answers_before_the_context_overflows(settings: Settings, orrin: MemoryCorpus) -> None:
    queries = iter(
        ["Karn Point Lighthouse", "Ada Vellacott", "Jonas Pell", "lighthouse engineer", "Port Saltry"] * 4
    )

    def act(messages, schema):  # searches until the agent asks for the answer
        return ShortAnswer(answer="1849") if schema is ShortAnswer else search(next(queries))

    llm = ScriptedLLM(n_ctx=900).enqueue(*[act] * 20)
    result = ReactAgent(llm, orrin, settings).run(Q)
    assert result.stop_reason == "context" and result.answer == "1849" and 1 <= result.rounds < 12
    assert llm.calls[-1].schema is ShortAnswer
    assert result.peak_prompt_tokens + settings.sampling.answer_max_tokens <= 900


def test_react_refuses_an_early_finish_under_a_long_horizon_budget(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    settings = settings.model_copy(
        update={"budget": settings.budget.model_copy(update={"min_tool_calls": 2})}
    )
    llm = ScriptedLLM().enqueue(finish("1856"), search("Karn Point"), search("Ada Vellacott"), finish("1849"))
    result = ReactAgent(llm, orrin, settings).run(Q)
    assert result.answer == "1849" and result.rounds == 2
    assert "2 more tool call(s)" in llm.calls[1].messages[-1]["content"]


def test_rag_answers_once_from_the_top_chunks(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(ShortAnswer(answer="1849"))
    result = RagAnswerer(llm, orrin, settings, k=2).run(Q)
    assert result.answer == "1849" and result.llm_calls == 1 and len(result.retrieved) == 2
    prompt = llm.calls[0].messages[0]["content"]
    assert all(f"[{c}]" in prompt for c in result.retrieved) and prompt.rstrip().endswith(Q)


# -- the harness ----------------------------------------------------------------------------------


def _result(answer: str, prompt_tokens: list[int], retrieved: list[str]) -> RunResult:
    calls = [
        {"purpose": "action", "prompt_tokens": p, "cached_tokens": 0, "completion_tokens": 10, "seconds": 0.1}
        for p in prompt_tokens
    ]
    return RunResult(
        "r",
        "q",
        RunStatus.ANSWERED,
        answer,
        [],
        1,
        "x",
        len(calls),
        sum(prompt_tokens),
        10 * len(calls),
        max(prompt_tokens),
        1.0,
        0.3,
        calls,
        retrieved,
    )


QUESTIONS = [
    EvalQuestion("a", "qa?", ["Paris"], ["d1", "d2"], "bridge"),
    EvalQuestion("b", "qb?", ["yes"], ["d3"], "comparison"),
]


def test_the_harness_writes_each_result_and_continues_where_it_stopped(tmp_path: Path) -> None:
    out, ran = tmp_path / "eval", []

    def good(question: EvalQuestion) -> RunResult:
        ran.append(question.id)
        return _result("Paris" if question.id == "a" else "no", [100, 200], ["d1#0", "d1#1", "d3#0"])

    def dies_on_b(question: EvalQuestion) -> RunResult:
        if question.id == "b":
            raise KeyboardInterrupt
        return good(question)

    with pytest.raises(KeyboardInterrupt):
        Evaluation(out, {"x": 1}).run(QUESTIONS, {"retrac": good, "rag": dies_on_b})
    assert ran == ["a", "a", "b"]
    with open(out / "results.jsonl", "a") as f:
        f.write('{"id": "b", "mode": "rag", "f1"')  # a line cut by a kill
    evaluation = Evaluation(out, {"x": 1})
    assert [(r.id, r.mode) for r in evaluation.rows] == [("a", "retrac"), ("a", "rag"), ("b", "retrac")]
    evaluation.run(QUESTIONS, {"retrac": good, "rag": good})
    assert ran == ["a", "a", "b", "b"]  # only the missing pair ran
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and rows[0]["f1"] == 1.0 and rows[0]["doc_recall"] == 0.5
    assert rows[0]["retrieved_doc_ids"] == ["d1", "d3"] and [
        c["prompt_tokens"] for c in rows[0]["calls"]
    ] == [100, 200]
    with pytest.raises(RetracError, match="other settings \\(x differ\\)"):
        Evaluation(out, {"x": 2})
    assert len(Evaluation(out, {"x": 2}, check=False).rows) == 4  # redrawing the report runs nothing: allowed


def test_the_report_compares_modes_on_the_same_questions(tmp_path: Path) -> None:
    rows = [
        score(QUESTIONS[0], "retrac", _result("Paris", [300, 310, 305], ["d1#0", "d2#0"])),
        score(QUESTIONS[0], "react", _result("London", [300, 900, 1500], ["d1#0"])),
        score(QUESTIONS[1], "retrac", _result("yes", [300], [])),
    ]  # react has not run b yet
    summary = summarize(rows, ["retrac", "react"])
    assert summary["questions"] == 1
    retrac, react = summary["modes"]["retrac"], summary["modes"]["react"]
    assert (
        retrac["f1"] == 1.0
        and react["f1"] == 0.0
        and retrac["doc_recall"] == 1.0
        and react["doc_recall"] == 0.5
    )
    assert retrac["peak_prompt_tokens"] == 310 and react["max_prompt_tokens"] == 1500
    assert summary["by_type"]["bridge"]["retrac"]["n"] == 1
    assert context_by_call(rows, "react") == [(1, 300.0, 1), (2, 900.0, 1), (3, 1500.0, 1)]
    assert "| retrac | 1 | 1.000 | 1.000 | 1.000 |" in markdown(summary, "t")
    write_report(tmp_path, rows, ["retrac", "react"], "t")
    assert json.loads((tmp_path / "summary.json").read_text())["questions"] == 1
    for name in ("summary-context.png", "summary-f1-vs-tokens.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_gives_ratios_and_the_prompt_by_round(tmp_path: Path) -> None:
    retrac = _result("Paris", [100, 300, 500, 700, 710, 320, 720, 400], ["d1#0"])
    purposes = [
        "constraints",
        "action",
        "action",
        "compress",
        "compress",
        "action",
        "compress",
        "finalize",
    ]  # a retry
    retrac.calls = [dict(c, purpose=p) for c, p in zip(retrac.calls, purposes, strict=True)]
    rows = [
        score(QUESTIONS[0], "retrac", retrac),
        score(QUESTIONS[0], "react", _result("Paris", [300, 900, 1500], [])),
    ]
    summary = summarize(rows, ["retrac", "react"])
    assert summary["retrac_by_round"] == [
        {"round": 1, "questions": 1, "largest_prompt": 710, "first_prompt": 300},
        {"round": 2, "questions": 1, "largest_prompt": 720, "first_prompt": 320},
    ]
    vs = summary["retrac_vs"]["react"]
    assert vs["peak_prompt_ratio"] == round(720 / 1500, 3) and vs["f1_diff"] == 0.0
    assert vs["total_tokens_ratio"] == round((3750 + 80) / (2700 + 30), 3)
    text = markdown(summary, "t")
    assert "| react | 0.48× | 0.48× | 1.40× | 0.000 |" in text and "| 2 | 1 | 320 | 720 |" in text


def test_eval_rejects_a_bad_questions_file_before_loading_models(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    result = CliRunner().invoke(cli, ["eval", "--questions", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "bad.jsonl, line 1" in result.output and "Traceback" not in result.output


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_each_mode_is_hashed_over_the_code_it_imports(tmp_path: Path) -> None:
    root = _package(
        tmp_path / "retrac_local",
        {
            "__init__.py": "",
            "agent/__init__.py": "",
            "config.py": "x = 1\n",
            "agent/loop.py": "from retrac_local.agent import policy\nprompts.render('finalize', a=1)\n",
            "baselines/react.py": "def f():\n    from retrac_local.agent.policy import X\n",
            "baselines/rag.py": "import retrac_local.config\n",
            "agent/policy.py": "X = 1\n",
            "api.py": "",
            "prompts/finalize.j2": "Answer.",
            "prompts/other.j2": "Other.",
            "bench/speed.py": "x = 1\n",
        },
    )
    for name in ("llm", "corpus"):
        (root / name).mkdir()
    before = {m: mode_version.__wrapped__(m, root) for m in ("retrac", "react", "rag")}
    names = {p.relative_to(root).as_posix() for p in closure(("retrac_local.agent.loop",), root)}
    assert names == {
        "__init__.py",
        "agent/__init__.py",
        "agent/loop.py",
        "agent/policy.py",
        "prompts/finalize.j2",
    }
    (root / "bench/speed.py").write_text("x = 2\n")
    (root / "prompts/other.j2").write_text("Changed.")
    assert {m: mode_version.__wrapped__(m, root) for m in before} == before  # code no mode answers with
    (root / "prompts/finalize.j2").write_text("Answer briefly.")
    after = {m: mode_version.__wrapped__(m, root) for m in before}
    assert (
        after["retrac"] != before["retrac"]
        and after["react"] == before["react"]
        and after["rag"] == before["rag"]
    )
    (root / "agent/policy.py").write_text("X = 2\n")  # imported inside a function by react
    assert mode_version.__wrapped__("react", root) != before["react"]
    assert mode_version.__wrapped__("rag", root) == before["rag"]


def test_a_comment_a_docstring_or_the_layout_does_not_change_a_modes_version(tmp_path: Path) -> None:
    from retrac_local.eval.codehash import legacy_version

    root = _package(
        tmp_path / "retrac_local",
        {
            "__init__.py": "",
            "agent/__init__.py": "",
            "config.py": "",
            "api.py": "",
            "baselines/react.py": "",
            "baselines/rag.py": "",
            "agent/loop.py": '"""The loop."""\n\n\ndef step(x):\n    """One step."""\n    return x + 1  # add one\n',
        },
    )
    for name in ("llm", "corpus"):
        (root / name).mkdir()
    before, legacy = mode_version.__wrapped__("retrac", root), legacy_version.__wrapped__("retrac", root)
    (root / "agent/loop.py").write_text(
        '"""The loop, reworded."""\n\n\ndef step(x):\n    # one more than x\n'
        "    return (\n        x + 1\n    )\n"
    )
    assert mode_version.__wrapped__("retrac", root) == before
    assert legacy_version.__wrapped__("retrac", root) != legacy  # the bytes changed
    (root / "agent/loop.py").write_text('"""The loop."""\n\n\ndef step(x):\n    return x + 2\n')
    assert mode_version.__wrapped__("retrac", root) != before


def test_results_recorded_under_the_legacy_hash_of_todays_code_are_carried_over(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    Evaluation(out, {"x": 1, "code": {"retrac": "bytes1", "rag": "bytes2"}}).run(
        QUESTIONS,
        {
            "retrac": lambda q: _result("Paris", [100], ["d1#0"]),
            "rag": lambda q: _result("Paris", [100], ["d1#0"]),
        },
    )
    # retrac's files are unchanged (legacy hash equal), rag's changed since (legacy hash differs)
    evaluation = Evaluation(
        out,
        {"x": 1, "code": {"retrac": "tree1", "rag": "tree2"}},
        legacy_code={"retrac": {"bytes1"}, "rag": {"bytes9"}},
    )
    assert evaluation.set_aside == {"rag": "bytes2"}
    assert [(r.mode, r.code) for r in evaluation.rows] == [("retrac", "tree1"), ("retrac", "tree1")]
    assert json.loads((out / "eval.json").read_text())["code"] == {"retrac": "tree1", "rag": "tree2"}
    again = Evaluation(
        out, {"x": 1, "code": {"retrac": "tree1", "rag": "tree2"}}, legacy_code={"retrac": {"bytes1"}}
    )
    assert again.set_aside == {} and len(again.rows) == 2


def test_a_mode_whose_code_changed_runs_again_and_the_others_are_kept(tmp_path: Path) -> None:
    out, ran = tmp_path / "eval", []

    def good(question: EvalQuestion) -> RunResult:
        ran.append(question.id)
        return _result("Paris", [100], ["d1#0"])

    Evaluation(out, {"x": 1, "code": {"retrac": "v1", "rag": "r1"}}).run(
        QUESTIONS, {"retrac": good, "rag": good}
    )
    evaluation = Evaluation(out, {"x": 1, "code": {"retrac": "v2", "rag": "r1"}})
    assert [(r.id, r.mode) for r in evaluation.rows] == [("a", "rag"), ("b", "rag")]
    assert len((out / "results.retrac-v1.jsonl").read_text().splitlines()) == 2  # set aside, not lost
    (out / "results.jsonl").write_text(
        (out / "results.retrac-v1.jsonl").read_text() + (out / "results.jsonl").read_text()
    )
    (out / "eval.json").write_text((out / "eval.json").read_text().replace('"v2"', '"v1"'))
    again = Evaluation(out, {"x": 1, "code": {"retrac": "v2", "rag": "r1"}})  # the old rows back (a checkout)
    assert again.set_aside == {"retrac": "v1"} and {r.mode for r in again.rows} == {"rag"}
    assert len((out / "results.retrac-v1.jsonl").read_text().splitlines()) == 2  # once
    ran.clear()
    evaluation.run(QUESTIONS, {"retrac": good, "rag": good})
    assert ran == ["a", "b"]  # only the changed mode ran
    assert json.loads((out / "eval.json").read_text())["code"]["retrac"] == "v2"
    with pytest.raises(RetracError, match="other settings \\(x differ\\)"):
        Evaluation(out, {"x": 2, "code": {"retrac": "v2", "rag": "r1"}})


def test_the_report_sets_todays_code_against_the_results_its_earlier_code_left(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    old = {"a": _result("London", [100], ["d1#0"]), "b": _result("yes", [100], ["d3#0"])}
    Evaluation(out, {"x": 1, "code": {"retrac": "v1", "rag": "r1"}}).run(
        QUESTIONS, {"retrac": lambda q: old[q.id], "rag": lambda q: _result("Rome", [100], [])}
    )
    today = Evaluation(out, {"x": 1, "code": {"retrac": "v2", "rag": "r1"}})
    today.run(
        QUESTIONS[:1],
        {"retrac": lambda q: _result("Paris", [100], ["d1#0"]), "rag": lambda q: _result("Rome", [100], [])},
    )
    earlier = today.set_aside_results()
    assert list(earlier) == [("retrac", "v1")] and len(earlier["retrac", "v1"]) == 2
    summary = summarize(today.rows, ["retrac", "rag"], earlier=earlier)
    [d] = summary["against_earlier"]
    # only question a ran today: the comparison is on it alone (b's earlier F1 of 1.0 is not counted)
    assert (d["mode"], d["earlier_code"], d["n"], d["f1_today"], d["f1_earlier"], d["f1_diff"]) == (
        "retrac",
        "v1",
        1,
        1.0,
        0.0,
        1.0,
    )
    assert "| retrac | `v1` | 1 | 1.000 | 0.000 | +1.000 | [+1.000, +1.000] |" in markdown(summary, "t")
    assert "against_earlier" not in summarize(today.rows, ["retrac", "rag"])  # no earlier results: no table


def test_a_setting_added_since_the_evaluation_began_does_not_refuse_it(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    Evaluation(out, {"budget": {"rounds": 4}, "code": {"retrac": "v1"}})
    # new code brought a new setting: the mode's rows are set aside by its code, not refused
    evaluation = Evaluation(out, {"budget": {"rounds": 4, "passages": 8}, "code": {"retrac": "v2"}})
    assert evaluation.set_aside == {"retrac": "v1"}
    with pytest.raises(RetracError, match="budget differ"):  # a changed value is still refused
        Evaluation(out, {"budget": {"rounds": 3, "passages": 8}, "code": {"retrac": "v2"}})


def test_a_setting_renamed_since_the_evaluation_began_is_read_under_its_new_name(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    code = {"retrac": "v1"}
    Evaluation(out, {"sampling": {"state_max_tokens": 900}, "code": code})  # the name older code wrote
    Evaluation(out, {"sampling": {"update_max_tokens": 900}, "code": code})  # the same setting: continues
    with pytest.raises(RetracError, match="sampling differ"):  # a changed value is still refused
        Evaluation(out, {"sampling": {"update_max_tokens": 600}, "code": code})


def test_the_report_counts_repeated_searches_and_pairs_the_modes_with_an_interval() -> None:
    def row(
        qid: str, mode: str, f1: float, searches: list[str], seconds: float, answer: str = "Paris"
    ) -> EvalRow:
        result = _result(answer, [100], ["d1#0"])
        result.searches, result.first_retrieved, result.seconds = searches, ["d1#0"], seconds
        question = EvalQuestion(
            qid, "When did it open?" if qid == "q0" else "Who?", ["Paris"], ["d1", "d2"], "bridge"
        )
        return score(question, mode, result).model_copy(update={"f1": f1})

    rows = [
        row(f"q{i}", "retrac", 1.0 if i % 2 else 0.5, ["a b", "b a", "c"], 10.0 * (i + 1)) for i in range(6)
    ]
    rows += [row(f"q{i}", "rag", 0.5, ["x"], 2.0) for i in range(6)]
    summary = summarize(rows, ["retrac", "rag"])
    retrac = summary["modes"]["retrac"]
    assert retrac["repeated_search_rate"] == round(6 / 18, 4) and retrac["distinct_searches"] == 2.0
    assert retrac["median_seconds"] == 35.0 and retrac["first_doc_recall"] == 0.5
    assert retrac["wrong_kind_rate"] == round(1 / 6, 4)  # "Paris" for "When did it open?"
    pair = summary["paired"]["retrac-rag"]
    assert (
        pair["n"] == 6 and pair["f1_diff"] == 0.25 and 0.0 <= pair["ci_low"] <= 0.25 <= pair["ci_high"] <= 0.5
    )
    text = markdown(summary, "t")
    assert "| retrac − rag | +0.250 |" in text and "| retrac | 2.0 | 33% |" in text


def test_the_questions_file_is_known_by_name_and_content_not_by_its_folder(tmp_path: Path) -> None:
    here, there = tmp_path / "a" / "dev.jsonl", tmp_path / "b" / "dev.jsonl"
    for path in (here, there):
        path.parent.mkdir()
        path.write_text('{"id": "q", "question": "q?", "answers": ["a"]}\n')
    out = tmp_path / "eval"
    Evaluation(out, {"questions_file": describe_questions(here)})
    Evaluation(out, {"questions_file": describe_questions(there)})  # another checkout: the same evaluation
    there.write_text('{"id": "q", "question": "q?", "answers": ["b"]}\n')
    with pytest.raises(RetracError, match="questions_file differ"):
        Evaluation(out, {"questions_file": describe_questions(there)})
    # an evaluation recorded by an older harness, as an absolute path
    (out / "eval.json").write_text(json.dumps({"questions_file": str(here.resolve())}))
    Evaluation(out, {"questions_file": describe_questions(here)})
    (out / "eval.json").write_text(
        json.dumps({"questions_file": "/elsewhere/dev.jsonl"})
    )  # gone: known by its name
    Evaluation(out, {"questions_file": describe_questions(here)})
    with pytest.raises(RetracError, match="questions_file differ"):
        Evaluation(
            out, {"questions_file": describe_questions(tmp_path / "a" / "dev.jsonl").replace("dev", "test")}
        )


def test_ctrl_c_stops_an_evaluation_even_when_the_model_call_swallows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a llama.cpp generation a KeyboardInterrupt is lost in a ctypes callback; the first
    Ctrl-C must still stop the evaluation at the next check, with the finished results kept."""
    import contextlib
    import os
    import signal

    from retrac_local import interrupt
    from retrac_local.api import Retrac

    ran: list[str] = []

    def runner(question: EvalQuestion) -> RunResult:
        ran.append(question.id)
        with contextlib.suppress(KeyboardInterrupt):  # what a generation does with a plain KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGINT)
        interrupt.check()  # what the backend does after each generation
        return _result("Paris", [100], [])

    monkeypatch.setattr(Retrac, "agent", lambda self: None)
    monkeypatch.setattr("retrac_local.eval.harness.make_runners", lambda *a, **k: {"rag": runner})
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": q.id, "question": q.question, "answers": q.answers}) + "\n" for q in QUESTIONS
        )
    )
    result = CliRunner().invoke(
        cli, ["eval", "--questions", str(questions), "--mode", "rag", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 130 and "interrupted" in result.output, result.output
    assert ran == ["a"]  # stopped after the first question, not carried on


def test_a_pending_run_the_store_does_not_hold_is_started_afresh(tmp_path: Path) -> None:
    from retrac_local.contract.events import RunFinished, RunStarted
    from retrac_local.eval.harness import make_runners
    from retrac_local.runstore import RunStore

    calls: list[tuple[str, str]] = []

    class Agent:
        def ask(self, question: str):
            calls.append(("ask", question))
            yield RunStarted("new-run", question)
            yield RunFinished(_result("Paris", [100], []))

        def resume(self, run_id: str):
            calls.append(("resume", run_id))
            yield RunFinished(_result("Paris", [100], []))

    class App:
        runs = RunStore(tmp_path / "runs.sqlite")

        def llms(self):
            return None, None

        def agent(self):
            return Agent()

    evaluation = Evaluation(tmp_path / "eval", {"x": 1})
    evaluation.set_pending(QUESTIONS[0], "20261130-000000-gone00")  # from a store that is not this one
    result = make_runners(App(), ["retrac"], evaluation, rag_k=5)["retrac"](QUESTIONS[0])
    assert result.answer == "Paris" and calls == [("ask", "qa?")]
    assert evaluation.pending(QUESTIONS[0]) is None


def test_a_row_of_an_older_harness_reads_typed_and_is_written_back_with_all_it_held() -> None:
    old = {
        "id": "q7",
        "mode": "retrac",
        "question": "Who built it?",
        "answer": "Jonas Pell",
        "gold": ["Jonas Pell"],
        "em": 1.0,
        "f1": 1.0,
        "status": "answered",
        "seconds": 12.5,
        "citations": [
            {
                "evidence_id": "E1",
                "doc_id": "d1",
                "chunk_id": "d1#0",
                "title": "Karn Point",
                "source": "karn.md",
                "quote": "Jonas Pell built it.",
                "verified": "yes",
            }
        ],
        "calls": [{"purpose": "action", "prompt_tokens": 300, "completion_tokens": 20, "seconds": 2.0}],
        "judge": "kept",  # a key today's harness does not know
    }
    [row] = read_rows([json.dumps(old), "  "])
    assert row.status is RunStatus.ANSWERED and row.citations[0].quote == "Jonas Pell built it."
    assert (
        row.calls[0].cached_tokens == 0 and row.total_tokens == 0 and row.method is None
    )  # no token totals recorded
    back = json.loads(row.line())
    assert back["judge"] == "kept" and "method" not in back
    defaults = {"citations": {"section": "", "page": 0}, "calls": {"cached_tokens": 0}}  # fields added since
    assert {k: back[k] for k in old if k not in defaults} == {
        k: v for k, v in old.items() if k not in defaults
    }
    for key, added in defaults.items():
        assert back[key] == [item | added for item in old[key]]
    with pytest.raises(
        RetracError, match=r"^r\.jsonl, line 2: not an evaluation row \(status: .*fix or remove"
    ):
        read_rows(["", json.dumps(old | {"status": "maybe"})], "r.jsonl")
