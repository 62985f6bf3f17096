"""The standard answer scores of SQuAD and HotpotQA: normalised exact match and token F1, each the
best over the gold answers."""

from __future__ import annotations

import re
import string
from collections import Counter

_PUNCTUATION = set(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")  # HotpotQA: these score only when they match exactly


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles (a, an, the), single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction), normalize_answer(gold)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return 0.0
    pred_tokens, ref_tokens = pred.split(), ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def best(prediction: str | None, answers: list[str]) -> tuple[float, float]:
    """(EM, F1) against the closest gold answer; no prediction scores 0."""
    if not prediction or not answers:
        return 0.0, 0.0
    return max(exact_match(prediction, a) for a in answers), max(f1(prediction, a) for a in answers)


def doc_recall(retrieved: list[str], gold: list[str]) -> float | None:
    """Share of the gold supporting documents among those retrieved; None when the set names none."""
    if not gold:
        return None
    found = set(retrieved)
    return sum(1 for g in gold if g in found) / len(gold)
