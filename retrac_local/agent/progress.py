"""What one Re-TRAC run has done so far, besides its stored rounds: built the same way when a run
starts and when it resumes, so that the agent keeps nothing of a run between runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from retrac_local.agent.toolbox import Toolbox
from retrac_local.config import Settings
from retrac_local.contract.tools import tool_names
from retrac_local.corpus.base import Corpus
from retrac_local.records import StoredRound
from retrac_local.rules.book import RuleBook

if TYPE_CHECKING:
    from retrac_local.agent.firstreading import FirstReading


@dataclass
class RunProgress:
    toolbox: Toolbox  # its searches: a search made again shows its next results
    tool_calls: int = 0  # of the whole run, for budget.min_tool_calls
    slots_used: int = 0  # round slots spent, carried ones included: at most budget.max_rounds
    seen_chunks: set[str] = field(default_factory=set)  # chunks the run's committed rounds returned
    rules: RuleBook = field(default_factory=RuleBook)  # the round's firings, stored with the round
    first_reading: FirstReading | None = None  # what hop 0's passages answered, when read this session

    @classmethod
    def of(cls, corpus: Corpus, settings: Settings, rounds: list[StoredRound]) -> RunProgress:
        """The progress of a run whose committed rounds are `rounds` (as the run store keeps them;
        none for a run that starts now)."""
        steps = [step for r in rounds for step in r["trajectory"]["steps"]]
        toolbox = Toolbox(corpus, settings)
        toolbox.remember([s["argument"] for s in steps if s["tool"] == "search"])
        return cls(
            toolbox,
            tool_calls=sum(1 for s in steps if s["tool"] in tool_names()),
            slots_used=sum(r["stats"].get("slots", 1) for r in rounds),
            seen_chunks={c for s in steps for c in s.get("chunk_ids", [])},
            rules=RuleBook(settings.rules.disabled),
        )
