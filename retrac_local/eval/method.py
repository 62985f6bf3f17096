"""The method's own figures, from a run's stored rounds: does compression keep what was learned,
how often does code repair drift or reject a fact, how healthy is each compression, what does each
role cost, and what does a status promise.

Per question, `record` reduces a stored Re-TRAC run to counts (kept in the evaluation's row, so a
clean checkout redraws the report without the run store); `aggregate` sums a mode's rows into the
figures of summary.json: `retention`, `drift_repairs_per_round`, `rejected_facts_per_round`,
`compression_retries_per_round`, `cost_by_role` and `calibration`."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from retrac_local.eval.rows import EvalRow, MethodRecord
from retrac_local.records import StoredRound

RIGHT_F1 = 0.8  # a question counts as answered right at this F1 or above
PARTLY_F1 = 0.5  # below RIGHT_F1 but at least this: a shorter or longer form of the answer, or half of it
ROLES = ("planner", "compressor", "final")
_VERIFIED = ("yes", "partial")  # both were checked against their source's text
_SPACE = re.compile(r"\s+")


def role_of(purpose: str) -> str:
    """Which role a call played: the compressor compresses; the final answer (Re-TRAC's finalize,
    ReAct's forced answer, RAG's one call) is the final role; everything else (actions, the
    question's constraints) is the planner's."""
    if purpose == "compress":
        return "compressor"
    return "final" if purpose in ("finalize", "answer") else "planner"


def _key(evidence: dict[str, Any]) -> tuple[str, str]:
    return evidence["source"], _SPACE.sub(" ", evidence["quote"]).strip().lower()


def _kept(fact: tuple[str, str], final: set[tuple[str, str]]) -> bool:
    """Present in the final state, or merged there: a quote of the same source that holds it, or
    that it holds."""
    source, quote = fact
    return fact in final or any(s == source and (quote in q or q in quote) for s, q in final)


def drift_kind(event: str) -> str:
    """'verified evidence E3 vanished; restored' → 'vanished'; 'constraints changed; …' → 'constraints'."""
    if event.startswith("constraints"):
        return "constraints"
    for kind in ("vanished", "changed"):
        if kind in event:
            return kind
    return "other"


def rejected_kind(problem: str) -> str:
    """Why code refused a fact the compressor wrote."""
    if "no sentence found" in problem:
        return "ungrounded"
    return "other"


def record(
    rounds: list[StoredRound],
    gold_doc_ids: list[str],
    retrieved_doc_ids: list[str],
    units: Callable[[list[str]], list[str]] | None = None,
) -> MethodRecord:
    """A stored run's rounds (`RunStore.rounds`) reduced to the counts `aggregate` sums; `units`
    maps the evidence's chunk ids to the units of `gold_doc_ids` (their documents by default)."""
    verified: set[tuple[str, str]] = set()
    drift: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    compressions = retries = failed = cut = invalid = 0
    final: list[dict[str, Any]] = []
    for r in rounds:
        state, stats, diff = r["state"], r.get("stats") or {}, r.get("diff") or {}
        final = state.get("evidence", [])
        verified |= {_key(e) for e in final if e.get("verified") in _VERIFIED}
        drift.update(drift_kind(e) for e in diff.get("drift_repaired", []))
        rejected.update(rejected_kind(p) for p in stats.get("rejected", []))
        attempts = stats.get("compression_attempts")
        if attempts is None:  # a round carried over uncompressed
            continue
        compressions += 1
        retries += max(len(attempts) - 1, 0)
        failed += bool(stats.get("compression_failed"))
        problems = [p for a in attempts for p in a.get("problems", [])]
        cut += sum("token limit" in p for p in problems)
        invalid += sum("is not a valid" in p for p in problems)
    final_keys = {_key(e) for e in final}
    sources = [e["source"] for e in final]
    final_docs = set(units(sources) if units else (s.rsplit("#", 1)[0] for s in sources))
    gold_seen = [d for d in gold_doc_ids if d in set(retrieved_doc_ids)]
    return MethodRecord(
        rounds=len(rounds),
        verified_facts=len(verified),
        kept_facts=sum(_kept(f, final_keys) for f in verified),
        gold_retrieved=len(gold_seen),
        gold_in_final=sum(d in final_docs for d in gold_seen),
        drift_repairs=dict(drift),
        rejected_facts=dict(rejected),
        compressions=compressions,
        compression_retries=retries,
        compressions_failed=failed,
        cut_at_max_tokens=cut,
        invalid_json=invalid,
    )


def cost_by_role(rows: list[EvalRow]) -> dict[str, dict[str, float]]:
    """Per role, the mean over questions of its prompt tokens, completion tokens and seconds."""
    out: dict[str, dict[str, float]] = {}
    for role in ROLES:
        totals = Counter[str]()
        for r in rows:
            for c in r.calls:
                if role_of(c.purpose) == role:
                    totals.update(c.model_dump(include={"prompt_tokens", "completion_tokens", "seconds"}))
        if totals and rows:
            out[role] = {
                k: round(totals[k] / len(rows), 1) for k in ("prompt_tokens", "completion_tokens", "seconds")
            }
    return out


def calibration(rows: list[EvalRow]) -> dict[str, dict[str, Any]]:
    """Per status: questions, how many were right (F1 ≥ RIGHT_F1), that share with its 95% Wilson
    interval (a status holds a few dozen questions: the share alone overstates what is known), and
    how many more were partly right (PARTLY_F1 ≤ F1 < RIGHT_F1: "Ada J. Vellacott" for "Ada
    Jane Vellacott", one of two names asked for)."""
    out: dict[str, dict[str, Any]] = {}
    for status in sorted({str(r.status) for r in rows}):
        mine = [r for r in rows if r.status == status]
        right = sum(r.f1 >= RIGHT_F1 for r in mine)
        out[status] = {
            "n": len(mine),
            "right": right,
            "share_right": round(right / len(mine), 4),
            "interval": wilson(right, len(mine)),
            "partly_right": sum(PARTLY_F1 <= r.f1 < RIGHT_F1 for r in mine),
        }
    return out


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    """The Wilson score interval of a share k/n (95% at z = 1.96): unlike k/n ± z·se it stays inside
    [0, 1] and is not empty at 0 or n of n."""
    if n <= 0:
        return [0.0, 1.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def aggregate(rows: list[EvalRow]) -> dict[str, Any]:
    """The figures of one mode's rows. Those that need stored rounds cover the rows that carry a
    `method` record (Re-TRAC's), and say over how many questions (`method_questions`)."""
    out: dict[str, Any] = {"cost_by_role": cost_by_role(rows), "calibration": calibration(rows)}
    records = [r.method for r in rows if r.method]
    if not records:
        return out

    def total(key: str) -> int:
        return sum(getattr(m, key) for m in records)

    def kinds(key: str) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for m in records:
            counts.update(getattr(m, key))
        return dict(sorted(counts.items()))

    rounds = total("rounds")
    drift, rejected = kinds("drift_repairs"), kinds("rejected_facts")
    out |= {
        "method_questions": len(records),
        "retention": _ratio(total("kept_facts"), total("verified_facts")),
        "verified_facts": total("verified_facts"),
        "gold_evidence_retention": _ratio(total("gold_in_final"), total("gold_retrieved")),
        "drift_repairs_per_round": _ratio(sum(drift.values()), rounds),
        "drift_repair_kinds": drift,
        "rejected_facts_per_round": _ratio(sum(rejected.values()), rounds),
        "rejected_fact_kinds": rejected,
        "compression_retries_per_round": _ratio(total("compression_retries"), total("compressions")),
        "compressions": total("compressions"),
        "compressions_failed": total("compressions_failed"),
        "cut_at_max_tokens": total("cut_at_max_tokens"),
        "invalid_json": total("invalid_json"),
    }
    return out


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _interval(c: dict[str, Any]) -> str:
    """A calibration entry's interval; an older summary has none."""
    lo, hi = c.get("interval") or (None, None)
    return "–" if lo is None else f"{lo:.0%}–{hi:.0%}"


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def markdown(modes: dict[str, dict[str, Any]]) -> list[str]:
    """The report's lines for these figures, per mode."""
    lines = [
        "",
        f"Status calibration (right = F1 ≥ {RIGHT_F1}): what each status promised, with the share's 95% "
        f"Wilson interval; partly right = F1 from {PARTLY_F1} to {RIGHT_F1} (a shorter or longer form of "
        "the answer, or part of it).",
        "",
        "| mode | status | questions | right | share right | 95% interval | partly right |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, m in modes.items():
        lines += [
            f"| {mode} | {status} | {c['n']} | {c['right']} | {_pct(c['share_right'])} | {_interval(c)} | "
            f"{c.get('partly_right', '–')} |"
            for status, c in m.get("calibration", {}).items()
        ]
    lines += [
        "",
        "Cost by role (mean per question): prompt tokens / completion tokens / seconds.",
        "",
        "| mode | " + " | ".join(ROLES) + " |",
        "|---|" + "---|" * len(ROLES),
    ]
    for mode, m in modes.items():
        cost = m.get("cost_by_role", {})
        cells = [
            f"{c['prompt_tokens']:,.0f} / {c['completion_tokens']:,.0f} / {c['seconds']:,.0f} s"
            if (c := cost.get(role))
            else "–"
            for role in ROLES
        ]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    compressed = {mode: m for mode, m in modes.items() if m.get("method_questions")}
    if compressed:
        lines += [
            "",
            "Compression (from the stored rounds): retention = verified facts of any round still in the "
            "final state (or merged there); gold evidence kept = gold documents retrieved whose evidence "
            "reached the final state.",
            "",
            "| mode | questions | retention | gold evidence kept | drift repairs / round | rejected facts / round "
            "| retries / compression | compressions kept the old state | cut at max_tokens | invalid JSON |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for mode, m in compressed.items():
            lines.append(
                f"| {mode} | {m['method_questions']} | {_pct(m['retention'])} of {m['verified_facts']} | "
                f"{_pct(m['gold_evidence_retention'])} | {m['drift_repairs_per_round'] or 0:.2f} "
                f"({_kinds(m['drift_repair_kinds'])}) | {m['rejected_facts_per_round'] or 0:.2f} "
                f"({_kinds(m['rejected_fact_kinds'])}) | {m['compression_retries_per_round'] or 0:.2f} | "
                f"{m['compressions_failed']} of {m['compressions']} | {m['cut_at_max_tokens']} | {m['invalid_json']} |"
            )
    return lines
