"""`retrac serve`, through its HTTP API, with the deterministic stand-in model of the kill tests and
hashing embeddings: ask and follow the events, runs, collection, and the door (host, token, CSRF)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from retrac_local.api import Retrac
from retrac_local.config import Settings
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.errors import ModelError
from tests import kill_target
from tests.conftest import DEMO_DOCS

pytest.importorskip(
    "httpx", reason="the web tests use Starlette's TestClient, which needs httpx (make setup)"
)
from starlette.testclient import TestClient  # noqa: E402

from retrac_local.web.app import create_app  # noqa: E402
from retrac_local.web.jobs import Worker  # noqa: E402

BASE = "http://127.0.0.1:8750"
QUESTION = "In what year was the designer of the Karn Point Lighthouse born?"


class Model(kill_target.Deterministic):
    """The kill tests' stand-in, without their delay; `fail_at` makes the n-th call from now fail."""

    fail_at: int | None = None

    def generate(self, messages: Any, **kwargs: Any) -> Any:
        if self.fail_at is not None:
            self.fail_at -= 1
            if self.fail_at == 0:
                self.fail_at = None
                raise ModelError("the model server went away")
        return super().generate(messages, **kwargs)


@pytest.fixture(autouse=True)
def no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.0)


@pytest.fixture
def web_settings(isolated_home: Path) -> Settings:
    return Settings(home=isolated_home, retrieval={"embedder": "hashing"}, memory={"enabled": False})


@pytest.fixture
def model() -> Model:
    return Model()


def client_for(settings: Settings, model: Model, **kwargs: Any) -> TestClient:
    app = create_app(
        settings,
        lambda: Retrac(settings, planner=model, compressor=model, embedder=HashingEmbedder()),
        **kwargs,
    )
    return TestClient(app, base_url=BASE)


@pytest.fixture
def client(web_settings: Settings, model: Model) -> Iterator[TestClient]:
    with client_for(web_settings, model) as c:
        c.headers["X-Retrac-CSRF"] = c.get("/api/session").json()["csrf"]
        yield c


def finished(client: TestClient, job: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = client.get(f"/api/jobs/{job['job_id']}").json()
        if now["state"] in ("done", "failed"):
            return now
        time.sleep(0.05)
    raise AssertionError(f"job {job['job_id']} did not finish")


def events(client: TestClient, job_id: str, last: int | None = None) -> list[tuple[str | None, str, Any]]:
    """The job's event stream as (id, event name, data)."""
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    text = client.get(f"/api/jobs/{job_id}/events", headers=headers).text
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        out.append((fields.get("id"), fields.get("event", "message"), json.loads(fields["data"])))
    return out


def ingested(client: TestClient, path: Path = DEMO_DOCS) -> dict[str, Any]:
    job = client.post("/api/ingest", json={"path": str(path)})
    assert job.status_code == 202, job.text
    return finished(client, job.json())


def asked(client: TestClient, question: str = QUESTION) -> dict[str, Any]:
    job = client.post("/api/ask", json={"question": question})
    assert job.status_code == 202, job.text
    return finished(client, job.json())


def test_ask_streams_the_run_and_the_answer_page_shows_its_quotes(client: TestClient) -> None:
    assert ingested(client)["state"] == "done"
    job = asked(client)
    assert job["state"] == "done" and job["run_id"]
    stream = events(client, job["job_id"])
    kinds = [data.get("event") for _, name, data in stream if name == "message"]
    assert (
        kinds[:2] == ["LoadingModels", "RunStarted"]
        and kinds[-1] == "RunFinished"
        and "StepTaken" in kinds
        and "RoundCompressed" in kinds
    )
    assert stream[-1][1] == "end"
    assert [int(i) for i, name, _ in stream if name == "message"] == list(
        range(len(kinds))
    )  # ids count from 0
    result = stream[-2][2]["result"]
    assert result["answer"] == "1849" and result["run_id"] == job["run_id"]
    # A page that reconnects after event 2 gets the rest, from event 3.
    assert events(client, job["job_id"], last=2)[0][0] == "3"
    fragment = client.get(f"/runs/{job['run_id']}/answer").text
    assert 'id="answer">1849<' in fragment
    if result["citations"]:
        assert "<mark>" in fragment and "/documents/" in fragment
    page = client.get(f"/runs/{job['run_id']}")
    assert page.status_code == 200 and "Round 1" in page.text and "export/html" in page.text
    markdown = client.get(f"/runs/{job['run_id']}/export/md")
    assert markdown.headers["content-disposition"] == f'attachment; filename="run-{job["run_id"]}.md"'
    assert markdown.text.startswith(f"# {QUESTION}")
    exported = client.get(f"/runs/{job['run_id']}/export/html")
    assert "<script" not in exported.text and "script-src" not in exported.headers["content-security-policy"]
    assert client.get(f"/runs/{job['run_id']}/export/exe").status_code == 404


def test_a_queued_ask_is_told_its_place(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    ingested(client)
    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.05)  # the first run takes a moment
    first = client.post("/api/ask", json={"question": QUESTION}).json()
    second = client.post("/api/ask", json={"question": "Who designed the Karn Point Lighthouse?"}).json()
    assert second["state"] == "queued" and second["ahead"] == 1
    stream = events(client, second["job_id"])  # follows the second job to its end
    assert stream[0][1:] == ("queued", {"ahead": 1})
    assert finished(client, first)["state"] == "done" and stream[-1][1] == "end"


def test_a_queued_job_can_be_cancelled_a_running_one_cannot(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingested(client)
    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.05)
    first = client.post("/api/ask", json={"question": QUESTION}).json()
    second = client.post("/api/ask", json={"question": "Who designed the Karn Point Lighthouse?"}).json()
    cancelled = client.post(f"/api/jobs/{second['job_id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "failed"
    assert [e for _, _, e in events(client, second["job_id"]) if e.get("event")] == [
        {"event": "Cancelled", "t": 0.0}
    ]
    while client.get(f"/api/jobs/{first['job_id']}").json()["state"] == "queued":
        time.sleep(0.01)
    running = client.post(f"/api/jobs/{first['job_id']}/cancel")
    assert running.status_code == 400 and "only a queued job" in running.json()["error"]
    assert finished(client, first)["state"] == "done"
    assert len(client.get("/api/runs").json()) == 1  # the cancelled question never became a run


def test_the_api_answers_as_the_cli_prints(client: TestClient, runner: Any, web_settings: Settings) -> None:
    from retrac_local.cli.main import cli

    ingested(client)
    run_id = asked(client)["run_id"]
    listed = runner.invoke(cli, ["runs", "list", "--json"])
    assert client.get("/api/runs").json() == json.loads(listed.output)
    shown = runner.invoke(cli, ["runs", "show", run_id, "--json"])
    assert client.get(f"/api/runs/{run_id}").json() == json.loads(shown.output)


def test_an_interrupted_run_is_resumed_from_the_page(client: TestClient, model: Model) -> None:
    ingested(client)
    model.fail_at = 4  # the 4th call (round 2) fails: round 1 is saved, the run stays resumable
    job = asked(client)
    assert job["state"] == "failed" and "model server went away" in job["error"]
    run = client.get(f"/api/runs/{job['run_id']}").json()
    assert run["status"] == "failed" and run["rounds"] and run["result"] is None
    page = client.get(f"/runs/{job['run_id']}").text
    assert 'id="resume"' in page
    again = client.post(f"/api/runs/{job['run_id']}/resume")
    assert again.status_code == 202
    assert finished(client, again.json())["state"] == "done"
    assert client.get(f"/api/runs/{job['run_id']}").json()["answer"] == "1849"
    refused = client.post(f"/api/runs/{job['run_id']}/resume")
    assert refused.status_code == 400 and "nothing to resume" in refused.json()["error"]


def test_bad_requests_get_a_clear_error(client: TestClient, tmp_path: Path) -> None:
    nothing = client.post("/api/ask", json={"question": QUESTION})
    assert nothing.status_code == 400 and "Collection page" in nothing.json()["error"]
    empty = client.post("/api/ask", json={"question": "   "})
    assert empty.status_code == 400 and "empty" in empty.json()["error"]
    assert client.post("/api/ask", content=b"not json").status_code == 400
    huge = client.post("/api/ask", json={"question": "x" * 100_000})
    assert huge.status_code == 400 and "at most 64 KB" in huge.json()["error"]
    missing = client.get("/api/runs/no-such-run")
    assert missing.status_code == 404 and "no run" in missing.json()["error"]
    page = client.get("/runs/no-such-run")
    assert page.status_code == 404 and "no run" in page.text
    assert client.get("/api/jobs/nope").status_code == 404
    nowhere = client.post("/api/ingest", json={"path": str(tmp_path / "absent")})
    assert nowhere.status_code == 400 and "does not exist" in nowhere.json()["error"]
    assert client.post("/api/ingest", json={"path": "relative/folder"}).status_code == 400
    program = client.post(
        "/api/ingest", files={"files": ("tool.exe", b"MZ\x90\x00", "application/octet-stream")}
    )
    assert program.status_code == 400 and "tool.exe" in program.json()["error"]
    # A document-typed file that is not a document is ingested as a failure with its reason.
    job = finished(
        client, client.post("/api/ingest", files={"files": ("report.pdf", b"%PDF-1.4 truncated")}).json()
    )
    report = next(e for _, _, e in events(client, job["job_id"]) if e.get("event") == "IngestFinished")[
        "report"
    ]
    assert report["files_added"] == 0 and "report.pdf" in report["failed"][0]["path"]
    assert client.get("/documents/no-such-doc/file").status_code == 404


def test_uploads_are_ingested_kept_and_removable(client: TestClient) -> None:
    note = b"# Gull Line\n\nThe Gull Line ferry was founded in 1903 by Tomas Irvane.\n"
    job = client.post("/api/ingest", files=[("files", ("../../ferry notes.md", note, "text/markdown"))])
    assert job.status_code == 202
    assert finished(client, job.json())["state"] == "done"
    files = client.get("/api/collection").json()["files"]
    assert [f["name"] for f in files] == ["ferry notes.md"]  # the folders of the name are dropped
    assert Path(files[0]["path"]).read_bytes() == note and "/uploads/" in files[0]["path"]
    assert client.get("/api/collection").json()["chunks"] >= 1
    page = client.get("/collection").text
    assert "ferry notes.md" in page and files[0]["file_id"] in page
    removed = finished(client, client.post(f"/api/collection/{files[0]['file_id']}/remove").json())
    assert removed["state"] == "done"
    assert not Path(files[0]["path"]).exists()  # an uploaded copy goes with its documents
    after = client.get("/api/collection").json()
    assert after["files"] == [] and after["chunks"] == 0
    assert client.post("/api/collection/0123456789abcdef/remove").status_code == 400


def test_removing_a_file_ingested_from_its_own_place_leaves_it_on_disk(
    client: TestClient, tmp_path: Path
) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "ferry.md").write_text("# Gull Line\n\nThe Gull Line ferry was founded in 1903.\n")
    ingested(client, own)
    held = client.get("/api/collection").json()["files"][0]
    assert (
        finished(client, client.post(f"/api/collection/{held['file_id']}/remove").json())["state"] == "done"
    )
    assert (own / "ferry.md").exists()


def test_a_document_file_is_served_by_its_id_as_a_download(
    client: TestClient, web_settings: Settings
) -> None:
    from retrac_local import collection

    ingested(client)
    held = collection.files(web_settings)[0]
    served = client.get(f"/documents/{held.documents[0]}/file")
    assert served.status_code == 200 and served.content == Path(held.path).read_bytes()
    assert served.headers["content-disposition"].startswith("attachment")
    assert served.headers["content-type"] == "application/octet-stream"
    assert served.headers["content-security-policy"] == "sandbox"
    # Never a path taken from the request.
    assert client.get("/documents/..%2F..%2Fetc%2Fpasswd/file").status_code == 404
    assert client.get("/documents/%2Fetc%2Fpasswd/file").status_code == 404


def test_a_document_file_swapped_or_changed_since_ingest_is_not_served(
    client: TestClient, web_settings: Settings, tmp_path: Path
) -> None:
    from retrac_local import collection

    ingested(client)
    held = collection.files(web_settings)[0]
    doc, path = held.documents[0], Path(held.path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the server user's private key")
    original = path.read_bytes()
    path.unlink()
    path.symlink_to(secret)  # the file swapped for a link to another file
    swapped = client.get(f"/documents/{doc}/file")
    assert swapped.status_code == 409 and "changed since ingest" in swapped.json()["error"]
    assert b"private key" not in swapped.content
    path.unlink()
    path.write_bytes(original + b" and one more line")  # another content at the same path
    assert client.get(f"/documents/{doc}/file").status_code == 409
    path.write_bytes(original)  # the bytes ingest read: served again
    assert client.get(f"/documents/{doc}/file").content == original


def test_document_and_model_text_is_escaped(client: TestClient, tmp_path: Path) -> None:
    docs = tmp_path / "hostile"
    docs.mkdir()
    (docs / "a.md").write_text(
        "# <script>alert(1)</script>\n\nThe <img src=x onerror=alert(2)> tower was built in 1887.\n"
    )
    ingested(client, docs)
    job = asked(client, "When was the <img src=x onerror=alert(3)> tower built?")
    for url in (f"/runs/{job['run_id']}", "/runs", "/collection", f"/runs/{job['run_id']}/answer"):
        text = client.get(url).text
        assert "<img src=x" not in text and "<script>alert" not in text, url
    assert "&lt;img src=x onerror=alert(3)&gt;" in client.get(f"/runs/{job['run_id']}").text
    csp = client.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp


def test_runs_are_listed_newest_first_and_searchable(client: TestClient) -> None:
    ingested(client)
    first = asked(client, "Who designed the Karn Point Lighthouse?")["run_id"]
    second = asked(client)["run_id"]
    page = client.get("/runs").text
    assert page.index(second) < page.index(first)
    found = client.get("/runs", params={"q": "who designed"}).text
    assert first in found and second not in found
    assert "No run matches" in client.get("/runs", params={"q": "zzz-nothing"}).text


def test_the_settings_page_shows_where_each_setting_comes_from(client: TestClient) -> None:
    data = client.get("/api/settings").json()
    row = next(r for r in data["settings"] if r["name"] == "retrieval.embedder")
    assert row["value"] == "hashing" and data["models_loaded"] is False
    assert {m["role"] for m in data["models"]} == {"planner", "compressor"}
    assert "retrieval.embedder" in client.get("/settings").text


# -- the door ------------------------------------------------------------------------------------
def test_a_request_from_another_site_is_refused(client: TestClient) -> None:
    hostile = client.post("/api/ask", json={"question": "x?"}, headers={"Origin": "http://evil.example"})
    assert hostile.status_code == 403
    cross = client.post("/api/ask", json={"question": "x?"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    no_csrf = client.post("/api/ask", json={"question": "x?"}, headers={"X-Retrac-CSRF": "wrong"})
    assert no_csrf.status_code == 403 and "CSRF" in no_csrf.json()["error"]
    same = client.post("/api/ask", json={"question": "   "}, headers={"Origin": BASE})
    assert same.status_code == 400  # past the door; refused for being empty


def test_a_page_that_names_another_host_is_refused(client: TestClient) -> None:
    """DNS rebinding: a site that points its name at 127.0.0.1 reaches the server with its own Host."""
    rebound = client.get("/api/runs", headers={"Host": "attacker.example:8750"})
    assert rebound.status_code == 400 and "host" in rebound.json()["error"]
    assert client.get("/api/runs", headers={"Host": "localhost:8750"}).status_code == 200


def test_with_a_token_every_request_needs_it(web_settings: Settings, model: Model) -> None:
    with client_for(web_settings, model, host="0.0.0.0", token="s3cret", port=8750) as c:
        assert c.get("/api/runs").status_code == 401
        assert c.get("/").status_code == 401
        assert c.get("/api/runs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/api/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        # A program with the token may post without the page's CSRF token.
        posted = c.post("/api/ask", json={"question": " "}, headers={"Authorization": "Bearer s3cret"})
        assert posted.status_code == 400
        # A browser opens the printed URL once: a cookie, and the token leaves the address bar.
        opened = c.get("/?token=s3cret", follow_redirects=False)
        assert opened.status_code == 303 and opened.headers["location"] == "/"
        assert (
            "HttpOnly" in opened.headers["set-cookie"] and "SameSite=Strict" in opened.headers["set-cookie"]
        )
        assert "retrac_token_8750=" in opened.headers["set-cookie"]  # named for the port
        c.cookies.set("retrac_token_8750", "s3cret")
        assert c.get("/runs").status_code == 200
        c.cookies.clear()
        c.cookies.set("retrac_token_8751", "s3cret")  # another server's cookie on this host
        assert c.get("/runs").status_code == 401
        c.cookies.clear()
        assert c.get("/?token=wrong", follow_redirects=False).status_code == 401
        # A secret that is not ASCII is no secret and no crash.
        assert c.get("/api/runs", headers={"Authorization": "Bearer s3crét".encode()}).status_code == 401
        assert c.get("/?token=s%C3%A9cret", follow_redirects=False).status_code == 401


def test_without_a_token_the_host_check_holds_even_on_a_wildcard_address(
    web_settings: Settings, model: Model
) -> None:
    with client_for(web_settings, model, host="0.0.0.0") as c:
        assert c.get("/api/runs", headers={"Host": "attacker.example:8750"}).status_code == 400
        assert c.get("/api/runs").status_code == 200


def test_serve_always_guards_the_page_with_a_token_and_refuses_a_blank_one(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from retrac_local.cli.main import cli
    from retrac_local.web.security import serve_token

    made = serve_token(None)
    assert len(made) >= 24 and made != serve_token(None)
    assert serve_token("s3cret") == "s3cret"
    for blank in ("", " ", "\t", " s3cret"):
        with pytest.raises(ValueError, match="guards nothing"):
            serve_token(blank)
    monkeypatch.setenv("RETRAC_SERVE_TOKEN", " ")
    refused = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert refused.exit_code != 0 and "guards nothing" in refused.output
    # The documented variable is not taken for an unknown setting.
    monkeypatch.setenv("RETRAC_SERVE_TOKEN", "s3cret")
    from retrac_local.config import load_settings

    load_settings()


# -- the queue -----------------------------------------------------------------------------------
def test_jobs_run_one_at_a_time_in_order_and_know_their_place() -> None:
    release, order = threading.Event(), []

    def slow(app: Any, emit: Any) -> None:
        release.wait(10)
        order.append("first")

    def quick(app: Any, emit: Any) -> None:
        order.append("second")
        emit({"event": "Note"})

    worker = Worker(lambda: object())  # type: ignore[arg-type, return-value]
    worker.start()
    first = worker.submit("ask", "q1", slow)
    second = worker.submit("ask", "q2", quick)
    third = worker.submit("ask", "q3", quick)
    deadline = time.monotonic() + 5
    while first.state != "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (worker.ahead(first), worker.ahead(second), worker.ahead(third)) == (0, 1, 2)
    release.set()
    while not third.finished and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (
        order == ["first", "second", "second"]
        and second.events[0]["event"] == "Note"
        and "t" in second.events[0]
    )
    worker.stop()


def test_a_failing_job_does_not_stop_the_worker() -> None:
    def broken(app: Any, emit: Any) -> None:
        raise ValueError("a bug")

    worker = Worker(lambda: object())  # type: ignore[arg-type, return-value]
    worker.start()
    bad = worker.submit("ingest", "x", broken)
    good = worker.submit("ingest", "y", lambda app, emit: emit({"event": "Fine"}))
    deadline = time.monotonic() + 5
    while not good.finished and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bad.state == "failed" and re.search(r"internal error: ValueError: a bug", bad.error or "")
    assert bad.events[-1]["event"] == "Failed" and good.state == "done"
    worker.stop()


# -- bodies and inputs ---------------------------------------------------------------------------
def test_a_chunked_body_is_capped_like_any_other(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"question": "'
        for _ in range(200):  # 200 KB, more than the 64 KB a request may hold, with no Content-Length
            yield b"x" * 1024
        yield b'?"}'

    refused = client.post("/api/ask", content=chunks(), headers={"Content-Type": "application/json"})
    assert refused.status_code == 400 and "at most 64 KB" in refused.json()["error"]


def test_text_that_is_not_unicode_deep_json_and_long_paths_are_a_400_before_any_job(
    client: TestClient,
) -> None:
    ingested(client)
    surrogate = client.post(
        "/api/ask",
        content=b'{"question": "When was the \\ud800 tower built?"}',
        headers={"Content-Type": "application/json"},
    )
    assert surrogate.status_code == 400 and "not valid Unicode" in surrogate.json()["error"]
    assert client.get("/").status_code == 200  # no job holds the bad text: the page still renders
    deep = client.post("/api/ask", content=b'{"question": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["error"]
    long = client.post("/api/ingest", json={"path": "/" + "a" * 5000})
    assert long.status_code == 400 and "at most 4,096" in long.json()["error"]
    name = client.post("/api/ingest", json={"path": "/" + "a" * 300})  # one name past NAME_MAX
    assert name.status_code == 400
    assert len(client.app.app.state.web.worker.jobs()) == 1  # the ingest alone: no job was made


def test_an_upload_that_could_not_be_ingested_is_not_kept(client: TestClient, web_settings: Settings) -> None:
    from retrac_local import collection

    job = client.post("/api/ingest", files=[("files", ("empty.md", b"   \n", "text/markdown"))])
    assert finished(client, job.json())["state"] == "done"
    assert list(collection.upload_folder(web_settings).iterdir()) == []


def test_a_client_stopped_mid_headers_is_let_go() -> None:
    import socket
    import time

    import uvicorn

    from retrac_local.web.protocol import with_header_deadline

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", http=with_header_deadline(1.0))
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=8) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            started = time.monotonic()
            assert slow.recv(100) == b""  # closed by the server
            assert time.monotonic() - started < 5
        with socket.create_connection(("127.0.0.1", port), timeout=8) as quick:
            quick.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert b"200 OK" in quick.recv(100)
    finally:
        server.should_exit = True
        thread.join(10)
