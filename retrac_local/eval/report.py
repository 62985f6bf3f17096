"""Figures of an evaluation: DIR/summary.json, DIR/summary.md and two plots, made from results.jsonl.

Means are over the questions that every mode has finished, so that the modes are compared on the
same questions even while an evaluation is still running."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

FIELDS = ("em", "f1", "doc_recall", "llm_calls", "prompt_tokens", "completion_tokens", "peak_prompt_tokens", "seconds")


def paired(rows: list[dict[str, Any]], modes: list[str]) -> list[dict[str, Any]]:
    by_id: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        by_id[r["id"]].add(r["mode"])
    complete = {i for i, found in by_id.items() if all(m in found for m in modes)}
    return [r for r in rows if r["id"] in complete and r["mode"] in modes]


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def summarize(rows: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    rows = paired(rows, modes)
    out: dict[str, Any] = {"questions": len({r["id"] for r in rows}), "modes": {}, "by_type": {}}
    if "retrac" in modes:
        out["retrac_by_round"] = prompt_by_round(rows)
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        stats: dict[str, Any] = {"n": len(mine)}
        for key in FIELDS:
            stats[key] = _mean([r[key] for r in mine if r.get(key) is not None])
        stats["total_tokens"] = _mean([r["prompt_tokens"] + r["completion_tokens"] for r in mine])
        stats["max_prompt_tokens"] = max((r["peak_prompt_tokens"] for r in mine), default=None)
        stats["status"] = dict(sorted(_count(r["status"] for r in mine).items()))
        out["modes"][mode] = stats
        for kind in sorted({r["type"] for r in mine if r.get("type")}):
            typed = [r for r in mine if r["type"] == kind]
            out["by_type"].setdefault(kind, {})[mode] = {
                "n": len(typed), "em": _mean([r["em"] for r in typed]), "f1": _mean([r["f1"] for r in typed])}
    out["retrac_vs"] = ratios(out)
    return out


def ratios(summary: dict[str, Any], mode: str = "retrac") -> dict[str, dict[str, float | None]]:
    """`mode` against each other mode, on the same questions: peak prompt and total tokens as
    ratios, EM and F1 as differences."""
    mine = summary["modes"].get(mode)
    if mine is None:
        return {}

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a is not None and b else None

    def diff(a: float | None, b: float | None) -> float | None:
        return round(a - b, 4) if a is not None and b is not None else None

    return {other: {"peak_prompt_ratio": ratio(mine["peak_prompt_tokens"], theirs["peak_prompt_tokens"]),
                    "max_prompt_ratio": ratio(mine["max_prompt_tokens"], theirs["max_prompt_tokens"]),
                    "total_tokens_ratio": ratio(mine["total_tokens"], theirs["total_tokens"]),
                    "f1_diff": diff(mine["f1"], theirs["f1"]), "em_diff": diff(mine["em"], theirs["em"])}
            for other, theirs in summary["modes"].items() if other != mode}


def rounds_of(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A Re-TRAC question's calls cut into rounds: each round ends with its compression (and the
    compression's retries, which follow it directly)."""
    rounds: list[list[dict[str, Any]]] = [[]]
    for call in calls:
        if call["purpose"] in ("constraints", "finalize"):
            continue
        retry = call["purpose"] == "compress" and len(rounds) > 1 and not rounds[-1]
        (rounds[-2] if retry else rounds[-1]).append(call)
        if call["purpose"] == "compress" and not retry:
            rounds.append([])
    return [r for r in rounds if r]


def prompt_by_round(rows: list[dict[str, Any]], mode: str = "retrac") -> list[dict[str, Any]]:
    """Per round number: the mean over questions of the round's largest prompt, and of the state
    the round started from (its first call's prompt), for the questions that reached that round."""
    largest: dict[int, list[int]] = defaultdict(list)
    first: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r["mode"] == mode:
            for i, calls in enumerate(rounds_of(r["calls"]), 1):
                largest[i].append(max(c["prompt_tokens"] for c in calls))
                first[i].append(calls[0]["prompt_tokens"])
    return [{"round": i, "questions": len(largest[i]), "largest_prompt": round(statistics.fmean(largest[i])),
             "first_prompt": round(statistics.fmean(first[i]))} for i in sorted(largest)]


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in values:
        counts[v] += 1
    return counts


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(summary: dict[str, Any], title: str) -> str:
    lines = [
        f"{title}: {summary['questions']} questions, every mode on the same ones.", "",
        "| mode | n | EM | F1 | doc recall | LLM calls | prompt tok | completion tok | peak prompt (mean / max) | seconds | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, m in summary["modes"].items():
        status = ", ".join(f"{k} {v}" for k, v in m["status"].items())
        lines.append(
            f"| {mode} | {m['n']} | {_fmt(m['em'])} | {_fmt(m['f1'])} | {_fmt(m['doc_recall'])} | "
            f"{_fmt(m['llm_calls'], 1)} | {_fmt(m['prompt_tokens'], 0)} | {_fmt(m['completion_tokens'], 0)} | "
            f"{_fmt(m['peak_prompt_tokens'], 0)} / {_fmt(m['max_prompt_tokens'], 0)} | {_fmt(m['seconds'], 0)} | {status} |"
        )
    if summary["by_type"]:
        modes = list(summary["modes"])
        lines += ["", "F1 by question type:", "", "| type | n | " + " | ".join(modes) + " |",
                  "|---|---|" + "---|" * len(modes)]
        for kind, per in summary["by_type"].items():
            n = next(iter(per.values()))["n"]
            lines.append(f"| {kind} | {n} | " + " | ".join(_fmt(per.get(m, {}).get("f1")) for m in modes) + " |")
    if summary.get("retrac_vs"):
        lines += ["", "Re-TRAC against the others (same questions): peak prompt and total tokens as ratios, F1 as a difference:",
                  "", "| against | peak prompt (mean) | peak prompt (max) | tokens per question | F1 difference |",
                  "|---|---|---|---|---|"]
        for other, r in summary["retrac_vs"].items():
            lines.append(f"| {other} | {_fmt(r['peak_prompt_ratio'], 2)}× | {_fmt(r['max_prompt_ratio'], 2)}× | "
                         f"{_fmt(r['total_tokens_ratio'], 2)}× | {_fmt(r['f1_diff'])} |")
    if summary.get("retrac_by_round"):
        lines += ["", "Re-TRAC's prompt by round (mean over the questions that reached the round): the first call "
                  "carries the compressed state, the largest is the round's peak.", "",
                  "| round | questions | first prompt | largest prompt |", "|---|---|---|---|"]
        lines += [f"| {r['round']} | {r['questions']} | {r['first_prompt']:,} | {r['largest_prompt']:,} |"
                  for r in summary["retrac_by_round"]]
    lines += ["", "Means per question; tokens are summed over a question's LLM calls; peak prompt = its largest "
              "single prompt (mean over questions / largest of all)."]
    return "\n".join(lines) + "\n"


def context_by_call(rows: list[dict[str, Any]], mode: str) -> list[tuple[int, float, int]]:
    """(call number, mean prompt tokens, questions that made that call) for one mode."""
    per_call: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r["mode"] == mode:
            for i, call in enumerate(r["calls"], 1):
                per_call[i].append(call["prompt_tokens"])
    return [(i, statistics.fmean(v), len(v)) for i, v in sorted(per_call.items())]


def plots(rows: list[dict[str, Any]], modes: list[str], out: Path, title: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = paired(rows, modes)
    if not rows:
        return []
    written = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for mode in modes:
        points = context_by_call(rows, mode)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=mode)
    ax.set_xlabel("LLM call number within a question")
    ax.set_ylabel("prompt tokens (mean over questions)")
    ax.set_title(f"Context per call — {title}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "context.png", dpi=120)
    plt.close(fig)
    written.append(out / "context.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in mine]
        ax.scatter(tokens, [r["f1"] for r in mine], alpha=0.25, s=12)
        ax.scatter([statistics.fmean(tokens)], [statistics.fmean(r["f1"] for r in mine)], s=90, marker="D",
                   label=f"{mode} (mean)", edgecolors="black")
    ax.set_xscale("log")
    ax.set_xlabel("tokens per question (prompt + completion, log scale)")
    ax.set_ylabel("F1")
    ax.set_title(f"F1 against tokens — {title}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "f1_vs_tokens.png", dpi=120)
    plt.close(fig)
    written.append(out / "f1_vs_tokens.png")
    return written


def write_report(out: Path, rows: list[dict[str, Any]], modes: list[str], title: str, with_plots: bool = True) -> dict[str, Any]:
    summary = summarize(rows, modes)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary.md").write_text(markdown(summary, title))
    if with_plots:
        plots(rows, modes, out, title)
    return summary
