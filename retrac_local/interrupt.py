"""Ctrl-C that always lands at a safe point.

Python raises KeyboardInterrupt wherever the main thread happens to be; during a llama.cpp
generation that can be inside a ctypes callback, where the exception is swallowed and the run goes
on as if nothing happened. Under `graceful_sigint()` the first Ctrl-C only sets a flag: generation
stops at the next token and the loop raises KeyboardInterrupt at its next check, after which every
persisted round is intact. A second Ctrl-C interrupts at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_requested = threading.Event()


def stop_requested() -> bool:
    return _requested.is_set()


def check() -> None:
    """Raise KeyboardInterrupt here if a stop was requested."""
    if _requested.is_set():
        _requested.clear()
        raise KeyboardInterrupt


@contextmanager
def graceful_sigint() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        if _requested.is_set():  # second Ctrl-C: do not wait
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        _requested.set()

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _requested.clear()
