"""Canned model outputs for the scripted LLM, written as the models would write them."""

from __future__ import annotations

from typing import Any


def search(query: str, gap: str = "") -> dict[str, Any]:
    return {"gap": gap or f"find {query}", "call": {"tool": "search", "query": query}}


def pick(number: int, gap: str = "") -> dict[str, Any]:
    return {"gap": gap or f"candidate {number}", "call": {"tool": "pick", "number": number}}


def open_(ref: str) -> dict[str, Any]:
    return {"gap": f"read {ref}", "call": {"tool": "open", "id": ref}}


def finish(answer: str) -> dict[str, Any]:
    return {"gap": "answer", "call": {"tool": "finish", "answer": answer}}


def update(
    facts: list[str] = (),
    answer: str | None = None,
    uncertainties: list[str] = (),
    next_plan: list[str] = (),
    drop: list[str] = (),
    conclusions: list[dict] = (),
    failures: list[str] = (),
) -> dict[str, Any]:
    return {
        "new_evidence": [{"fact": f} for f in facts],
        "reasoning": "because",
        "conclusions": list(conclusions),
        "answer": answer,
        "drop_evidence": list(drop),
        "uncertainties": list(uncertainties),
        "failures": list(failures),
        "next_plan": list(next_plan),
    }


def constraints(*spans: str) -> dict[str, Any]:
    return {"constraints": list(spans)}


def final(answer: str, *evidence_ids: str) -> dict[str, Any]:
    return {"answer": answer, "evidence_ids": list(evidence_ids)}
