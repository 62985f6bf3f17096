"""Each catalogued rule ablated on the tuning slices: what it fires on, and what switching it off does.

The cores are spent where they tell something:

- a rule that fired on no question of the runs changed nothing there: no run judges it;
- a rule of the `answer` or `status` stage acts after the rounds: the final answer of each stored run
  where it fired is made again with it off (`eval.replay`, from the run's last state, with
  `RETRAC_RULES__DISABLED`), and paired with the run's own answer;
- a rule of an earlier stage (`search`, `compress`, `converge`) changes the rounds: those questions
  are run again with it off (`--rounds`: `retrac eval` on them alone, into OUT/RULE/, an hour or
  more a rule on 2 cores), and paired with the rows of the full run; until then the table says it
  waits for them.

The replays run the code that made the runs: `--code-dir` names a checkout of it (a `git worktree`
of the commit whose code version the rows carry), and each replay is a subprocess with that folder
first on the path, so the ablation measures the rule in the code it was recorded with, whatever the
code of the current checkout. A replay with nothing off, on a few runs, says how far a replay
reproduces its run (greedy decoding and seeded samples should give the same answer).

    python -m retrac_local.eval.ablation docs/eval/tuning/slices/*/results.jsonl \\
        --out docs/eval/tuning/ablation --code-dir /tmp/code-XXXX --run
    # writes OUT/RULE.replay.jsonl per rule (resumable) and docs/eval/rules.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from retrac_local.eval.method import RIGHT_F1
from retrac_local.eval.rows import EvalRow, read_rows
from retrac_local.eval.summary import difference
from retrac_local.rules.catalogue import RULES, Rule
from retrac_local.rules.removed import REMOVED

AFTER_THE_ROUNDS = ("answer", "status")
REPRODUCE = 6  # runs replayed with nothing off, to see how far a replay gives back its run
# Rules whose measurement is not an ablation of these runs (they came after them): where it is.
MEASURED_APART = {
    "converge.first_reading": "its threshold curve against the stored runs, docs/eval/tuning/first-reading/",
}
TABLE = Path(__file__).resolve().parents[2] / "docs" / "eval" / "rules.md"


def retrac_rows(paths: list[Path]) -> list[EvalRow]:
    rows = [
        r
        for p in paths
        for r in read_rows(p.read_text(encoding="utf-8").splitlines(), str(p))
        if r.mode == "retrac"
    ]
    return [r for r in rows if r.rules_fired is not None]


def fired_on(rows: list[EvalRow], rule: Rule) -> list[EvalRow]:
    return [r for r in rows if rule.name in (r.rules_fired or [])]


def replay_rule(
    rows: list[EvalRow],
    disabled: list[str],
    out: Path,
    code_dir: Path,
    scratch: Path,
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The replays of `rows` with the rules `disabled` off, in OUT (resumable), run by the code in
    `code_dir`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    given = scratch / out.with_suffix(".results.jsonl").name  # the rows replayed: a copy, kept out of docs/
    given.write_text("".join(r.line() for r in rows), encoding="utf-8")
    from retrac_local.config import PROJECT_MODELS_DIR

    environment = (env or dict(os.environ)) | {
        "PYTHONPATH": str(code_dir),
        "RETRAC_MODELS_DIR": os.environ.get(
            "RETRAC_MODELS_DIR", str(PROJECT_MODELS_DIR)
        ),  # the checkout has none
        "RETRAC_RULES__DISABLED": json.dumps(disabled),
        "RETRAC_MEMORY__ENABLED": "false",  # a replay must not teach the home's memory
    }
    subprocess.run(
        [sys.executable, "-m", "retrac_local.eval.replay", str(given), str(out)],
        env=environment,
        check=True,
    )
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def rerun_rule(
    rows: list[EvalRow], rule: str, questions: Path, out: Path, code_dir: Path, scratch: Path
) -> list[dict[str, Any]]:
    """`rows`' questions run again, whole, with `rule` off (`retrac eval`, resumable, by the code in
    `code_dir`), as replay-like lines: the full run's answer and status before, the new run's after."""
    from retrac_local.config import PROJECT_MODELS_DIR

    wanted = {r.id for r in rows}
    scratch.mkdir(parents=True, exist_ok=True)
    subset = scratch / f"{rule}.questions.jsonl"  # outside the project: evaluation data is not copied in
    subset.write_text(
        "".join(
            line + "\n"
            for line in questions.read_text(encoding="utf-8").splitlines()
            if line.strip() and str(json.loads(line)["id"]) in wanted
        ),
        encoding="utf-8",
    )
    environment = dict(os.environ) | {
        "PYTHONPATH": str(code_dir),
        "RETRAC_MODELS_DIR": os.environ.get("RETRAC_MODELS_DIR", str(PROJECT_MODELS_DIR)),
        "RETRAC_RULES__DISABLED": json.dumps([rule]),
    }
    folder = out / rule
    subprocess.run(
        [
            sys.executable,
            "-m",
            "retrac_local.cli.main",
            "eval",
            "--questions",
            str(subset),
            "--mode",
            "retrac",
            "--out",
            str(folder),
            "--report-name",
            "ablation",
            "--title",
            f"{rule} off",
        ],
        env=environment,
        check=True,
    )
    return _paired(rows, folder / "results.jsonl")


def _paired(rows: list[EvalRow], rerun: Path) -> list[dict[str, Any]]:
    """Each of `rows` beside its question's row in `rerun`, as replay lines are (before / after)."""
    again = {r.id: r for r in retrac_rows([rerun])}
    return [
        {
            "run_id": r.id,
            "before": r.answer,
            "before_f1": r.f1,
            "before_status": str(r.status),
            "after": again[r.id].answer,
            "after_f1": again[r.id].f1,
            "after_status": str(again[r.id].status),
        }
        for r in rows
        if r.id in again
    ]


def _right(status: str, f1: float) -> bool:
    return status == "answered" and f1 >= RIGHT_F1


def row_of(
    rule: Rule, fired: list[EvalRow], total: int, lines: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """One line of the table: with `lines` (its replays) the paired change of turning it off."""
    out: dict[str, Any] = {"rule": rule.name, "stage": rule.stage, "fired": len(fired), "of": total}
    if not fired and rule.name in MEASURED_APART:
        out["verdict"] = f"newer than these runs; measured apart: {MEASURED_APART[rule.name]}"
        return out
    if not fired:
        out["verdict"] = "never fired: changed nothing here"
        return out
    if lines is None:
        out["verdict"] = (
            "replay not run yet"
            if rule.stage in AFTER_THE_ROUNDS
            else f"needs its {len(fired)} question(s) run again with it off"
        )
        return out
    diff = difference(
        {r["run_id"]: r["after_f1"] for r in lines}, {r["run_id"]: r["before_f1"] for r in lines}
    )
    out |= {
        "replayed": len(lines),
        "f1_off_minus_on": diff["f1_diff"],
        "ci_low": diff["ci_low"],
        "ci_high": diff["ci_high"],
        "answered_on": sum(r["before_status"] == "answered" for r in lines),
        "answered_off": sum(r["after_status"] == "answered" for r in lines),
        "right_on": sum(_right(r["before_status"], r["before_f1"]) for r in lines),
        "right_off": sum(_right(r["after_status"], r["after_f1"]) for r in lines),
    }
    out["wrong_on"] = (
        out["answered_on"] - out["right_on"]
    )  # *answered*, and wrong: what a status promises not
    out["wrong_off"] = out["answered_off"] - out["right_off"]
    # What the rule does to *answered*: the wrong answers it keeps from being *answered*, less the
    # right ones it keeps from it (a status rule changes no F1, only this).
    held = (out["wrong_off"] - out["wrong_on"]) - (out["right_off"] - out["right_on"])
    f1_pays, f1_costs = (diff["ci_high"] or 0) < 0, (diff["ci_low"] or 0) > 0
    pays = f1_pays or (held > 0 and not f1_costs)
    costs = f1_costs or (held < 0 and not f1_pays)
    out["verdict"] = "pays" if pays else "costs" if costs else "no measurable effect"
    return out


def markdown(rows: list[dict[str, Any]], runs: str, reproduced: dict[str, Any] | None) -> str:
    lines = [
        "# Rules, ablated",
        "",
        "Written by `python -m retrac_local.eval.ablation` from the tuning runs; each catalogued rule",
        "(docs/RULES.md) with what it fired on and what switching it off did, paired on the questions",
        'where it fired (docs/EVALUATION.md, "Rules and their ablation").',
        "",
        f"Runs: {runs}.",
        "",
    ]
    if reproduced:
        lines += [
            f"A replay with nothing off gave back its run's answer on {reproduced['same']} of "
            f"{reproduced['n']} runs and its status on {reproduced['same_status']}: the noise floor of the replays below.",
            "",
        ]
    lines += [
        "| rule | stage | fired on | F1 off − on [95% CI] | *answered* on → off | right on → off | wrong on → off | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "f1_off_minus_on" in r:
            f1 = f"{r['f1_off_minus_on']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
            ans = f"{r['answered_on']} → {r['answered_off']}"
            right = f"{r['right_on']} → {r['right_off']}"
            wrong = f"{r['wrong_on']} → {r['wrong_off']}"
        else:
            f1 = ans = right = wrong = "–"
        fired = f"{r['fired']} of {r['of']}"
        if "replayed" in r and r["replayed"] != r["fired"]:
            fired += f" ({r['replayed']} compared)"  # the others still wait for their replay or run
        lines.append(
            f"| `{r['rule']}` | {r['stage']} | {fired} | {f1} | {ans} | {right} | {wrong} | {r['verdict']} |"
        )
    lines += [
        "",
        "## Removed",
        "",
        "Rules taken out of the catalogue, with the row that took them out (retrac_local/rules/removed.py).",
        "",
        "| rule | stage | what it did | measured | why it went |",
        "|---|---|---|---|---|",
        *(f"| `{r.name}` | {r.stage} | {r.did} | {r.measured} | {r.why} |" for r in REMOVED),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+", help="tuning results.jsonl files")
    parser.add_argument("--out", type=Path, required=True, help="folder for each rule's replays")
    parser.add_argument(
        "--code-dir", type=Path, default=None, help="a checkout of the code that made the runs"
    )
    parser.add_argument("--run", action="store_true", help="make the replays that are missing")
    parser.add_argument(
        "--rounds",
        nargs="*",
        default=None,
        help="run again, with it off, the questions where each of these earlier-stage rules fired (all "
        "of them when none is named); needs --questions",
    )
    parser.add_argument("--questions", type=Path, default=None, help="the questions file the runs answered")
    parser.add_argument(
        "--scratch", type=Path, default=Path("bench-out/ablation"), help="for question subsets"
    )
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    rows = retrac_rows(args.results)
    if not rows:
        raise SystemExit("no Re-TRAC row that records its rules in the results given")
    codes = sorted({r.code for r in rows})
    if len(codes) != 1:
        raise SystemExit(f"rows of several code versions ({', '.join(codes)}): ablate one at a time")
    if (args.run or args.rounds is not None) and args.code_dir is None:
        raise SystemExit("--run and --rounds need --code-dir: a checkout of the code that made the runs")
    if args.rounds is not None and args.questions is None:
        raise SystemExit("--rounds needs --questions: the file the runs answered")
    rerun = (
        {r.name for r in RULES if r.stage not in AFTER_THE_ROUNDS}
        if args.rounds == []
        else set(args.rounds or [])
    )
    reproduced = None
    if args.run or (args.out / "nothing-off.replay.jsonl").exists():
        sample = rows[:REPRODUCE]
        path = args.out / "nothing-off.replay.jsonl"
        again = (
            replay_rule(sample, [], path, args.code_dir, args.scratch)
            if args.run and args.code_dir
            else _read(path)
        )
        reproduced = {
            "n": len(again),
            "same": sum(r["after"] == r["before"] for r in again),
            "same_status": sum(r["after_status"] == r["before_status"] for r in again),
        }
    table = []
    for rule in RULES:
        fired = fired_on(rows, rule)
        path = args.out / f"{rule.name}.replay.jsonl"
        lines: list[dict[str, Any]] | None = None
        if fired and rule.stage in AFTER_THE_ROUNDS:
            if args.run and args.code_dir:
                lines = replay_rule(fired, [rule.name], path, args.code_dir, args.scratch)
            elif path.exists():
                lines = _read(path)
        elif fired:
            done = args.out / rule.name / "results.jsonl"
            if rule.name in rerun and args.code_dir and args.questions:
                lines = rerun_rule(fired, rule.name, args.questions, args.out, args.code_dir, args.scratch)
            elif done.exists():
                lines = _paired(fired, done) or None
        table.append(row_of(rule, fired, len(rows), lines))
    runs = f"{len(rows)} Re-TRAC runs of retrac `{codes[0]}` ({', '.join(str(p) for p in args.results)})"
    args.table.write_text(markdown(table, runs, reproduced), encoding="utf-8")
    print(args.table.read_text(encoding="utf-8"))


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


if __name__ == "__main__":
    main()
