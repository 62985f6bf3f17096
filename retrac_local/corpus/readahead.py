"""Work on the next items while the caller works on this one: ingest parses file N+1 (in the
sandboxed reader's process) while it embeds the chunks of file N."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_DONE = object()


def ahead(items: Iterable[T], fn: Callable[[T], R], depth: int = 2) -> Iterator[tuple[T, R]]:
    """(item, fn(item)) in the items' order, `fn` run on one background thread at most `depth` items
    ahead of the caller. An exception from `fn` is raised here, at its item. Leaving the loop early
    (break, an error, Ctrl-C) stops the thread after the call it is in."""
    results: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: object) -> bool:
        while not stop.is_set():
            try:
                results.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                try:
                    entry: object = (item, fn(item), None)
                except BaseException as e:  # handed to the caller, who raises it at this item
                    entry = (item, None, e)
                if not put(entry):
                    return
        except BaseException as e:  # the items' own iterator failed
            put((None, None, e))
            return
        put(_DONE)

    thread = threading.Thread(target=work, name="ingest-readahead", daemon=True)
    thread.start()
    try:
        while (entry := results.get()) is not _DONE:
            item, result, error = entry  # type: ignore[misc]
            if error is not None:
                raise error
            yield item, result
    finally:
        stop.set()
