"""docs/RULES.md, written from the catalogue (`make rules-doc`; a test checks it is current)."""

from __future__ import annotations

from retrac_local.rules.catalogue import RULES, STAGES

HEADER = """# The rules catalogue

Written by `make rules-doc` from `retrac_local/rules/catalogue.py`; do not edit by hand.

A rule is code that stands in for what a model should have done: it proposes or replaces a search,
changes whether a fact is verified, rewrites the answer, or changes the status. Every one of them is
listed here, can be switched off (`rules.disabled = ["name", …]` in `config.toml`, or
`RETRAC_RULES__DISABLED='["name"]'`), and is recorded when it fires: `retrac runs show` lists the
rules each round and the final answer fired, and every evaluation row carries `rules_fired`.
`docs/eval/rules.md` holds each rule's ablation row (what it fires on, what it gains).

**The text rules read English.** A rule marked *English* reads English words or question shapes
("which … first, A or B?", "how many", "born in"); on questions and documents in another language it
fires seldom or wrongly. Switch such rules off for a collection in another language.
"""


def markdown() -> str:
    lines = [HEADER]
    for stage in STAGES:
        lines += [
            f"\n## {stage}\n",
            "| rule | the failure it prevents | English |",
            "|---|---|---|",
        ]
        for r in (r for r in RULES if r.stage == stage):
            lines.append(f"| `{r.name}` | {r.description} | {'yes' if r.english else 'no'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
