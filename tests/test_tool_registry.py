"""One tool registry (tools.py): a tool is one class and one `register` line, and the toolbox, the
action grammars and the prompts' tool list all follow it; the default tools' grammars are the ones
the taped runs were made with."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field

from retrac_local.agent.candidates import planner_action_schema
from retrac_local.agent.toolbox import Toolbox
from retrac_local.agent.trajectory import RoundRecord, Step
from retrac_local.baselines.react import ReactAgent
from retrac_local.config import RetrievalSettings, Settings
from retrac_local.contract import tools
from retrac_local.contract.schemas import action_schema
from retrac_local.contract.state import Strict
from retrac_local.corpus.base import Corpus
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import finish

GRAMMARS = Path(__file__).parent / "grammars"


class CountArgs(Strict):
    tool: Literal["count"]
    text: str = Field(description="the words to count")


class CountTool:  # a toy tool: the number of words of a text
    name = "count"
    description = "count(text): how many words a text has"
    Args: type[Strict] = CountArgs
    argument = "text"

    @classmethod
    def build(cls, corpus: Corpus, retrieval: RetrievalSettings) -> CountTool:
        return cls()

    def __call__(self, args: CountArgs) -> tools.Observation:
        return tools.Observation(f"count {args.text!r} = {len(args.text.split())} words")


@pytest.fixture
def counting() -> Iterator[None]:
    tools.register(CountTool)
    try:
        yield
    finally:
        tools.unregister("count")


def _choices(schema: type) -> list[str]:
    defs = schema.model_json_schema()["$defs"]
    return [d["properties"]["tool"]["const"] for d in defs.values() if "tool" in d.get("properties", {})]


def test_the_default_grammars_are_the_ones_the_tapes_were_made_with() -> None:
    for schema in (action_schema(), planner_action_schema()):
        pinned = json.loads((GRAMMARS / f"{schema.__name__}.json").read_text())
        assert schema.model_json_schema() == pinned, f"the {schema.__name__} grammar changed"


def test_a_registered_tool_is_in_the_grammars_the_prompts_and_the_toolbox(
    counting: None, settings: Settings
) -> None:
    assert "count" in _choices(action_schema()) and "count" in _choices(planner_action_schema())
    assert tools.tool_names() == ("search", "open", "calculate", "count")
    box = Toolbox(MemoryCorpus(), settings)
    assert "- count(text): how many words a text has" in box.descriptions()
    call = action_schema().model_validate({"gap": "g", "call": {"tool": "count", "text": "a b c"}}).call
    assert box.use(call).text == "count 'a b c' = 3 words" and tools.argument_of(call) == "a b c"
    record = RoundRecord(1, steps=[Step(1, "g", "count", "a b c", "count 'a b c' = 3 words")])
    assert record.tool_calls == 1  # a tool call, counted against the budget like any other


def test_an_agent_uses_a_registered_tool_with_no_other_change(counting: None, settings: Settings) -> None:
    llm = ScriptedLLM().enqueue({"gap": "size", "call": {"tool": "count", "text": "one two"}}, finish("2"))
    result = ReactAgent(llm, MemoryCorpus(), settings).run("How many words has 'one two'?")
    assert result.answer == "2" and result.rounds == 1
    assert "count(text)" in llm.calls[0].messages[0]["content"]  # the system prompt lists it
    assert "count 'one two' = 2 words" in llm.calls[1].messages[-1]["content"]  # its observation came back


def test_a_name_taken_is_refused_and_the_default_set_is_back_after(counting: None) -> None:
    with pytest.raises(ValueError, match="count"):
        tools.register(CountTool)
    tools.unregister("count")
    assert tools.tool_names() == ("search", "open", "calculate") and "count" not in _choices(action_schema())
    tools.register(CountTool)  # for the fixture to take away again
