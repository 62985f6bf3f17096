"""A real `ask` / `resume` process for the kill tests: the real agent, run store and LanceDB corpus,
with a deterministic stand-in for the models (its replies depend only on the prompt, so a resumed
run makes the same choices an uninterrupted one made). Each LLM call takes a little time, so that a
kill lands inside a round as well as between rounds. Prints one line per event, flushed.

    python tests/kill_target.py ask QUESTION        (RETRAC_HOME names the store)
    python tests/kill_target.py resume RUN_ID
    python tests/kill_target.py serve PORT          (`retrac serve` on loopback, with this model)
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retrac_local.api import Retrac  # noqa: E402
from retrac_local.corpus.embedder import HashingEmbedder  # noqa: E402
from retrac_local.llm.base import Generation, Message, Usage, completed  # noqa: E402

QUERIES = {
    1: ["Karn Point Lighthouse designer", "Orrin Lights Board"],
    2: ["Ada Vellacott born", "Port Saltry"],
    3: ["Jonas Pell engineer", "Skerra Light"],
}
CALL_SECONDS = 0.15


class Deterministic:
    name, n_ctx = "deterministic", 8192

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def generate(
        self,
        messages: list[Message],
        *,
        schema: Any = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        time.sleep(CALL_SECONDS)
        text = json.dumps(self._reply(messages, schema.__name__ if schema else ""))
        usage = Usage(self.count_tokens(str(messages)), self.count_tokens(text), 0, CALL_SECONDS)
        return completed(text, "stop", usage, schema)

    def _reply(self, messages: list[Message], schema: str) -> dict[str, Any]:
        prompt = messages[-1]["content"]
        if schema == "ConstraintsDraft":
            return {"constraints": []}
        if schema in ("Action", "PlannerAction"):
            round_number = int(re.search(r"^Round: (\d+)", messages[1]["content"], re.M).group(1)) + 1
            taken = sum(1 for m in messages if m["role"] == "assistant")
            queries = QUERIES.get(round_number, [])
            if taken < len(queries):
                return {"gap": "next fact", "call": {"tool": "search", "query": queries[taken]}}
            return {"gap": "answer", "call": {"tool": "finish", "answer": "1849"}}
        if schema == "StateUpdate":
            found = re.findall(r"^- \([^)]*\) (.+)$", prompt, re.M)
            last_round = "Latest round (3)" in prompt
            return {
                "new_evidence": [{"fact": f} for f in found[:2]],
                "reasoning": "r",
                "conclusions": [],
                "answer": "1849" if last_round else None,
                "drop_evidence": [],
                "uncertainties": [] if last_round else ["is the birth year right?"],
                "failures": [],
                "next_plan": [f"step after round {round_of(prompt)}"],
            }
        if schema == "FinalAnswer":  # cites the evidence or passage that states the year
            return {"answer": "1849", "evidence_ids": re.findall(r"\[([EP]\d+)\][^\n]*1849", prompt)[:1]}
        if schema == "Reanswer":  # the agreement check: the cited quotes give the answer again
            return {"answer": "1849"}
        raise AssertionError(f"unexpected schema {schema}")


def round_of(prompt: str) -> str:
    """The round a compression prompt is about: each round plans a new next step."""
    found = re.search(r"Latest round \((\d+)\)", prompt)
    return found.group(1) if found else "?"


def main() -> None:
    command, argument = sys.argv[1], sys.argv[2]
    llm = Deterministic()
    if command == "serve":
        import uvicorn

        from retrac_local.config import load_settings
        from retrac_local.web.app import create_app

        settings = load_settings()
        web = create_app(
            settings, lambda: Retrac(settings, planner=llm, compressor=llm, embedder=HashingEmbedder())
        )
        uvicorn.run(
            web, host="127.0.0.1", port=int(argument), log_level="warning", timeout_graceful_shutdown=3
        )
        return
    app = Retrac(planner=llm, compressor=llm, embedder=HashingEmbedder())
    events = app.ask(argument) if command == "ask" else app.resume(argument)
    for event in events:
        fields = {k: v for k, v in vars(event).items() if isinstance(v, (str, int, float, type(None)))}
        print(type(event).__name__, json.dumps(fields), flush=True)


if __name__ == "__main__":
    main()
