"""Whether the cited texts state the answer, asked of the planner about the cited quotes alone after
the final answer.

The final answer is drawn from everything the run read and always gives its best guess; these
checks read only what it cites. When the answer is not in the collection, a small model still
answers from the nearest text (a namesake, a related place), and its quotes are real: every code
check of a citation passes. The agreement check (`budget.answer_samples`) makes the run *unsure*
when it fails; the answer text stays the best guess, so a failed check costs the status, never the
answer: the question is answered again from the cited quotes alone, once greedily and a few times
sampled, without being shown the run's answer; too few of those answers naming it
(`budget.answer_agreement`) is a doubt. Answers given again that agree tell right from wrong far
better than a verdict does (docs/DESIGN.md, "The agreement check"; the yes/no verdict this
replaced, `status.states_answer`, is in `rules/removed.py`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from retrac_local.agent import prompts
from retrac_local.agent.question import parse
from retrac_local.agent.verify import normalise
from retrac_local.contract.schemas import Reanswer
from retrac_local.errors import ContextOverflowError, StructuredOutputError
from retrac_local.rules.choices import held_to
from retrac_local.text import words_of

if TYPE_CHECKING:
    from retrac_local.contract.events import Citation
    from retrac_local.llm.base import LLM, Message


def not_found(answer: str) -> str:
    """The caveat of an answer whose cited texts do not state it."""
    return (
        "not found in the collection: the texts read do not state the answer to this question; "
        f'"{answer}" is the best guess from them'
    )


NOT_STATED = "not stated"
REANSWER_MAX_TOKENS = 32  # {"answer": "…"}: a few words
_ARTICLES = frozenset(["a", "an", "the"])


def answer_words(text: str) -> list[str]:
    """An answer's words as compared: lower case, typography and articles set aside."""
    return [w for w in words_of(normalise(text).lower()) if w not in _ARTICLES]


def same_answer(a: str, b: str) -> bool:
    """Two short answers name the same thing: yes/no alike, else the words of one hold at least half
    of the other's and the overlap is at least half of each's ("Hong Kong and Japan" and "Japan, Hong
    Kong"; "the Naval Weapons Station Yorktown" and "Naval Weapons Station Yorktown"), or a number
    the other holds ("1849" and "3 May 1849")."""
    x, y = answer_words(a), answer_words(b)
    if not x or not y:
        return False
    if {" ".join(x), " ".join(y)} & {"yes", "no", "not stated"}:
        return x == y
    short, long = sorted((x, y), key=len)
    if all(w.isdigit() for w in short) and set(short) <= set(long):
        return True  # a year and the full date of it
    common = sum((Counter(x) & Counter(y)).values())
    return common * 2 >= len(x) and common * 2 >= len(y)


def reanswers(
    llm: LLM,
    system: str,
    question: str,
    answer: str,
    citations: list[Citation],
    choices: tuple[str, ...] = (),
    samples: int = 4,
    temperature: float = 0.7,
) -> list[str]:
    """The question answered again from the cited quotes alone, once greedily and `samples` times
    sampled at `temperature` (the prompt is processed once: each sample costs only its few tokens).
    The run's `answer` is never shown; it only says what kind of reply to allow: an option of an
    "A or B" question, or "not stated", when the question names options; yes, no or "not stated"
    when the question asks yes or no or the answer is one. Invalid replies are left out."""
    if not citations:
        return []
    if not choices and (parse(question).kind == "yes/no" or answer_words(answer) in (["yes"], ["no"])):
        choices = ("yes", "no")
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": prompts.render("reanswer", citations=citations, question=question)},
    ]
    schema = held_to(Reanswer, (*choices, NOT_STATED)) if choices else Reanswer
    found: list[str] = []
    for i in range(samples + 1):
        try:
            generation = llm.generate(
                messages,
                schema=schema,
                max_tokens=REANSWER_MAX_TOKENS,
                temperature=0.0 if i == 0 else temperature,
            )
        except (StructuredOutputError, ContextOverflowError):
            continue
        found.append(generation.parsed.answer.strip())
    return found


def agreement(answer: str, again: list[str]) -> float | None:
    """The share of the answers given again that name the run's answer; None when there are none."""
    if not again:
        return None
    return sum(same_answer(answer, a) for a in again) / len(again)


def doubt(answer: str, again: list[str], needed: float) -> str | None:
    """Why the answer is not to be trusted when fewer than `needed` of the answers given again from
    its cited quotes name it, or None (also when there were none to compare: no judgement)."""
    share = agreement(answer, again)
    if share is None or share >= needed:
        return None
    others = [a for a in again if not same_answer(answer, a)]
    if sum(same_answer(NOT_STATED, a) for a in others) * 2 > len(again):
        return not_found(answer)
    other = Counter(a for a in others if not same_answer(NOT_STATED, a)).most_common(1)
    instead = f'; read alone, they answer "{other[0][0]}"' if other else ""
    return (
        f"the cited quotes, read again alone, give this answer in {len(again) - len(others)} of "
        f"{len(again)} tries{instead}"
    )
