"""The searches code makes before any model call, measured: doc recall of round 1's opening searches.

    python -m retrac_local.bench.hops --questions ../shared/eval/hotpotqa_dev.jsonl --offset 100 --limit 100 \\
        --out bench-out/hops

Round 1 opens with the question itself (hop 0), then `budget.opening_searches - 1` searches of the
candidates code proposes from the texts found so far (`agent/candidates.py`); no model is called
before the compressor reads them. So how well code picks those hops can be measured without a
model, in seconds a question, on the corpus of RETRAC_HOME: per hop, the gold documents found so far,
and the queries made. Tune the candidate rules on questions the reported figures do not use
(`--offset 100` and on); `--without-titles` measures the candidates without the collection's
titles (`agent/titles.py`), side by side. Writes OUT/hops.json and OUT/hops.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any


def opening_searches(app: Any, question: str, titles: Any = None) -> list[tuple[str, list[str]]]:
    """(query, chunk ids it returned) for each of round 1's opening searches, as the loop makes them
    (`titles`: the collection's `TitleIndex`, which the loop uses; None to measure without it)."""
    from retrac_local.agent import candidates
    from retrac_local.agent.toolbox import query_key
    from retrac_local.contract.state import ResearchState
    from retrac_local.contract.tools import SearchArgs, SearchTool

    r, budget = app.settings.retrieval, app.settings.budget
    state = ResearchState(question=question)
    searched: set[str] = set()
    chunks: dict[str, Any] = {}
    out: list[tuple[str, list[str]]] = []
    query = question
    for hop in range(min(budget.opening_searches, budget.max_steps_per_round)):
        if hop:
            offered = candidates.propose(state, searched, list(chunks.values()), titles=titles)
            if not offered:
                break
            query = offered[0].query
        tool = SearchTool(
            app.corpus, k=r.first_k if hop == 0 else r.k, hit_words=r.hit_words, context_window=r.open_window
        )
        observation = tool(SearchArgs(tool="search", query=query))
        searched.add(query_key(query))
        for c in observation.chunks:
            chunks.setdefault(c.chunk_id, c)
        out.append((query, [c.chunk_id for c in observation.chunks]))
    return out


def measure(app: Any, questions: list[Any], with_titles: bool = True) -> dict[str, Any]:
    from retrac_local.agent.titles import TitleIndex
    from retrac_local.agent.toolbox import doc_ids
    from retrac_local.eval.scoring import doc_recall

    titles = TitleIndex(app.corpus.titles()) if with_titles else None
    rows = []
    for q in questions:
        hops = opening_searches(app, q.question, titles)
        seen: list[str] = []
        recall = []
        for _, chunk_ids in hops:
            seen += chunk_ids
            recall.append(doc_recall(doc_ids(seen), q.supporting_doc_ids))
        rows.append({"id": q.id, "type": q.type, "queries": [h[0] for h in hops], "recall_by_hop": recall})
    depth = max(len(r["recall_by_hop"]) for r in rows)
    by_hop = [
        statistics.mean(r["recall_by_hop"][min(h, len(r["recall_by_hop"]) - 1)] for r in rows)
        for h in range(depth)
    ]
    single = Counter(len(r["queries"]) > 1 and len(r["queries"][1].split()) == 1 for r in rows)
    return {
        "questions": len(rows),
        "recall_by_hop": [round(x, 3) for x in by_hop],
        "both_found": round(sum(r["recall_by_hop"][-1] == 1.0 for r in rows) / len(rows), 3),
        "hop1_single_word_share": round(single[True] / len(rows), 3),
        "rows": rows,
    }


def markdown(result: dict[str, Any], title: str) -> str:
    lines = [
        f"{title}: {result['questions']} questions, round 1's opening searches (no model).",
        "",
        "| after hop | doc recall |",
        "|---|---|",
    ]
    lines += [f"| {h} | {r:.3f} |" for h, r in enumerate(result["recall_by_hop"])]
    lines += [
        "",
        f"Both gold documents found by the opening searches: {result['both_found']:.1%}; hop 1 a single "
        f"word: {result['hop1_single_word_share']:.1%}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings
    from retrac_local.eval.questions import load_questions

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--offset", type=int, default=100)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--without-titles", action="store_true", help="candidates without the collection's titles"
    )
    args = parser.parse_args(argv)
    questions = load_questions(args.questions, args.offset, args.limit)
    result = measure(Retrac(load_settings()), questions, with_titles=not args.without_titles)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hops.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    text = markdown(result, f"{args.questions.name} #{args.offset + 1}–{args.offset + len(questions)}")
    (args.out / "hops.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
