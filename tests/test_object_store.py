"""The collection on an S3-compatible object store (moto's server on loopback): ingest, search, ask,
re-ingest, a second machine, and a store that goes away mid-ingest. Real embeddings; the agent's
models are the scripted LLM (what is tested is where the collection lives)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DEMO_DOCS

pytestmark = pytest.mark.slow
BUCKET = "team-collection"
# Fail fast when the store is down, instead of retrying for minutes.
FAST_FAIL = {
    "client_max_retries": "1",
    "client_retry_timeout": "5",
    "connect_timeout": "2s",
    "timeout": "10s",
}


class Store:
    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        self.port = self.server.get_host_and_port()[1]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop()

    def restart(self) -> None:
        """The same port and (moto keeps its state in the process) the same objects."""
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    import boto3

    for key, value in {
        "AWS_ACCESS_KEY_ID": "retrac-test",
        "AWS_SECRET_ACCESS_KEY": "retrac-test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    store = Store()
    boto3.client("s3", endpoint_url=store.endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)
    monkeypatch.setenv("RETRAC_CORPUS__URI", f"s3://{BUCKET}/retrac")
    monkeypatch.setenv(
        "RETRAC_CORPUS__STORAGE_OPTIONS",
        json.dumps({"endpoint": store.endpoint, "region": "us-east-1", "allow_http": "true", **FAST_FAIL}),
    )
    yield store
    store.stop()


def _app(home: Path):  # noqa: ANN202
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings

    return Retrac(load_settings(home=str(home)))


def test_ingest_search_ask_and_reingest_on_an_object_store(s3: Store, tmp_path: Path) -> None:
    from retrac_local.agent.loop import ResearchAgent
    from retrac_local.contract.events import RunFinished, RunStatus
    from retrac_local.llm.fake import ScriptedLLM
    from tests.scripts import constraints, final, finish, open_, search, update

    app = _app(tmp_path / "home")
    assert app.corpus.remote and app.corpus.size_bytes() is None
    report = app.ingest([DEMO_DOCS])
    assert report.files_added == len(list(DEMO_DOCS.iterdir())) and report.chunks > 0 and not report.failed
    assert not (tmp_path / "home" / "corpus" / "lance").exists()  # the tables are not on this disk
    assert (tmp_path / "home" / "corpus" / "manifest.sqlite").exists()  # the bookkeeping is
    hits = app.search("Who designed the Karn Point Lighthouse?", k=3)
    assert hits and hits[0].chunk.doc_id == "karn-point-lighthouse"

    again = app.ingest([DEMO_DOCS])
    assert again.files_added == 0 and again.files_skipped == report.files_added
    assert app.corpus.count()[1] == report.chunks

    # Another machine (another home, no manifest, no meta.json) opens the same collection.
    other = _app(tmp_path / "other-home")
    assert other.corpus.exists() and other.corpus.count() == app.corpus.count()
    assert (
        other.search("Who designed the Karn Point Lighthouse?", k=1)[0].chunk.doc_id
        == "karn-point-lighthouse"
    )

    q = "Who designed the Karn Point Lighthouse?"
    llm = ScriptedLLM().enqueue(
        constraints(),
        open_("no-such#1"),
        search(q.lower()),
        update(facts=["Ada Vellacott designed the Karn Point Lighthouse"]),
        finish("Ada Vellacott"),
        update(answer="Ada Vellacott"),
        final("Ada Vellacott", "E1"),
        *[{"answer": "Ada Vellacott"}] * 5,  # the agreement check: greedy, then 4 samples
    )
    settings = other.settings.model_copy(
        update={
            "budget": other.settings.budget.model_copy(
                # the script is the research's: no first reading after hop 0
                update={"max_steps_per_round": 4, "opening_searches": 2, "first_reading_samples": 0}
            )
        }
    )
    agent = ResearchAgent(llm, llm, other.corpus, settings, other.runs)
    result = [e for e in agent.ask(q) if isinstance(e, RunFinished)][0].result
    assert result.status == RunStatus.ANSWERED and result.citations
    assert result.citations[0].doc_id in {h.chunk.doc_id for h in other.search(q, k=5)}


def test_a_store_that_goes_away_mid_ingest_is_a_clear_error_and_the_same_command_finishes(
    s3: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retrac_local.corpus import ingest
    from retrac_local.corpus.ingest import Ingester
    from retrac_local.errors import StoreError

    monkeypatch.setattr(ingest, "BATCH_FILES", 3)  # several commits, so that one can fail halfway
    app = _app(tmp_path / "home")
    r = app.settings.retrieval

    def stop_after_the_first_commit(event: str, data: dict) -> None:
        if event == "progress" and data.get("files_done") == 4:
            s3.stop()

    with pytest.raises(
        StoreError, match=r"cannot reach the corpus store s3://.*check that the object store is up"
    ):
        Ingester(
            app.corpus,
            r.chunk_words,
            r.chunk_overlap_words,
            stop_after_the_first_commit,
            limits=app.settings.ingest,
        ).run([DEMO_DOCS])
    s3.restart()
    app = _app(tmp_path / "home")  # a new process, as a person would run it
    report = app.ingest([DEMO_DOCS])
    assert report.files_skipped >= 3 and not report.failed  # what was committed is not read again
    documents, chunks = app.corpus.count()
    assert documents == len(list(DEMO_DOCS.iterdir()))
    table = app.corpus.table()
    ids = table.search().select(["chunk_id"]).limit(chunks + 10).to_arrow()["chunk_id"].to_pylist()
    assert len(ids) == len(set(ids)) == chunks  # nothing duplicated

    monkeypatch.delenv("RETRAC_CORPUS__URI")
    local = _app(tmp_path / "local-home")
    assert local.ingest([DEMO_DOCS]).chunks == chunks  # the same chunks as one uninterrupted local ingest
