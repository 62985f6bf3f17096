"""The app of a batch's workers in the tests: the real agent, run store and LanceDB corpus, with the
deterministic stand-in for the models of the kill tests. A question holding `fail_on` makes the
model raise (a server gone mid-run), so that one question of a batch fails and the rest go on.

    python tests/batch_target.py QUESTIONS OUT WORKERS    (RETRAC_HOME names the home; for the kill test)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from retrac_local.api import Retrac  # noqa: E402
from retrac_local.config import Settings  # noqa: E402
from retrac_local.corpus.embedder import HashingEmbedder  # noqa: E402
from retrac_local.errors import ModelError  # noqa: E402
from tests.kill_target import Deterministic  # noqa: E402


class Failing(Deterministic):
    """The kill tests' model, which also answers the baselines (RAG's and ReAct's short answer)."""

    def __init__(self, fail_on: str | None) -> None:
        self.fail_on = fail_on

    def _reply(self, messages: list[Any], schema: str) -> dict[str, Any]:
        return {"answer": "1849"} if schema == "ShortAnswer" else super()._reply(messages, schema)

    def generate(self, messages: list[Any], **kwargs: Any) -> Any:
        if self.fail_on and any(self.fail_on in m["content"] for m in messages):
            raise ModelError("the model server at http://127.0.0.1:9 stopped answering")
        return super().generate(messages, **kwargs)


@dataclass(frozen=True)
class ScriptedApp:
    settings: Settings
    fail_on: str | None = None

    def __call__(self) -> Retrac:
        llm = Failing(self.fail_on)
        return Retrac(self.settings, planner=llm, compressor=llm, embedder=HashingEmbedder())


def main() -> None:
    from retrac_local.batch.driver import Batch
    from retrac_local.batch.questions import load_batch_questions
    from retrac_local.config import load_settings

    os.environ["PYTHONPATH"] = str(ROOT)  # the local Ray's workers import this module to build the app
    questions, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    settings = load_settings(retrieval={"embedder": "hashing"})
    app = ScriptedApp(settings)()
    batch = Batch(out, app.runs, app.memory, ScriptedApp(settings), workers=workers)
    batch.run(load_batch_questions(questions), lambda line, n, total: print("written", line.id, flush=True))


if __name__ == "__main__":
    main()
