"""A new run's first evidence, from the cross-task memory: verified facts of similar past runs
whose quotes still stand, word for word, in the corpus as it is now, and that pass again the checks
any new evidence passes (the quote states the fact; it does not speak to the model)."""

from __future__ import annotations

from typing import Any

from retrac_local.agent.memory import RunMemory
from retrac_local.agent.verify import addresses_the_model, quote_in, support, support_level
from retrac_local.config import MemorySettings
from retrac_local.contract.state import Evidence
from retrac_local.corpus.base import Corpus


def seed_from_memory(
    memory: RunMemory | None, corpus: Corpus, settings: MemorySettings, question: str
) -> tuple[list[Evidence], list[dict[str, Any]]]:
    """(evidence to start from, the past runs that gave it — recorded with the run)."""
    if memory is None:
        return [], []
    seeds: list[Evidence] = []
    used: list[dict[str, Any]] = []
    for past in memory.recall(question, limit=settings.max_runs, min_similarity=settings.min_similarity):
        taken = 0
        for item in past.evidence:
            chunk = corpus.get_chunk(item["source"])
            if (
                len(seeds) >= settings.max_evidence
                or chunk is None
                or not quote_in(item["quote"], chunk.text)
            ):
                continue
            level = support_level(support(item["fact"], item["quote"], chunk.subject))
            if level is None or addresses_the_model(item["quote"]):
                continue
            if any(e.source == item["source"] and e.quote == item["quote"] for e in seeds):
                continue
            seeds.append(
                Evidence(
                    id=f"E{len(seeds) + 1}",
                    fact=item["fact"],
                    source=item["source"],
                    quote=item["quote"],
                    verified=level,
                    round=0,
                    title=chunk.subject,
                )
            )
            taken += 1
        used.append(
            {
                "run_id": past.run_id,
                "question": past.question,
                "similarity": past.similarity,
                "evidence_offered": len(past.evidence),
                "evidence_seeded": taken,
            }
        )
    return seeds, used
