"""What a run's stages read besides the state and the round: one object per agent, handed to the
functions of a stage instead of the agent itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrac_local.agent.memory import RunMemory
    from retrac_local.agent.meter import Meter
    from retrac_local.agent.trajectory import Relevance
    from retrac_local.config import Settings
    from retrac_local.corpus.base import Corpus
    from retrac_local.llm.base import LLM
    from retrac_local.runstore import RunStore


@dataclass(frozen=True)
class RunContext:
    """The models (metered: `meter` counts their calls and says what they were for), the collection,
    the settings, the run store, the planner's system message, the relevance measure of sentences,
    and the cross-task memory (None when off)."""

    planner: LLM
    compressor: LLM
    corpus: Corpus
    settings: Settings
    store: RunStore
    meter: Meter
    system_prompt: str
    relevance: Relevance | None = None
    memory: RunMemory | None = None
