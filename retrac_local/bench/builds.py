"""CPU build flags: llama.cpp speed of two builds of llama-cpp-python, side by side in one run.

    python -m retrac_local.bench.builds --build portable=PYTHON --build avx512=PYTHON \
        [--model models/X.gguf] --out bench-out/builds [--runs 3]

Each PYTHON is an interpreter with one build installed (`make bench-builds` builds the portable
wheel into a venv of its own). The builds take turns, one fresh process per measurement, so both see
the same machine load; each row is the median of `--runs`, and the ratio is taken between medians
of the same run. Writes OUT/builds.json and OUT/builds.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

PROBE = """
import json, sys
import llama_cpp
from pathlib import Path
from retrac_local.bench.speed import raw_speed
from retrac_local.eval.runtime import llama_features
row = raw_speed(Path(sys.argv[1]), 4096, int(sys.argv[2]), 1)
row["features"] = llama_features(llama_cpp.llama_print_system_info().decode())
print(json.dumps(row))
"""

ROOT = Path(__file__).resolve().parents[2]


def measure(python: str, model: Path, gen_tokens: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [python, "-c", PROBE, str(model), str(gen_tokens)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{python} could not run llama.cpp: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="compare llama-cpp-python builds")
    parser.add_argument("--build", action="append", required=True, metavar="NAME=PYTHON")
    parser.add_argument("--model", type=Path, help="a GGUF file; default: the planner's model")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gen-tokens", type=int, default=128)
    args = parser.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    if args.model is None:
        from retrac_local.config import load_settings

        args.model = load_settings().model_path("planner")
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    for _ in range(args.runs):
        for name, python in builds.items():  # in turns: both builds see the same load
            rows[name].append(measure(python, args.model, args.gen_tokens))
            print(name, json.dumps(rows[name][-1]), flush=True)
    result: dict[str, Any] = {
        "model": args.model.name,
        "runs": args.runs,
        "cores": os.cpu_count(),
        "builds": {},
    }
    for name, measured in rows.items():
        result["builds"][name] = {
            "pp_tok_s": round(statistics.median(r["pp_tok_s"] for r in measured), 2),
            "tg_tok_s": round(statistics.median(r["tg_tok_s"] for r in measured), 2),
            "features": measured[0]["features"],
        }
    first = next(iter(builds))
    for b in result["builds"].values():
        b["pp_ratio"] = round(b["pp_tok_s"] / result["builds"][first]["pp_tok_s"], 3)
        b["tg_ratio"] = round(b["tg_tok_s"] / result["builds"][first]["tg_tok_s"], 3)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "builds.json").write_text(json.dumps(result, indent=2))
    lines = [
        f"llama.cpp builds on {result['cores']} cores, {result['model']} (medians of {args.runs} runs, in turns).",
        "",
        f"| build | prompt tok/s | generation tok/s | prompt vs {first} | generation vs {first} | CPU features used |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {n} | {b['pp_tok_s']} | {b['tg_tok_s']} | {b['pp_ratio']} | {b['tg_ratio']} | {b['features']} |"
        for n, b in result["builds"].items()
    ]
    (args.out / "builds.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
