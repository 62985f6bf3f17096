"""A tape's form on disk: what a recorded run got from outside its code, and the files that hold it.

`eval/recording.py` records and plays tapes; `eval/detached.py` takes a published collection's texts
out of them and puts them back. Both read and write tapes through this module.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from retrac_local.corpus.base import Chunk, Hit
from retrac_local.llm.base import Usage

TITLES = "titles.json.gz"


class TapedCall(BaseModel):
    """One model call: a digest of what it was asked, and what it answered (or the error it raised)."""

    prompt: str  # digest of the messages, the schema's name, max_tokens and temperature
    text: str = ""
    finish_reason: str = "stop"
    usage: Usage = Field(default_factory=Usage)
    overflow: str | None = None  # the prompt did not fit: the ContextOverflowError's message
    prompt_tokens: int = 0  # with `overflow`
    n_ctx: int = 0  # with `overflow`


class TapedModel(BaseModel):
    name: str
    n_ctx: int
    calls: list[TapedCall] = Field(default_factory=list)
    tokens: dict[str, int] = Field(default_factory=dict)  # digest of a text → its token count


class Tape(BaseModel):
    """One run of one mode: every answer its code got from outside, and what it made of them."""

    question: str
    mode: str  # retrac | react | rag
    code: str = ""  # the mode's code version that recorded it (eval/codehash.py); "" on older tapes
    rag_k: int = 5
    settings: dict[str, Any]  # the sections of `SECTIONS`, as `Settings` dumps them
    planner: TapedModel
    compressor: TapedModel | None = None  # None: the planner's model played both roles
    search: dict[str, list[Hit]] = Field(default_factory=dict)  # digest of (query, k) → hits
    chunk: dict[str, Chunk | None] = Field(default_factory=dict)  # chunk id → chunk
    open: dict[str, list[Chunk]] = Field(default_factory=dict)  # digest of (ref, window) → chunks
    relevance: dict[str, list[float]] | None = None  # digest of (texts, queries) → scores; None: no embedder
    outcome: dict[str, Any] = Field(default_factory=dict)  # `outcome()` of the recorded run
    detached: bool = False  # its collection's texts are read from the collection's file (eval/detached.py)


def digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def write_tape(folder: Path, name: str, tape: Tape, titles: list[str]) -> None:
    """The tape as NAME.json.gz; the collection's titles, when the run read them, as titles.json.gz
    (one file for all the tapes of one collection)."""
    folder.mkdir(parents=True, exist_ok=True)
    if titles:
        write_gz(folder / TITLES, json.dumps(titles, ensure_ascii=False))
    write_gz(folder / f"{name}.json.gz", tape.model_dump_json())


def tape_names(folder: Path) -> list[str]:
    return [p.name.removesuffix(".json.gz") for p in sorted(folder.glob("*.json.gz")) if p.name != TITLES]


def write_gz(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text)
    tmp.replace(path)


def read_gz(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()
