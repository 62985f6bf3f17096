"""Many questions at once: `retrac batch` on a local Ray with 1, 2, 4 … workers sharing one model
server, side by side in one run.

    python -m retrac_local.bench.batch --server PATH/llama-server --out bench-out/batch [--workers 1,2,4]
        [--questions 4] [--model models/X.gguf] [--repeat 3]

`--server` is llama.cpp's own server (`make llama-server`), started here on loopback with as many
parallel slots as workers (continuous batching), or `llama-cpp-python` for that package's server
(one request at a time). Both roles use the one server and model (default: the planner's file).
The demo collection is ingested into OUT/home with the default embeddings; each worker count runs the
same first `--questions` demo questions afresh. Per worker count: wall seconds, questions per hour,
tokens per second in aggregate (prompt and generated), and the median seconds of one question.
`--repeat N` runs the worker counts in turns N times (1, 2, 4, 1, 2, 4, …), so that a slow spell of a
shared machine falls on every count alike, and the table gives each figure's median over the N runs.
Writes OUT/rows.jsonl (a row as each run ends), OUT/batch.json (every row, and the medians) and
OUT/batch.md."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "corpora" / "demo"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    server: str, model: Path, slots: int, n_ctx: int, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    if server == "llama-cpp-python":
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
        ]
    else:  # llama.cpp's server: the context is shared by the slots
        command = [
            server,
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--ctx-size",
            str(n_ctx * slots),
            "--parallel",
            str(slots),
            "--threads",
            str(os.cpu_count() or 1),
        ]
    proc = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped: {log.read_text(errors='replace')[-2000:]}")
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"the server did not answer in 5 minutes; see {log}")


def measure(env: dict[str, str], questions: Path, out: Path, workers: int) -> dict[str, Any]:
    from retrac_local.batch.results import ResultsFile
    from retrac_local.runstore import RunStore

    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "retrac_local.cli.main",
            "batch",
            str(questions),
            "--out",
            str(out),
            "--workers",
            str(workers),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"retrac batch failed: {done.stderr[-2000:]}")
    lines = ResultsFile(out).lines()
    runs = RunStore(Path(env["RETRAC_HOME"]) / "runs.sqlite")
    results = [runs.run(line.run_id)["result"] for line in lines if line.run_id]
    prompt = sum(r["prompt_tokens"] for r in results)
    generated = sum(r["completion_tokens"] for r in results)
    statuses: dict[str, int] = {}
    for line in lines:
        statuses[str(line.status)] = statuses.get(str(line.status), 0) + 1
    return {
        "workers": workers,
        "questions": len(lines),
        "wall_s": round(wall, 1),
        "questions_per_hour": round(3600 * len(lines) / wall, 1),
        "tokens_per_s": round((prompt + generated) / wall, 1),
        "generated_tokens_per_s": round(generated / wall, 2),
        "median_question_s": round(statistics.median(line.seconds or 0 for line in lines), 1),
        "statuses": statuses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="retrac batch with several workers against one model server")
    parser.add_argument("--server", required=True, help="a llama-server binary, or llama-cpp-python")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", default="1,2,4", help="comma-separated worker counts")
    parser.add_argument("--questions", type=int, default=4, help="the first N demo questions")
    parser.add_argument("--model", type=Path, help="a GGUF file; default: the planner's model")
    parser.add_argument("--repeat", type=int, default=1, help="run the worker counts in turns N times")
    args = parser.parse_args()
    from retrac_local.config import load_settings

    settings = load_settings()
    model = args.model or settings.model_path("planner")
    n_ctx = settings.planner.n_ctx
    args.out.mkdir(parents=True, exist_ok=True)
    home = args.out / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")} | {"RETRAC_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-m", "retrac_local.cli.main", "ingest", str(DEMO / "docs")],
        env=env,
        check=True,
        capture_output=True,
    )
    questions = args.out / "questions.jsonl"
    questions.write_text(
        "".join((DEMO / "questions.jsonl").read_text().splitlines(keepends=True)[: args.questions])
    )
    schema_format = "json_object" if args.server == "llama-cpp-python" else "json_schema"
    rows = []
    counts = [int(w) for w in args.workers.split(",")] * max(1, args.repeat)
    for run, workers in enumerate(counts):
        slots = 1 if args.server == "llama-cpp-python" else workers
        proc, url = start_server(args.server, model, slots, n_ctx, args.out / f"server-{workers}.log")
        try:
            role_env = {
                f"RETRAC_{role}__{key}": value
                for role in ("PLANNER", "COMPRESSOR")
                for key, value in (("URL", url), ("SCHEMA_FORMAT", schema_format), ("N_CTX", str(n_ctx)))
            }
            row = measure(env | role_env, questions, args.out / f"workers-{workers}", workers) | {
                "slots": slots,
                "run": run // len(set(counts)) + 1,
            }
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        rows.append(row)
        with open(args.out / "rows.jsonl", "a" if run else "w", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")  # each run's row kept as it ends
        print(json.dumps(row), flush=True)
    table = medians(rows)
    result = {
        "server": Path(args.server).name,
        "model": model.name,
        "cpus": os.cpu_count(),
        "questions": args.questions,
        "repeat": max(1, args.repeat),
        "rows": rows,
        "medians": table,
    }
    (args.out / "batch.json").write_text(json.dumps(result, indent=2))
    title = (
        f"`retrac batch`, {args.questions} demo questions, {model.name} behind {Path(args.server).name} "
        f"({os.cpu_count()} CPUs)"
    )
    text = markdown(title, table)
    (args.out / "batch.md").write_text(text)
    print(text, end="")


FIGURES = ("wall_s", "questions_per_hour", "tokens_per_s", "generated_tokens_per_s", "median_question_s")


def medians(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per worker count: the median of each figure over that count's runs, the statuses of
    all its runs added up, and the speed-up in questions per hour against the first count's median."""
    counts = list(dict.fromkeys(r["workers"] for r in rows))
    table = []
    for workers in counts:
        mine = [r for r in rows if r["workers"] == workers]
        statuses: dict[str, int] = {}
        for r in mine:
            for status, n in r["statuses"].items():
                statuses[status] = statuses.get(status, 0) + n
        table.append(
            {"workers": workers, "slots": mine[0]["slots"], "runs": len(mine), "statuses": statuses}
            | {k: round(statistics.median(r[k] for r in mine), 2) for k in FIGURES}
        )
    base = table[0]["questions_per_hour"] if table else 0
    for row in table:
        row["speedup"] = round(row["questions_per_hour"] / base, 2) if base else None
    return table


def markdown(title: str, table: list[dict[str, Any]]) -> str:
    runs = sorted({r["runs"] for r in table})
    note = f" Medians over {runs[0]} runs; status counts are of all runs." if runs != [1] else ""
    lines = [
        title + note,
        "",
        "| workers | server slots | wall s | questions/hour | speed-up | tokens/s (all) | generated tok/s | median s per question | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        status = ", ".join(f"{n} {s}" for s, n in sorted(r["statuses"].items()))
        lines.append(
            f"| {r['workers']} | {r['slots']} | {r['wall_s']:g} | {r['questions_per_hour']:g} | {r['speedup']}× | "
            f"{r['tokens_per_s']:g} | {r['generated_tokens_per_s']:g} | {r['median_question_s']:g} | {status} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
