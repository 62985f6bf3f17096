"""Figures of an evaluation: DIR/NAME.json, DIR/NAME.md and two plots, made from results.jsonl.

Means are over the questions that every mode has finished, so that the modes are compared on the
same questions even while an evaluation is still running."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrac_local.agent.question import parse
from retrac_local.contract.state import Evidence
from retrac_local.eval import method, runtime
from retrac_local.eval.hidden import honesty
from retrac_local.eval.rows import Call, EvalRow
from retrac_local.rules.answers import fits, unsupported

FIELDS = (
    "em",
    "f1",
    "doc_recall",
    "first_doc_recall",
    "distinct_searches",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "peak_prompt_tokens",
    "seconds",
)
BOOTSTRAP_SAMPLES = 10_000


def paired(rows: list[EvalRow], modes: list[str]) -> list[EvalRow]:
    by_id: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        by_id[r.id].add(r.mode)
    complete = {i for i, found in by_id.items() if all(m in found for m in modes)}
    return [r for r in rows if r.id in complete and r.mode in modes]


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def summarize(
    rows: list[EvalRow],
    modes: list[str],
    unanswerable: bool = False,
    earlier: dict[tuple[str, str], list[EvalRow]] | None = None,
) -> dict[str, Any]:
    """`unanswerable`: the questions ran with their gold documents hidden (eval/hidden.py); each mode
    then also says how often it still answered with confidence. `earlier`: the results of earlier
    code of each mode (`Evaluation.set_aside_results`), compared with today's on the same questions."""
    finished = rows
    rows = paired(rows, modes)
    out: dict[str, Any] = {"questions": len({r.id for r in rows}), "modes": {}, "by_type": {}}
    if unanswerable:
        out["unanswerable"] = True
    if "retrac" in modes:
        out["retrac_by_round"] = prompt_by_round(rows)
    for mode in modes:
        mine = [r for r in rows if r.mode == mode]
        stats: dict[str, Any] = {"n": len(mine)}
        for key in FIELDS:
            stats[key] = _mean([v for r in mine if (v := getattr(r, key)) is not None])
        stats["total_tokens"] = _mean([r.total_tokens for r in mine])
        stats["max_prompt_tokens"] = max((r.peak_prompt_tokens for r in mine), default=None)
        stats["status"] = dict(sorted(_count(str(r.status) for r in mine).items()))
        stats["codes"] = dict(sorted(_count(r.code for r in mine if r.code).items()))  # whose rows these are
        searches = sum(len(r.searches) for r in mine)
        stats["repeated_search_rate"] = (
            round(sum(r.repeated_searches for r in mine) / searches, 4) if searches else None
        )
        stats["median_seconds"] = round(statistics.median(r.seconds for r in mine), 2) if mine else None
        stats["wrong_kind_rate"] = _share(mine, lambda r: not fits(r.answer or "", parse(r.question).kind))
        answered = [r for r in mine if r.status == "answered" and r.citations]
        stats["answered_claim_outside_evidence"] = _share(
            answered,
            lambda r: bool(
                unsupported(
                    r.answer or "",
                    [
                        Evidence(
                            id=c.evidence_id,
                            fact="",
                            source=c.chunk_id,
                            quote=c.quote,
                            verified="yes",
                            title=c.title,
                        )
                        for c in r.citations
                    ],
                )
            ),
        )
        out["modes"][mode] = stats | method.aggregate(mine) | (honesty(mine) if unanswerable else {})
        for kind in sorted({r.type for r in mine if r.type}):
            typed = [r for r in mine if r.type == kind]
            out["by_type"].setdefault(kind, {})[mode] = {
                "n": len(typed),
                "em": _mean([r.em for r in typed]),
                "f1": _mean([r.f1 for r in typed]),
            }
    out["retrac_vs"] = ratios(out)
    out["paired"] = {
        f"{a}-{b}": paired_difference(rows, a, b) for i, a in enumerate(modes) for b in modes[i + 1 :]
    }
    if earlier:
        out["against_earlier"] = against_earlier(finished, earlier, modes)
    out["runtimes"] = {
        mode: [
            {"rows": n, "runtime": r} for r, n in runtime.groups(x.runtime for x in rows if x.mode == mode)
        ]
        for mode in modes
    }
    return out


def runtime_lines(runtimes: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What the rows were made on: one line when every row that records a runtime names the same
    one; else, per mode, how many rows each runtime made, by the keys in which they differ (answers
    may differ with them). Rows of an older harness record none; nothing is said when no row does."""
    every = [g for groups in runtimes.values() for g in groups]
    recorded = [g for g in every if g["runtime"]]
    if not recorded:
        return []
    distinct = runtime.groups(g["runtime"] for g in recorded)
    if len(distinct) == 1:
        shown = "; ".join(f"{k} {v}" for k, v in distinct[0][0].items())
        n, total = sum(g["rows"] for g in recorded), sum(g["rows"] for g in every)
        which = "Every row" if n == total else f"Every row that records it ({n} of {total})"
        return ["", f"{which} was made on one runtime: {shown}."]
    keys = runtime.varying(g["runtime"] for g in recorded)
    lines = [
        "",
        "The rows were made on more than one runtime (machine or libraries; a greedy run can follow "
        "another trajectory on each), by what differs:",
        "",
        "| mode | rows | " + " | ".join(keys) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for mode, groups in runtimes.items():
        lines += [
            f"| {mode} | {g['rows']} | "
            + " | ".join(g["runtime"].get(k, "not recorded") for k in keys)
            + " |"
            for g in groups
        ]
    return lines


def against_earlier(
    rows: list[EvalRow], earlier: dict[tuple[str, str], list[EvalRow]], modes: list[str]
) -> list[dict[str, Any]]:
    """Each mode's code of today against each earlier code of it (the results set aside when its code
    changed), on the questions both ran: mean F1 of each, the paired difference with its interval,
    and median seconds. Most shared questions first."""
    out = []
    for (mode, version), old in earlier.items():
        today = {r.id: r for r in rows if r.mode == mode}
        before = {r.id: r for r in old if r.id in today}
        if mode not in modes or not before:
            continue
        diff = difference({i: today[i].f1 for i in before}, {i: r.f1 for i, r in before.items()})
        out.append(
            {
                "mode": mode,
                "earlier_code": version,
                "n": diff["n"],
                "f1_today": _mean([today[i].f1 for i in before]),
                "f1_earlier": _mean([r.f1 for r in before.values()]),
                "f1_diff": diff["f1_diff"],
                "ci_low": diff["ci_low"],
                "ci_high": diff["ci_high"],
                "median_seconds_today": round(statistics.median(today[i].seconds for i in before), 2),
                "median_seconds_earlier": round(statistics.median(r.seconds for r in before.values()), 2),
            }
        )
    return sorted(out, key=lambda d: (d["mode"], -d["n"], d["earlier_code"]))


def paired_difference(rows: list[EvalRow], a: str, b: str) -> dict[str, Any]:
    """Mode `a`'s F1 minus mode `b`'s over the questions both ran (`difference`)."""
    return difference({r.id: r.f1 for r in rows if r.mode == a}, {r.id: r.f1 for r in rows if r.mode == b})


def difference(
    mine: dict[str, float], theirs: dict[str, float], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> dict[str, Any]:
    """Mean of `mine` minus `theirs` (scores by question id) over the questions both hold, with a 95%
    bootstrap interval (questions resampled with replacement; the per-question differences keep
    the pairing)."""
    import random

    diffs = [mine[i] - theirs[i] for i in mine if i in theirs]
    if not diffs:
        return {"f1_diff": None, "ci_low": None, "ci_high": None, "n": 0}
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(samples))
    return {
        "f1_diff": round(statistics.fmean(diffs), 4),
        "ci_low": round(means[int(0.025 * samples)], 4),
        "ci_high": round(means[int(0.975 * samples) - 1], 4),
        "n": len(diffs),
    }


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

    return {
        other: {
            "peak_prompt_ratio": ratio(mine["peak_prompt_tokens"], theirs["peak_prompt_tokens"]),
            "max_prompt_ratio": ratio(mine["max_prompt_tokens"], theirs["max_prompt_tokens"]),
            "total_tokens_ratio": ratio(mine["total_tokens"], theirs["total_tokens"]),
            "f1_diff": diff(mine["f1"], theirs["f1"]),
            "em_diff": diff(mine["em"], theirs["em"]),
        }
        for other, theirs in summary["modes"].items()
        if other != mode
    }


def rounds_of(calls: list[Call]) -> list[list[Call]]:
    """A Re-TRAC question's calls cut into rounds: each round ends with its compression (and the
    compression's retries, which follow it directly)."""
    rounds: list[list[Call]] = [[]]
    for call in calls:
        if call.purpose in ("constraints", "finalize"):
            continue
        retry = call.purpose == "compress" and len(rounds) > 1 and not rounds[-1]
        (rounds[-2] if retry else rounds[-1]).append(call)
        if call.purpose == "compress" and not retry:
            rounds.append([])
    return [r for r in rounds if r]


def prompt_by_round(rows: list[EvalRow], mode: str = "retrac") -> list[dict[str, Any]]:
    """Per round number: the mean over questions of the round's largest prompt, and of the state
    the round started from (its first call's prompt), for the questions that reached that round."""
    largest: dict[int, list[int]] = defaultdict(list)
    first: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r.mode == mode:
            for i, calls in enumerate(rounds_of(r.calls), 1):
                largest[i].append(max(c.prompt_tokens for c in calls))
                first[i].append(calls[0].prompt_tokens)
    return [
        {
            "round": i,
            "questions": len(largest[i]),
            "largest_prompt": round(statistics.fmean(largest[i])),
            "first_prompt": round(statistics.fmean(first[i])),
        }
        for i in sorted(largest)
    ]


def _share(rows: list[EvalRow], test: Callable[[EvalRow], bool]) -> float | None:
    return round(sum(1 for r in rows if test(r)) / len(rows), 4) if rows else None


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in values:
        counts[v] += 1
    return counts


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(summary: dict[str, Any], title: str) -> str:
    lines = [
        f"{title}: {summary['questions']} questions, every mode on the same ones.",
        "",
        "| mode | n | EM | F1 | doc recall | LLM calls | prompt tok | completion tok | peak prompt (mean / max) | seconds | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    searches = [
        "",
        "Searches and time:",
        "",
        "| mode | distinct searches | repeated searches | doc recall of the first search | final doc recall | median seconds "
        "| answer of the wrong kind | answered, with a claim outside its citations |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, m in summary["modes"].items():
        status = ", ".join(f"{k} {v}" for k, v in m["status"].items())
        lines.append(
            f"| {mode} | {m['n']} | {_fmt(m['em'])} | {_fmt(m['f1'])} | {_fmt(m['doc_recall'])} | "
            f"{_fmt(m['llm_calls'], 1)} | {_fmt(m['prompt_tokens'], 0)} | {_fmt(m['completion_tokens'], 0)} | "
            f"{_fmt(m['peak_prompt_tokens'], 0)} / {_fmt(m['max_prompt_tokens'], 0)} | {_fmt(m['seconds'], 0)} | {status} |"
        )
        rate = m.get("repeated_search_rate")
        searches.append(
            f"| {mode} | {_fmt(m.get('distinct_searches'), 1)} | {_pct(rate)} | "
            f"{_fmt(m.get('first_doc_recall'))} | {_fmt(m['doc_recall'])} | {_fmt(m.get('median_seconds'), 0)} | "
            f"{_pct(m.get('wrong_kind_rate'))} | {_pct(m.get('answered_claim_outside_evidence'))} |"
        )
    lines += searches
    if summary.get("paired"):
        lines += [
            "",
            "Paired F1 differences (same questions; 95% bootstrap interval over questions):",
            "",
            "| pair | F1 difference | 95% interval | n |",
            "|---|---|---|---|",
        ]
        for pair, d in summary["paired"].items():
            if d["n"]:
                lines.append(
                    f"| {pair.replace('-', ' − ')} | {d['f1_diff']:+.3f} | [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] | {d['n']} |"
                )
    if summary.get("against_earlier"):
        lines += [
            "",
            "Today's code against the earlier code of each mode (results set aside when the code changed), "
            "on the questions both ran:",
            "",
            "| mode | earlier code | n | F1 today | F1 earlier | difference | 95% interval | median seconds today / earlier |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {d['mode']} | `{d['earlier_code']}` | {d['n']} | {_fmt(d['f1_today'])} | {_fmt(d['f1_earlier'])} | "
            f"{d['f1_diff']:+.3f} | [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] | "
            f"{_fmt(d['median_seconds_today'], 0)} / {_fmt(d['median_seconds_earlier'], 0)} |"
            for d in summary["against_earlier"]
        ]
    if summary["by_type"]:
        modes = list(summary["modes"])
        lines += [
            "",
            "F1 by question type:",
            "",
            "| type | n | " + " | ".join(modes) + " |",
            "|---|---|" + "---|" * len(modes),
        ]
        for kind, per in summary["by_type"].items():
            n = next(iter(per.values()))["n"]
            lines.append(
                f"| {kind} | {n} | " + " | ".join(_fmt(per.get(m, {}).get("f1")) for m in modes) + " |"
            )
    if summary.get("retrac_vs"):
        lines += [
            "",
            "Re-TRAC against the others (same questions): peak prompt and total tokens as ratios, F1 as a difference:",
            "",
            "| against | peak prompt (mean) | peak prompt (max) | tokens per question | F1 difference |",
            "|---|---|---|---|---|",
        ]
        for other, r in summary["retrac_vs"].items():
            lines.append(
                f"| {other} | {_fmt(r['peak_prompt_ratio'], 2)}× | {_fmt(r['max_prompt_ratio'], 2)}× | "
                f"{_fmt(r['total_tokens_ratio'], 2)}× | {_fmt(r['f1_diff'])} |"
            )
    if summary.get("retrac_by_round"):
        lines += [
            "",
            "Re-TRAC's prompt by round (mean over the questions that reached the round): the first call "
            "carries the compressed state, the largest is the round's peak.",
            "",
            "| round | questions | first prompt | largest prompt |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {r['round']} | {r['questions']} | {r['first_prompt']:,} | {r['largest_prompt']:,} |"
            for r in summary["retrac_by_round"]
        ]
    if summary.get("unanswerable"):
        lines += [
            "",
            "The answers were not in the collection (each question's gold documents hidden): how often each "
            "mode still answered with confidence, and how often it said the answer was not found.",
            "",
            "| mode | answered with confidence | said not found |",
            "|---|---|---|",
        ]
        lines += [
            f"| {mode} | {_pct(m['confidently_answered'])} | {_pct(m['said_not_found'])} |"
            for mode, m in summary["modes"].items()
        ]
    lines += method.markdown(summary["modes"])
    lines += [
        "",
        "Means per question; tokens are summed over a question's LLM calls; peak prompt = its largest "
        "single prompt (mean over questions / largest of all).",
    ]
    lines += runtime_lines(summary.get("runtimes", {}))
    return "\n".join(lines) + "\n"


def context_by_call(rows: list[EvalRow], mode: str) -> list[tuple[int, float, int]]:
    """(call number, mean prompt tokens, questions that made that call) for one mode."""
    per_call: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r.mode == mode:
            for i, call in enumerate(r.calls, 1):
                per_call[i].append(call.prompt_tokens)
    return [(i, statistics.fmean(v), len(v)) for i, v in sorted(per_call.items())]


def plots(rows: list[EvalRow], modes: list[str], out: Path, title: str, name: str = "summary") -> list[Path]:
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
    fig.savefig(out / f"{name}-context.png", dpi=120)
    plt.close(fig)
    written.append(out / f"{name}-context.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for mode in modes:
        mine = [r for r in rows if r.mode == mode]
        tokens = [r.total_tokens for r in mine]
        ax.scatter(tokens, [r.f1 for r in mine], alpha=0.25, s=12)
        ax.scatter(
            [statistics.fmean(tokens)],
            [statistics.fmean(r.f1 for r in mine)],
            s=90,
            marker="D",
            label=f"{mode} (mean)",
            edgecolors="black",
        )
    ax.set_xscale("log")
    ax.set_xlabel("tokens per question (prompt + completion, log scale)")
    ax.set_ylabel("F1")
    ax.set_title(f"F1 against tokens — {title}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{name}-f1-vs-tokens.png", dpi=120)
    plt.close(fig)
    written.append(out / f"{name}-f1-vs-tokens.png")
    return written


def write_report(
    out: Path,
    rows: list[EvalRow],
    modes: list[str],
    title: str,
    with_plots: bool = True,
    name: str = "summary",
    unanswerable: bool = False,
    earlier: dict[tuple[str, str], list[EvalRow]] | None = None,
) -> dict[str, Any]:
    """DIR/NAME.json, DIR/NAME.md and the plots DIR/NAME-context.png and DIR/NAME-f1-vs-tokens.png."""
    summary = summarize(rows, modes, unanswerable, earlier)
    (out / f"{name}.json").write_text(json.dumps(summary, indent=2))
    (out / f"{name}.md").write_text(markdown(summary, title))
    if with_plots:
        plots(rows, modes, out, title, name)
    return summary
