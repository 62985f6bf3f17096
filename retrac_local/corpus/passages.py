"""Which of a search's ranked candidates are shown: the best passages, not the best documents.

A manual or a report answers most questions in one of its many chunks, and often in the second
best one of the same document; so several chunks of one document are shown when they rank so. A
chunk next to one already shown is not shown again (reading a hit brings its neighbours), and each
shown hit counts the candidates of its document that were left out, so that the reader knows
where more is to be found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrac_local.corpus.base import Hit


def select(hits: list[Hit], k: int, one_per_document: bool = False) -> list[Hit]:
    """The first `k` of `hits` (best first) that are not a neighbour of one chosen before (nor, with
    `one_per_document`, of the same document as one); each chosen hit's `more` is the number of
    candidates of its document not chosen."""
    chosen: list[Hit] = []
    taken: dict[str, set[int]] = {}
    for h in hits:
        if len(chosen) == k:
            break
        indexes = taken.get(h.chunk.doc_id)
        if indexes is not None and (
            one_per_document or any(abs(h.chunk.chunk_index - i) <= 1 for i in indexes)
        ):
            continue
        taken.setdefault(h.chunk.doc_id, set()).add(h.chunk.chunk_index)
        chosen.append(h)
    shown = {h.chunk.chunk_id for h in chosen}
    for h in chosen:
        h.more = sum(1 for o in hits if o.chunk.doc_id == h.chunk.doc_id and o.chunk.chunk_id not in shown)
    return chosen
