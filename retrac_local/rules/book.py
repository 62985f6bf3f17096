"""One run's view of the catalogue: which rules are on, and which fired and what each changed.

A rule's code asks `on(name)` before it acts and calls `fired(name, change)` when it changed
something (a search made, a fact added, an answer rewritten, a status lowered). A rule switched off
never fires: `fired` on a rule that is off is our own bug, and raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from retrac_local.rules.catalogue import BY_NAME


@dataclass(frozen=True)
class Firing:
    rule: str
    stage: str
    round: int  # the round it fired in; the final answer's stage counts as the last round
    change: str  # what it changed, for a person

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class RuleBook:
    def __init__(self, disabled: Iterable[str] = (), round: int = 0) -> None:
        self.disabled = frozenset(disabled)
        missing = [n for n in self.disabled if n not in BY_NAME]
        if missing:
            raise ValueError(f"no rule named {', '.join(sorted(missing))}; `retrac rules` lists them")
        self.round = round
        self.log: list[Firing] = []

    def on(self, name: str) -> bool:
        if name not in BY_NAME:
            raise KeyError(f"rule {name!r} is not in the catalogue")
        return name not in self.disabled

    def fired(self, name: str, change: str) -> None:
        if not self.on(name):
            raise AssertionError(f"rule {name!r} is off and fired")
        self.log.append(Firing(name, BY_NAME[name].stage, self.round, change[:300]))

    def take(self) -> list[dict[str, object]]:
        """The firings since the last `take`, as stored with a round, and forgets them."""
        taken, self.log = self.log, []
        return [f.to_dict() for f in taken]


def names_fired(log: Iterable[dict[str, object]]) -> list[str]:
    """Each rule that fired, once, in the order it first fired."""
    return list(dict.fromkeys(str(f["rule"]) for f in log))
