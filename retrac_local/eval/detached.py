"""Tapes of runs on a published collection that hold no copy of it.

A benchmark's corpus is read from where it lies (`../shared/eval/`), never copied into the project;
its tapes must not copy it either. `detach` takes the collection's texts out of a folder of tapes:
each chunk keeps its document id and offsets and loses its text, the titles file goes, and each
stored round's trajectory (whose steps show the texts read) is kept as a digest. `attach` puts the
texts and the titles back from the collection's own file when a tape is read, after checking that
the file is the one the tapes were recorded on (`source.json`: its name and SHA-1).

    python -m retrac_local.eval.detached DIR COLLECTION.jsonl   # detach DIR's tapes from COLLECTION
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from retrac_local.corpus.base import Chunk
from retrac_local.errors import RetracError
from retrac_local.eval.tapes import TITLES, Tape, digest, read_gz, tape_names, write_tape

SOURCE = "source.json"
# Where a detached folder's collection is looked for: this variable's folder, else ../shared/eval
# beside the checkout (where `make` reads the evaluation data from).
SEARCH_ENV = "RETRAC_EVAL_DIR"
DEFAULT_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "eval"


class SourceMissing(RetracError):
    """The collection a detached tape needs is not on this machine, or is another version of it."""


def sha1_of(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@cache
def _collection(path: Path, sha1: str) -> tuple[dict[str, str], list[str]]:
    """Each document's stored text by id, and the titles in the order the store lists them, as
    `retrac ingest` makes them of `path` (read once per process)."""
    from retrac_local.corpus.ingest import cleaned
    from retrac_local.corpus.readers import read_jsonl

    docs = [cleaned(d) for d in read_jsonl(path) if d.doc_id is not None and d.text]
    return {d.doc_id: d.text for d in docs if d.doc_id}, list(dict.fromkeys(d.title for d in docs if d.title))


def without_trajectories(made: dict[str, Any]) -> dict[str, Any]:
    """An `outcome()` with each round's trajectory as its digest: what a detached tape compares."""
    rounds = [r | {"trajectory": {"digest": digest(r["trajectory"])}} for r in made.get("rounds", [])]
    return made | {"rounds": rounds} if "rounds" in made else made


def _chunks(tape: Tape) -> list[tuple[str, Chunk]]:
    """Every chunk the tape holds, with where it sits (for messages)."""
    out = [(f"search {k}", h.chunk) for k, hits in tape.search.items() for h in hits]
    out += [(f"chunk {k}", c) for k, c in tape.chunk.items() if c is not None]
    return out + [(f"open {k}", c) for k, chunks in tape.open.items() for c in chunks]


def _with_texts(tape: Tape, text_of: Any) -> Tape:
    def fill(c: Chunk) -> Chunk:
        return replace(c, text=text_of(c))

    return tape.model_copy(
        update={
            "search": {k: [replace(h, chunk=fill(h.chunk)) for h in hits] for k, hits in tape.search.items()},
            "chunk": {k: fill(c) if c is not None else None for k, c in tape.chunk.items()},
            "open": {k: [fill(c) for c in chunks] for k, chunks in tape.open.items()},
        }
    )


def detach(folder: Path, collection: Path) -> int:
    """Take `collection`'s texts out of every tape of `folder` (each checked first to be exactly what
    the collection gives back); returns the number of tapes rewritten."""
    sha1 = sha1_of(collection)
    texts, titles = _collection(collection, sha1)
    titles_file = folder / TITLES
    if titles_file.exists() and json.loads(read_gz(titles_file)) != titles:
        raise RetracError(f"{titles_file} is not the title list of {collection}: not detached")
    done = 0
    for name in tape_names(folder):
        tape = Tape.model_validate_json(read_gz(folder / f"{name}.json.gz"))
        if tape.detached:
            continue
        for where, c in _chunks(tape):
            if texts.get(c.doc_id, "")[c.start : c.end] != c.text:
                raise RetracError(f"{name}: {where} ({c.chunk_id}) is not in {collection}: not detached")
        tape = _with_texts(tape, lambda c: "")
        tape.outcome, tape.detached = without_trajectories(tape.outcome), True
        write_tape(folder, name, tape, [])
        done += 1
    titles_file.unlink(missing_ok=True)
    (folder / SOURCE).write_text(json.dumps({"file": collection.name, "sha1": sha1}, indent=2) + "\n")
    return done


def attach(folder: Path, tape: Tape) -> tuple[Tape, list[str]]:
    """A detached tape of `folder` with its collection's texts back, and the collection's titles."""
    source = json.loads((folder / SOURCE).read_text())
    where = Path(os.environ.get(SEARCH_ENV) or DEFAULT_DIR) / source["file"]
    if not where.is_file():
        raise SourceMissing(
            f"the tapes of {folder} need {source['file']} (their texts are not copied into them); it is "
            f"not at {where}: set {SEARCH_ENV} to the folder that holds it"
        )
    sha1 = _sha1_once(where)
    if sha1 != source["sha1"]:
        raise SourceMissing(f"{where} is not the file the tapes of {folder} were recorded on (SHA-1 differs)")
    texts, titles = _collection(where, sha1)
    return _with_texts(tape, lambda c: texts.get(c.doc_id, "")[c.start : c.end]), titles


@cache
def _sha1_once(path: Path) -> str:
    return sha1_of(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder of tapes")
    parser.add_argument("collection", type=Path, help="the collection file they were recorded on (.jsonl)")
    args = parser.parse_args(argv)
    print(f"{detach(args.folder, args.collection)} tape(s) of {args.folder} detached from {args.collection}")


if __name__ == "__main__":
    main()
