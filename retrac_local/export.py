"""`retrac runs export`: a finished (or interrupted) run as JSON, Markdown, or a self-contained HTML
page — question, answer, status, each citation with its quote highlighted inside its chunk and the
source file, and one timeline section per round."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from retrac_local.agent.verify import normalise
from retrac_local.corpus.base import Corpus, label
from retrac_local.runstore import RunStore

Format = Literal["json", "md", "html"]
TEMPLATES = Path(__file__).resolve().parent / "templates"


def run_json(store: RunStore, run_id: str) -> dict[str, Any]:
    """A run as `retrac runs show --json` prints it: its record, every round, and the result."""
    run = store.run(run_id)
    return {
        "run_id": run_id,
        "question": run["question"],
        "status": run["status"],
        "answer": run["answer"],
        "rounds": store.rounds(run_id),
        "result": run["result"],
    }


def build(store: RunStore, run_id: str, corpus: Corpus | None) -> dict[str, Any]:
    """Everything a report shows, as plain data (the JSON export is exactly this)."""
    run = store.run(run_id)
    result = run["result"] or {}
    citations = []
    for c in result.get("citations", []):
        chunk = corpus.get_chunk(c["chunk_id"]) if corpus is not None else None
        section, page = c.get("section", ""), c.get("page", 0)
        citations.append(
            {
                **c,
                "chunk_text": chunk.text if chunk else None,
                "label": label(c["title"], section, page),
                # PDF viewers open a file at `#page=N`
                "anchor": f"#page={page}" if page and c["source"].lower().endswith(".pdf") else "",
            }
        )
    rounds = []
    last_state = run["initial_state"]
    previous = {e["id"]: e for e in run["initial_state"].get("evidence", [])}
    for r in store.rounds(run_id):
        now = {e["id"]: e for e in r["state"]["evidence"]}
        diff = r["diff"]
        rounds.append(
            {
                "iteration": r["iteration"],
                "stats": r["stats"],
                "steps": [
                    {
                        **{k: s[k] for k in ("tool", "argument", "gap", "error", "chunk_ids")},
                        "by": s.get("by", "planner"),
                        "candidates": s.get("candidates", []),
                    }
                    for s in r["trajectory"]["steps"]
                ],
                "added": [now[i] for i in diff.get("evidence_added", []) if i in now],
                "changed": [now[i] for i in diff.get("evidence_changed", []) if i in now],
                "removed": [previous[i] for i in diff.get("evidence_removed", []) if i in previous],
                "answer_before": diff.get("answer_before"),
                "answer_after": diff.get("answer_after"),
                "opened": diff.get("uncertainties_opened", []),
                "closed": diff.get("uncertainties_closed", []),
                "drift_repaired": diff.get("drift_repaired", []),
            }
        )
        previous = now
        last_state = r["state"]
    return {
        "run_id": run_id,
        "question": run["question"],
        "status": run["status"],
        "answer": run["answer"],
        "stop_reason": result.get("stop_reason"),
        "caveat": result.get("caveat"),
        "memory": run["memory"],
        "conflicts": _conflicts(last_state),
        "citations": citations,
        "rounds": rounds,
        "totals": {
            k: result.get(k)
            for k in (
                "rounds",
                "llm_calls",
                "prompt_tokens",
                "completion_tokens",
                "peak_prompt_tokens",
                "seconds",
                "llm_seconds",
            )
        },
    }


def _conflicts(state: dict[str, Any]) -> list[str]:
    """The disagreements between sources the final state records, described."""
    if not state.get("conflicts"):
        return []
    from retrac_local.agent.conflicts import describe
    from retrac_local.contract.state import ResearchState

    parsed = ResearchState.model_validate(state)
    return [describe(c, parsed) for c in parsed.conflicts]


def highlight(chunk_text: str | None, quote: str) -> str:
    """The chunk as HTML with the quote marked; the quote alone when the chunk is gone or moved."""
    if not chunk_text:
        return f"<mark>{html.escape(quote)}</mark>"
    text, q = normalise(chunk_text), normalise(quote)
    at = text.find(q)
    if at < 0:
        return html.escape(text) + f" <mark>{html.escape(quote)}</mark>"
    return html.escape(text[:at]) + f"<mark>{html.escape(q)}</mark>" + html.escape(text[at + len(q) :])


_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]<>&])")  # HTML, links and images, code spans: what can run or fetch
_MARKDOWN_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def markdown_text(value: Any) -> str:
    """Any value as inert Markdown text: one line, HTML characters as entities, and the brackets and
    backticks of links, images and code escaped, so that a document's `<script>`, `<img onerror>` or
    `![](http://…)` is shown, never run or fetched."""
    text = " ".join(str(value).split()) if value is not None else ""
    return _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_ENTITY.get(m.group(1), "\\" + m.group(1)), text)


@cache
def _env(fmt: Format) -> Environment:
    """HTML: autoescaped. Markdown: every `{{ … }}` passes through `markdown_text`."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        autoescape=select_autoescape(["html.j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=markdown_text if fmt == "md" else None,
    )
    env.filters["highlight"] = highlight
    return env


def render(report: dict[str, Any], fmt: Format) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    return _env(fmt).get_template(f"report.{fmt}.j2").render(r=report)
