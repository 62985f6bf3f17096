"""Speed benchmark: how close the agent runs to what llama.cpp itself does on this machine.

    python -m retrac_local.bench.speed --demo-home .retrac-demo --out bench-out/speed [--runs 3]

Side by side in one process, medians of `--runs` repetitions:
  raw          llama.cpp called directly: prompt processing and generation tokens/s, per model file;
  constrained  the agent's Action and StateUpdate schemas through the grammar vs unconstrained
               generation of the same length from the same prompt (ratio measured in the same run);
  grammar      compile time of a schema's index in a fresh process, and its load time from the disk
               cache in a second process;
  agent        a real `ask` on the demo corpus: prompt tokens submitted vs processed after the first
               call of each round (KV-cache reuse, see `kv_reuse`), time outside LLM calls, and start-up time
               (imports, model loads, store open) measured in a separate process.
Writes OUT/speed.json and OUT/speed.md.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

PROMPT = (
    "The Orrin Isles lie off the western coast. Their lighthouses were built by the Orrin Lights Board "
    "between 1851 and 1975, and each keeper kept a log of storms, ships, tides and repairs. "
) * 12
LONG_ANSWER = [
    {"role": "user", "content": PROMPT + "\nRetell the paragraph above in your own words, at length."}
]


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def raw_speed(path: Path, n_ctx: int, gen_tokens: int, runs: int) -> dict[str, Any]:
    import llama_cpp

    llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_batch=512, verbose=False, seed=0)
    tokens = llama.tokenize(PROMPT.encode(), add_bos=True)
    pp, tg = [], []
    for _ in range(runs):
        llama.reset()
        start = time.perf_counter()
        llama.eval(tokens)
        pp.append(len(tokens) / (time.perf_counter() - start))
        start = 0.0
        for produced, _token in enumerate(llama.generate(tokens, temp=0.0)):  # prompt cached: decoding only
            if produced == 0:
                start = time.perf_counter()  # from the first token on
            if produced >= gen_tokens:
                break
        tg.append(gen_tokens / (time.perf_counter() - start))
    del llama
    return {
        "model": path.name,
        "prompt_tokens": len(tokens),
        "pp_tok_s": _median(pp),
        "tg_tok_s": _median(tg),
    }


def constrained_speed(app: Any, runs: int) -> dict[str, Any]:
    """Decoding tokens/s with and without the grammar, the prompt cached both times."""
    from retrac_local.contract.schemas import action_schema, state_update_schema
    from retrac_local.errors import StructuredOutputError

    planner, _ = app.llms()
    out: dict[str, Any] = {}
    schemas = {
        "Action": (action_schema(), 160),
        "StateUpdate": (state_update_schema(True, ["E1", "E2"]), 600),
    }
    messages = [
        {"role": "user", "content": PROMPT + "\nWrite the JSON requested, filling every field with detail."}
    ]
    for name, (schema, max_tokens) in schemas.items():
        ratios, constrained_rates, free_rates = [], [], []
        with contextlib.suppress(StructuredOutputError):  # warm: the grammar and the prompt's KV cache
            planner.generate(messages, schema=schema, max_tokens=8)
        for _ in range(runs):
            c = _usage(planner, messages, schema, max_tokens)  # a reply cut at the cap still measures speed
            f = _usage(planner, messages, None, max(c.completion_tokens, 1))
            c_rate = c.completion_tokens / c.seconds
            f_rate = f.completion_tokens / f.seconds
            constrained_rates.append(c_rate)
            free_rates.append(f_rate)
            ratios.append(c_rate / f_rate)
        out[name] = {
            "constrained_tok_s": _median(constrained_rates),
            "free_tok_s": _median(free_rates),
            "ratio": round(statistics.median(ratios), 3),
        }
    return out


def _usage(llm: Any, messages: list[Any], schema: Any, max_tokens: int) -> Any:
    from retrac_local.errors import StructuredOutputError

    try:
        return llm.generate(messages, schema=schema, max_tokens=max_tokens).usage
    except StructuredOutputError as e:
        assert e.usage is not None
        return e.usage


GRAMMAR_PROBE = """
import json, sys, time
from pathlib import Path
from retrac_local.api import Retrac
from retrac_local.contract.schemas import FinalAnswer, action_schema
from retrac_local.llm.structured import SchemaConstrainer
app = Retrac()
planner, _ = app.llms()
c = SchemaConstrainer(planner._llama, Path(sys.argv[1]))
start = time.perf_counter()
c._vocab()  # the model's vocabulary for the grammar: prepared once per process, cache or not
out = {"vocabulary": {"seconds": round(time.perf_counter() - start, 3), "compiled": False}}
for schema in (action_schema(), FinalAnswer):
    start = time.perf_counter()
    c.index_for(schema)
    out[schema.__name__] = {"seconds": round(time.perf_counter() - start, 3), "compiled": schema.__name__ in c.compile_seconds}
print(json.dumps(out))
"""

STARTUP_PROBE = """
import json, time
t0 = time.perf_counter()
from retrac_local.api import Retrac
t1 = time.perf_counter()
app = Retrac()
app.llms()
t2 = time.perf_counter()
app.agent()
app.corpus.search("warm up", k=1)
t3 = time.perf_counter()
print(json.dumps({"imports": round(t1 - t0, 2), "models": round(t2 - t1, 2), "store_and_embedder": round(t3 - t2, 2), "total": round(t3 - t0, 2)}))
"""


def _probe(code: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=900
    )
    if out.returncode != 0:
        raise SystemExit(f"probe failed: {out.stderr[-1500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def grammar_cache(env: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        first = _probe(GRAMMAR_PROBE, env, cache)
        second = _probe(GRAMMAR_PROBE, env, cache)
    return {"first_process": first, "second_process": second}


def kv_reuse(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """KV-cache reuse of the planner's action calls after the first of each round, which extend one
    conversation: `saved_share` is the part of the submitted prompt tokens not processed again;
    `reuse_share` the part of what the previous call left in the cache (its prompt and its output)
    that was reused (1.0 = only the new observation was processed). The compressor is reported apart:
    its one call per round starts a conversation of its own, so only its system prompt can be shared."""
    by_round: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        if call["role"] == "planner" and call["purpose"] == "action":
            by_round.setdefault(call["iteration"], []).append(call)
    submitted = processed = reusable = reused = 0
    for round_calls in by_round.values():
        for previous, call in itertools.pairwise(round_calls):
            submitted += call["prompt_tokens"]
            processed += call["prompt_tokens"] - call["cached_tokens"]
            reusable += min(call["prompt_tokens"], previous["prompt_tokens"] + previous["completion_tokens"])
            reused += min(call["cached_tokens"], previous["prompt_tokens"] + previous["completion_tokens"])
    compress = [c for c in calls if c["purpose"] == "compress"]
    return {
        "planner_submitted_after_first": submitted,
        "planner_processed_after_first": processed,
        "kv_saved_share": round(1 - processed / submitted, 4) if submitted else None,
        "kv_reuse_share": round(reused / reusable, 4) if reusable else None,
        "compressor_cached_share": round(
            sum(c["cached_tokens"] for c in compress) / max(1, sum(c["prompt_tokens"] for c in compress)), 4
        ),
    }


def agent_run(app: Any, question: str) -> dict[str, Any]:
    from retrac_local.contract.events import RunFinished
    from retrac_local.llm.base import forget

    forget(*app.llms())  # each run as in a fresh process, with the models loaded
    result = None
    for event in app.ask(question):
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None
    return {
        "answer": result.answer,
        "status": str(result.status),
        "stop_reason": str(result.stop_reason),
        "llm_calls": result.llm_calls,
        "calls_by_purpose": dict(Counter(c["purpose"] for c in result.calls)),
        "seconds": round(result.seconds, 2),
        "llm_seconds": round(result.llm_seconds, 2),
        "overhead_share": round((result.seconds - result.llm_seconds) / result.seconds, 4),
        **kv_reuse(result.calls),
        "all_prompt_tokens": result.prompt_tokens,
        "all_processed": sum(c["prompt_tokens"] - c["cached_tokens"] for c in result.calls),
    }


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Speed on {result['machine']} (medians of {result['runs']} runs).",
        "",
        "| model | prompt tok/s | generation tok/s |",
        "|---|---|---|",
    ]
    lines += [f"| {r['model']} | {r['pp_tok_s']} | {r['tg_tok_s']} |" for r in result["raw"]]
    lines += ["", "| schema | constrained tok/s | free tok/s | ratio |", "|---|---|---|---|"]
    lines += [
        f"| {k} | {v['constrained_tok_s']} | {v['free_tok_s']} | {v['ratio']} |"
        for k, v in result["constrained"].items()
    ]
    g = result["grammar"]
    lines += [
        "",
        "Grammar, first process / second process (disk cache): "
        + ", ".join(
            f"{k} {g['first_process'][k]['seconds']} s / {g['second_process'][k]['seconds']} s"
            f"{'' if not g['second_process'][k]['compiled'] else ' (recompiled!)'}"
            for k in g["first_process"]
        )
        + " (the vocabulary is prepared once per process either way; the other figures are each schema's index)",
    ]
    runs = result["agent"]
    lines += [
        "",
        "| agent run | answer | seconds | in LLM | outside LLM | planner prompt saved after 1st call "
        "of a round | cache left by the previous call reused | compressor prompt cached |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {i} | {r['answer']} | {r['seconds']} | {r['llm_seconds']} | {r['overhead_share']:.1%} | "
        f"{_share(r['kv_saved_share'])} | {_share(r['kv_reuse_share'])} | {_share(r['compressor_cached_share'])} |"
        for i, r in enumerate(runs, 1)
    ]
    lines += [
        "",
        f"The demo question, models loaded: median {_median([r['seconds'] for r in runs])} s over "
        f"{len(runs)} runs; "
        + "; ".join(
            f"{r['answer']!r} {r['status']} ({r['stop_reason']}), {r['llm_calls']} model calls" for r in runs
        )
        + ".",
    ]
    s = result["startup"]
    lines += [
        "",
        f"Start-up (median): imports {s['imports']} s, model loads {s['models']} s, store and embedder "
        f"{s['store_and_embedder']} s, total {s['total']} s.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="speed benchmark")
    parser.add_argument(
        "--demo-home", type=Path, required=True, help="a RETRAC_HOME with the demo corpus ingested"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gen-tokens", type=int, default=128)
    args = parser.parse_args()
    os.environ["RETRAC_HOME"] = str(args.demo_home.resolve())
    os.environ["RETRAC_MEMORY__ENABLED"] = "false"
    env = dict(os.environ)  # the probes run under the same settings
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings
    from retrac_local.registry import load_registry

    settings = load_settings()
    files = {settings.model_path("planner"), settings.model_path("compressor")}
    files |= {
        settings.models_dir / m.file
        for m in load_registry(settings.models_dir)
        if (settings.models_dir / m.file).exists()
    }
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"machine": f"{os.cpu_count()} cores", "runs": args.runs}
    result["raw"] = [raw_speed(p, 4096, args.gen_tokens, args.runs) for p in sorted(files)]
    print(json.dumps(result["raw"]), flush=True)
    app = Retrac(settings)
    result["constrained"] = constrained_speed(app, args.runs)
    print(json.dumps(result["constrained"]), flush=True)
    result["grammar"] = grammar_cache(env)
    question = json.loads(
        (Path(__file__).resolve().parents[2] / "corpora/demo/questions.jsonl").read_text().splitlines()[0]
    )["question"]
    result["agent"] = [agent_run(app, question) for _ in range(args.runs)]
    startups = [_probe(STARTUP_PROBE, env) for _ in range(args.runs)]
    result["startup"] = {k: _median([s[k] for s in startups]) for k in startups[0]}
    (args.out / "speed.json").write_text(json.dumps(result, indent=2))
    (args.out / "speed.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
