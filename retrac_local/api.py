"""The Python API; the CLI only wraps it:

>>> from retrac_local.api import Retrac
>>> app = Retrac()  # settings from $RETRAC_HOME/config.toml and RETRAC_* variables
>>> app.ingest([Path("my-docs")])
>>> for event in app.ask("Which …?"):  # typed events as the run goes; the last one holds the result
...     print(event)
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Literal

from retrac_local.agent.loop import ResearchAgent
from retrac_local.agent.memory import RunMemory
from retrac_local.config import Settings, check_context, load_settings
from retrac_local.contract.events import Event, RunFinished, RunResult
from retrac_local.corpus.base import Hit
from retrac_local.corpus.embedder import Embedder
from retrac_local.corpus.ingest import Ingester, IngestReport, ProgressFn
from retrac_local.corpus.store import CorpusStore, Method
from retrac_local.errors import CorpusError, RetracError
from retrac_local.llm.base import LLM
from retrac_local.runstore import RunStore

MAX_QUESTION_CHARS = 2000  # ~500 tokens: a question, not a document (documents are ingested)


def check_question(question: str) -> None:
    if not question.strip():
        raise RetracError("the question is empty")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RetracError("the question holds text that is not valid Unicode; type it again") from e
    if len(question) > MAX_QUESTION_CHARS:
        raise RetracError(
            f"the question is {len(question):,} characters long; a question may have at most "
            f"{MAX_QUESTION_CHARS:,} (put long material in a file and ingest it)"
        )


class Retrac:
    """One object per process: owns the settings, the stores and the loaded models."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        planner: LLM | None = None,
        compressor: LLM | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self._planner, self._compressor, self._embedder = planner, compressor, embedder

    # -- parts -----------------------------------------------------------------------------------
    def _make_embedder(self) -> Embedder:
        if self._embedder is None:
            from retrac_local.corpus.embedder import HashingEmbedder, SentenceTransformerEmbedder

            r = self.settings.retrieval
            self._embedder = (
                HashingEmbedder()
                if r.embedder == "hashing"
                else SentenceTransformerEmbedder(
                    r.embedding_model, batch_size=r.embed_batch_size, precision=r.embed_precision
                )
            )
        return self._embedder

    @cached_property
    def corpus(self) -> CorpusStore:
        r = self.settings.retrieval
        return CorpusStore(
            self.settings.corpus_uri,
            self._make_embedder,
            method=r.method,
            depth=r.depth,
            rrf_k=r.rrf_k,
            vector_index_min_rows=r.vector_index_min_rows,
            nprobes=r.nprobes,
            refine_factor=r.refine_factor,
            storage_options=self.settings.corpus.storage_options,
            local_dir=self.settings.corpus_dir,
        )

    @cached_property
    def memory(self) -> RunMemory:
        return RunMemory(self.settings.memory_dir, self._make_embedder)

    @cached_property
    def runs(self) -> RunStore:
        return RunStore(self.settings.runs_db)

    def llms(self) -> tuple[LLM, LLM]:
        """(planner, compressor): a local GGUF file each, or an OpenAI-compatible server where a role
        names a `url`. Files are checked and models loaded (servers reached) before a run starts."""
        if self._planner is None or self._compressor is None:
            s = self.settings
            check_context(s)
            made = {role: self.make_llm(role) for role in ("planner", "compressor")}
            self._planner = self._planner or made["planner"]
            self._compressor = self._compressor or made["compressor"]
        return self._planner, self._compressor

    def make_llm(self, role: Literal["planner", "compressor"]) -> LLM:
        s = self.settings
        model = getattr(s, role)
        if model.url:
            from retrac_local.llm.server import ServerLLM

            return ServerLLM(model, s.sampling).check()
        from retrac_local.llm.llamacpp import LlamaCppLLM, check_gguf

        path = s.model_path(role)
        check_gguf(path)
        slot = role if s.separate_kv_caches else ""
        return LlamaCppLLM(path, model, s.sampling, s.cache_dir / "grammars", slot=slot).load()

    def agent(self) -> ResearchAgent:
        if not self.corpus.exists() or self.corpus.table().count_rows() == 0:
            raise CorpusError(
                f"the corpus in {self.settings.corpus_dir} is empty; run `retrac ingest PATH…` first"
            )
        from retrac_local.corpus.embedder import relevance_by

        planner, compressor = self.llms()
        return ResearchAgent(
            planner,
            compressor,
            self.corpus,
            self.settings,
            self.runs,
            relevance=relevance_by(self.corpus.embedder),
            memory=self.memory,
        )

    # -- operations ------------------------------------------------------------------------------
    def ingest(
        self, paths: list[Path], prune: bool = False, progress: ProgressFn | None = None
    ) -> IngestReport:
        r = self.settings.retrieval
        return Ingester(
            self.corpus, r.chunk_words, r.chunk_overlap_words, progress, limits=self.settings.ingest
        ).run(paths, prune=prune)

    def search(self, query: str, k: int | None = None, method: Method | None = None) -> list[Hit]:
        self.corpus.table()  # a clear error when nothing was ingested yet
        return self.corpus.search(query, k=k or self.settings.retrieval.k, method=method)

    def ask(self, question: str) -> Iterator[Event]:
        check_question(question)  # before any model loads
        return self.agent().ask(question)

    def resume(self, run_id: str) -> Iterator[Event]:
        run = self.runs.run(run_id)  # unknown ids fail before any model loads
        if run["status"] != "running" and run["result"]:  # finished: its result, with no model loaded
            return iter([RunFinished(RunResult.from_dict(run["result"]))])
        return self.agent().resume(run_id)
