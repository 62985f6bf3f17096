"""Versions of a mode's code that answer alike, shown by replay: a refactor keeps the evaluation.

An evaluation's results belong to the code version that made them (`eval/codehash.py`); a change of
a mode's code sets them aside and that mode runs again, for hours. A refactor means to change no
answer, and the recorded runs (`eval/recording.py`) can show that it does not: when every tape of a
mode plays back the same on today's code, today's version answers as the version that recorded the
tapes did, and the results of one are the results of the other. `prove` plays the tapes and, when
they all play the same, writes that into a file of classes of alike versions (committed beside the
results, `docs/eval/equivalent.json`); `retrac eval` then carries a mode's results over from any
version of today's class instead of setting them aside.

A mode with a tape that plays otherwise, or with no tape, proves nothing, and its class is left
as it was. The proof is as wide as the tapes: every mode's tapes should cover the paths its code
can take on the evaluation's questions (`make record-runs` tapes 20 questions of two collections).
Nor does a proof join versions through today's code: tapes of two versions not already alike
(some taped again after a change, some not) can all play the same while those versions' evaluations
differ, each set of tapes being too narrow to see it; such a mode proves nothing until its tapes
are played one recorder at a time (`--recorded-by`) or taped again.

    python -m retrac_local.eval.equivalence tests/recordings/demo tests/recordings/hotpotqa \\
        --out docs/eval/equivalent.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from retrac_local.eval.codehash import ROOT, mode_version

DEFAULT_FILE = ROOT.parent / "docs" / "eval" / "equivalent.json"


@dataclass
class Replayed:
    """The tapes of one mode, played on today's code."""

    tapes: int = 0
    recorded: set[str] = field(default_factory=set)  # the versions that recorded them
    differing: list[str] = field(default_factory=list)  # "NAME: what differs", for each tape that did
    apart: list[list[str]] = field(default_factory=list)  # recorders in classes not shown alike, if several

    @property
    def alike(self) -> bool:
        """Every tape played the same, each says which version recorded it, and those versions are
        one class."""
        return self.tapes > 0 and not self.differing and "" not in self.recorded and not self.apart


def replay(
    folders: list[Path], log: Callable[[str], None] = print, recorded_by: str | None = None
) -> dict[str, Replayed]:
    """Every tape of `folders` played on today's code, gathered by mode; with `recorded_by`, only
    the tapes that version recorded."""
    from retrac_local.eval.recording import play, read_tapes

    modes: dict[str, Replayed] = {}
    for folder in folders:
        for name, tape, titles in read_tapes(folder):
            if recorded_by is not None and tape.code != recorded_by:
                continue
            found = play(tape, titles)
            mine = modes.setdefault(tape.mode, Replayed())
            mine.tapes += 1
            mine.recorded.add(tape.code)
            if found:
                mine.differing.append(f"{folder.name}/{name}: {'; '.join(found)}")
            log(f"{folder.name}/{name}: {'the same' if not found else '; '.join(found)}")
    return modes


def read_classes(path: Path) -> dict[str, list[list[str]]]:
    """Per mode, its classes of alike versions; none when the file is absent."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {mode: [list(c) for c in entry["classes"]] for mode, entry in data.items()}


def alike(path: Path, mode: str, version: str) -> set[str]:
    """The other versions of `mode` that answer as `version` does, by the file at `path`."""
    for members in read_classes(path).get(mode, []):
        if version in members:
            return set(members) - {version}
    return set()


def apart(classes: list[list[str]], versions: set[str]) -> list[list[str]]:
    """`versions` gathered by the class each is in (a version in none is its own): more than one
    group means some of them have not been shown to answer alike."""
    groups: list[list[str]] = []
    for version in sorted(versions):
        members = next((set(c) for c in classes if version in c), {version})
        group = next((g for g in groups if members & set(g)), None)
        if group is None:
            groups.append([version])
        else:
            group.append(version)
    return groups


def joined(classes: list[list[str]], versions: set[str]) -> list[list[str]]:
    """`classes` with `versions` shown alike: every class that holds one of them merged into one."""
    merged, rest = set(versions), []
    for members in classes:
        if merged & set(members):
            merged |= set(members)
        else:
            rest.append(members)
    return [*rest, sorted(merged)]


def prove(
    folders: list[Path],
    path: Path,
    today: Callable[[str], str] = mode_version,
    log: Callable[[str], None] = print,
    recorded_by: str | None = None,
) -> dict[str, Replayed]:
    """Play the tapes of `folders` (with `recorded_by`, only that version's); for each mode whose
    tapes all played the same and were recorded by versions of one class, today's version joins that
    class, in the file at `path` (written whole in one rename, so an interrupted write leaves the old
    file). Returns what each mode's replay found."""
    played = replay(folders, log, recorded_by)
    before = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data = copy.deepcopy(before)
    for mode, found in sorted(played.items()):
        entry = data.get(mode, {"classes": [], "proofs": []})
        if not found.differing and "" not in found.recorded:
            groups = apart(entry["classes"], found.recorded)
            found.apart = groups if len(groups) > 1 else []
        if not found.alike:
            if found.differing:
                why = f"{len(found.differing)} tape(s) played otherwise of {found.tapes}"
            elif found.apart:
                named = "; ".join(", ".join(g) for g in found.apart)
                why = (
                    f"its tapes were recorded by versions not shown alike to each other ({named}); "
                    "play one recorder's tapes with --recorded-by VERSION, or tape them again"
                )
            else:
                why = f"untagged tapes of {found.tapes}"
            log(f"{mode}: not shown alike ({why})")
            continue
        version = today(mode)
        data[mode] = entry
        entry["classes"] = joined(entry["classes"], found.recorded | {version})
        proof = {"version": version, "alike": sorted(found.recorded - {version}), "tapes": found.tapes}
        if proof not in entry["proofs"]:
            entry["proofs"].append(proof)
        log(f"{mode}: {version} answers as {', '.join(sorted(found.recorded))} ({found.tapes} tapes)")
    if data == before:
        return played
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return played


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="folders of tapes (make record-runs)")
    parser.add_argument("--out", type=Path, default=DEFAULT_FILE, help="the file of alike versions")
    parser.add_argument("--recorded-by", help="play only the tapes this code version recorded")
    args = parser.parse_args(argv)
    played = prove(args.folders, args.out, recorded_by=args.recorded_by)
    raise SystemExit(0 if played and all(r.alike for r in played.values()) else 1)


if __name__ == "__main__":
    main()
