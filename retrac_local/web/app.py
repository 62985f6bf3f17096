"""`retrac serve`: the local web page, as a Starlette app.

Pages: ask (`/`), runs (`/runs`, `/runs/RUN_ID`), collection, settings. The JSON API under
`/api/` is what the pages use and what other programs may use; `GET /api/runs` and
`GET /api/runs/RUN_ID` answer exactly as `retrac runs list --json` and `retrac runs show RUN_ID
--json` print. Everything that needs the models or writes the collection is a job of the one
worker (`jobs.py`); reading (runs, reports, the collection) uses the stores directly, a fresh
connection per request.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from retrac_local import collection
from retrac_local.config import mask_credentials
from retrac_local.errors import RetracError, RunNotFoundError
from retrac_local.records import StoredRun
from retrac_local.web.jobs import Job, Worker, run_events
from retrac_local.web.security import CSRF_HEADER, Guard, new_secret

if TYPE_CHECKING:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings

HERE = Path(__file__).resolve().parent
REPORT_TEMPLATES = HERE.parent / "templates"
EXPORTS = {
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "json": "application/json",
}
HEARTBEAT_S = 15.0
MAX_JSON_BYTES = 64 * 1024  # a question or a path, not a document
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux
POLL_S = 0.25  # how often an event stream looks for new events


class Web:
    """The app's parts: settings, the worker, the templates, the secrets."""

    def __init__(self, settings: Settings, make_app: Callable[[], Retrac], csrf: str) -> None:
        from retrac_local.export import highlight

        self.settings = settings
        self.worker = Worker(make_app)
        self.csrf = csrf
        self.stopping = False
        self.env = Environment(
            loader=FileSystemLoader([HERE / "templates", REPORT_TEMPLATES]),
            undefined=StrictUndefined,
            autoescape=select_autoescape(["html.j2"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["highlight"] = highlight

    def reader(self) -> Retrac:
        """A `Retrac` for reading in this request's thread (SQLite connections are per thread)."""
        from retrac_local.api import Retrac

        return Retrac(self.settings)

    def page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(csrf=self.csrf, links=True, **values)
        return HTMLResponse(html, status_code=status)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, read with a byte cap whatever its framing (a chunked body has no
    Content-Length to check first), and refused when it is deeper than a question needs or holds
    text that is not valid Unicode (a lone surrogate would break every page that shows it)."""
    too_big = RetracError(f"a request body may hold at most {MAX_JSON_BYTES // 1024} KB of JSON")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_JSON_BYTES):
        raise too_big
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_JSON_BYTES:
            raise too_big
    try:
        data = json.loads(bytes(body) or b"{}")
        if _depth(data) > MAX_JSON_DEPTH:
            raise RecursionError
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RetracError("the request body is not JSON") from e
    except RecursionError as e:  # past the parser's own limit, or past ours
        raise RetracError("the request body is nested too deeply") from e
    if not isinstance(data, dict):
        raise RetracError("the request body must be a JSON object")
    _check_text(data)
    return data


MAX_JSON_DEPTH = 8  # {"question": …} or {"path": …}: nothing deeper is ever needed


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _check_text(value: Any) -> None:
    """Every string of the body (keys too) must be valid Unicode."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, v in items:
        for text in (key, v):
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise RetracError(
                        "the request holds text that is not valid Unicode; type it again"
                    ) from e
        _check_text(v)


def _job(web: Web, job: Job, status: int = 200) -> JSONResponse:
    return JSONResponse(job.to_dict(web.worker.ahead(job)), status_code=status)


# -- pages ---------------------------------------------------------------------------------------
def ask_page(web: Web, request: Request) -> HTMLResponse:
    return web.page(
        "ask.html.j2", nav="ask", jobs=[j.to_dict(web.worker.ahead(j)) for j in web.worker.jobs()[:5]]
    )


def runs_page(web: Web, request: Request) -> HTMLResponse:
    wanted = request.query_params.get("q", "").strip()
    runs = web.reader().runs
    rows = []
    for row in runs.list_runs(limit=500):
        answer = runs.run(row["run_id"])["answer"] or ""
        if wanted and wanted.lower() not in f"{row['question']} {answer}".lower():
            continue
        rows.append({**row, "answer": answer})
    return web.page("runs.html.j2", nav="runs", rows=rows, q=wanted)


def run_page(web: Web, request: Request) -> HTMLResponse:
    from retrac_local.export import build

    run_id = request.path_params["run_id"]
    app = web.reader()
    report = build(app.runs, run_id, app.corpus if app.corpus.exists() else None)
    live = web.worker.live_job(run_id)
    return web.page(
        "run.html.j2",
        nav="runs",
        r=report,
        live=live.id if live else None,
        collapsed=False,
        resumable=resumable(app.runs.run(run_id)),
    )


def resumable(run: StoredRun) -> bool:
    """Interrupted (still `running`), or stopped by an error before it had a result."""
    return run["status"] == "running" or not run["result"]


def answer_fragment(web: Web, request: Request) -> HTMLResponse:
    """The answer, status and citations of a run, for the ask page to show when the run ends."""
    from retrac_local.export import build

    app = web.reader()
    report = build(app.runs, request.path_params["run_id"], app.corpus if app.corpus.exists() else None)
    return web.page("answer.html.j2", r=report, collapsed=True)


def export(web: Web, request: Request) -> Response:
    from retrac_local.export import build, render

    run_id, fmt = request.path_params["run_id"], request.path_params["fmt"]
    if fmt not in EXPORTS:
        return _error(404, f"no export format {fmt!r}; use html, md or json")
    app = web.reader()
    text = render(build(app.runs, run_id, app.corpus if app.corpus.exists() else None), fmt)  # type: ignore[arg-type]
    headers = {"content-disposition": f'attachment; filename="run-{run_id}.{fmt}"'}
    if fmt == "html":  # the report's own inline style, and nothing else
        headers["content-security-policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return Response(text, media_type=EXPORTS[fmt], headers=headers)


def collection_page(web: Web, request: Request) -> HTMLResponse:
    return web.page(
        "collection.html.j2",
        nav="collection",
        c=collection_data(web),
        max_upload_mb=upload_limit_mb(web.settings),
    )


def settings_page(web: Web, request: Request) -> HTMLResponse:
    return web.page("settings.html.j2", nav="settings", s=settings_data(web))


def document_file(web: Web, request: Request) -> Response:
    """A document's source file, by the document's id: only the bytes ingest read are served (a
    file changed or swapped for a link since is refused), always as a download (an ingested HTML
    page must not run as this site)."""
    try:
        found = collection.document_file(web.settings, request.path_params["doc_id"])
    except collection.ChangedSinceIngest as e:
        return _error(409, str(e))
    if found is None:
        return _error(404, "no such document in the collection, or its file is gone")
    name, data = found
    return Response(
        data,
        media_type="application/octet-stream",
        headers={
            "content-disposition": f"attachment; filename*=UTF-8''{quote(name)}",
            "content-security-policy": "sandbox",
        },
    )


def report_css(web: Web, request: Request) -> Response:
    return Response((REPORT_TEMPLATES / "report.css").read_text(encoding="utf-8"), media_type="text/css")


# -- API -----------------------------------------------------------------------------------------
def api_runs(web: Web, request: Request) -> JSONResponse:
    return JSONResponse(web.reader().runs.list_runs())


def api_run(web: Web, request: Request) -> JSONResponse:
    from retrac_local.export import run_json

    return JSONResponse(run_json(web.reader().runs, request.path_params["run_id"]))


async def api_ask(web: Web, request: Request) -> JSONResponse:
    from retrac_local.api import check_question

    data = await _json_body(request)
    question = data.get("question")
    if not isinstance(question, str):
        raise RetracError('give the question as {"question": "…"}')
    check_question(question)
    if not await run_in_threadpool(_has_documents, web):
        raise RetracError("the collection is empty: add documents on the Collection page first")

    def work(app: Retrac, emit: Callable[[dict[str, Any]], None]) -> None:
        if not web.worker.models_loaded:
            emit({"event": "LoadingModels"})
        run_events(app.ask(question), emit)

    return _job(web, web.worker.submit("ask", question.strip(), work), 202)


def _has_documents(web: Web) -> bool:
    store = web.reader().corpus
    return store.exists() and store.table().count_rows() > 0


def api_resume(web: Web, request: Request) -> JSONResponse:
    run_id = request.path_params["run_id"]
    run = web.reader().runs.run(run_id)  # an unknown id is refused here, not in the queue
    live = web.worker.live_job(run_id)
    if live is not None:
        return _job(web, live)
    if not resumable(run):
        raise RetracError(f"run {run_id} has finished ({run['status']}); there is nothing to resume")

    def work(app: Retrac, emit: Callable[[dict[str, Any]], None]) -> None:
        if not web.worker.models_loaded:
            emit({"event": "LoadingModels"})
        run_events(app.resume(run_id), emit)

    job = web.worker.submit("resume", run["question"], work)
    job.run_id = run_id
    return _job(web, job, 202)


def api_job(web: Web, request: Request) -> JSONResponse:
    job = web.worker.job(request.path_params["job_id"])
    if job is None:
        return _error(404, "no such job (the server was restarted?): the runs page lists every run")
    return _job(web, job)


def api_cancel(web: Web, request: Request) -> JSONResponse:
    job = web.worker.job(request.path_params["job_id"])
    if job is None:
        return _error(404, "no such job (the server was restarted?): the runs page lists every run")
    web.worker.cancel(job)
    return _job(web, job)


async def api_events(web: Web, request: Request) -> Response:
    """Server-sent events: every event of the job from the first (or after `Last-Event-ID`), then
    `end`. A page that reconnects gets what it missed; one that reopens later gets it all again."""
    job = web.worker.job(request.path_params["job_id"])
    if job is None:
        return _error(404, "no such job (the server was restarted?): the runs page lists every run")
    try:
        sent = int(request.headers.get("last-event-id", "-1")) + 1
    except ValueError:
        sent = 0

    async def stream() -> AsyncIterator[str]:
        nonlocal sent
        quiet, ahead = 0.0, None
        while not web.stopping:
            while sent < len(job.events):
                yield f"id: {sent}\ndata: {json.dumps(job.events[sent], ensure_ascii=False)}\n\n"
                sent, quiet = sent + 1, 0.0
            if job.finished:
                yield "event: end\ndata: {}\n\n"
                return
            now_ahead = web.worker.ahead(job)
            if job.state == "queued" and now_ahead != ahead:
                ahead = now_ahead
                yield f"event: queued\ndata: {json.dumps({'ahead': ahead})}\n\n"
            if quiet >= HEARTBEAT_S:
                yield ": still working\n\n"
                quiet = 0.0
            if await request.is_disconnected():
                return
            await asyncio.sleep(POLL_S)
            quiet += POLL_S

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def collection_data(web: Web) -> dict[str, Any]:
    app = web.reader()
    store = app.corpus
    documents, chunks = store.count() if store.exists() else (0, 0)
    files = collection.files(web.settings)
    return {
        "documents": documents,
        "chunks": chunks,
        "size_bytes": store.size_bytes() if store.exists() else 0,
        "vector_index": store.vector_index_kind() if store.exists() else None,
        "path": store.shown_uri,
        "files": [f.to_dict() for f in files],
    }


def api_collection(web: Web, request: Request) -> JSONResponse:
    return JSONResponse(collection_data(web))


def upload_limit_mb(settings: Settings) -> float:
    """One upload (all its files together) may be this large: four files of the largest size ingest takes."""
    return settings.ingest.max_file_mb * 4


async def api_ingest(web: Web, request: Request) -> JSONResponse:
    """A folder or file on this machine (`{"path": …}`), or files uploaded as multipart form data."""
    uploaded: list[Path] = []  # files this request saved: removed again if they go nowhere
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        paths, label = await _save_uploads(web, request)
        uploaded = paths
    else:
        data = await _json_body(request)
        given = data.get("path")
        if not isinstance(given, str) or not given.strip():
            raise RetracError('give a folder or file on this machine as {"path": "…"}')
        if len(given) > MAX_PATH_CHARS:
            raise RetracError(f"a path may have at most {MAX_PATH_CHARS:,} characters")
        path = Path(given.strip()).expanduser()
        if not path.is_absolute():
            raise RetracError(
                f"{given!r} is not an absolute path; give the full path of a folder on this machine"
            )
        try:
            there = path.exists()
        except OSError as e:  # a name too long for this file system, say
            raise RetracError(f"{path.name[:80]!r} cannot be a path here: {e.strerror}") from e
        if not there:
            raise RetracError(f"{path} does not exist on this machine")
        paths, label = [path], str(path)

    def work(app: Retrac, emit: Callable[[dict[str, Any]], None]) -> None:
        try:
            report = app.ingest(
                paths, progress=lambda stage, data: emit({"event": "IngestProgress", "stage": stage, **data})
            )
        except BaseException:
            for p in uploaded:  # an upload that went nowhere is not kept
                p.unlink(missing_ok=True)
            raise
        failed = {f["path"] for f in report.failed}
        for p in uploaded:
            if str(p.resolve()) in failed or str(p) in failed:
                p.unlink(missing_ok=True)
        emit({"event": "IngestFinished", "report": report.to_dict()})

    return _job(web, web.worker.submit("ingest", label, work), 202)


async def _save_uploads(web: Web, request: Request) -> tuple[list[Path], str]:
    from starlette.datastructures import UploadFile

    from retrac_local.corpus.readers import SUPPORTED

    limit = upload_limit_mb(web.settings) * 1e6
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        raise RetracError("an upload needs a Content-Length")
    if int(length) > limit:
        raise RetracError(
            f"the upload is {int(length) / 1e6:.1f} MB; at most {limit / 1e6:.0f} MB at once "
            "(for more, ingest the folder by its path)"
        )
    form = await request.form(max_files=100, max_fields=10)
    uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
    if not uploads:
        raise RetracError("no file was uploaded (form field 'files')")
    for f in uploads:
        name = collection.safe_name(f.filename or "")
        if Path(name).suffix.lower() not in SUPPORTED:
            raise RetracError(
                f"{f.filename!r} is not a document this tool reads; upload "
                f"{', '.join(sorted(SUPPORTED))} files"
            )
    folder = collection.upload_folder(web.settings)
    saved = []
    for f in uploads:
        target = folder / collection.safe_name(f.filename or "")
        n = 1
        while target.exists():
            target, n = folder / f"{target.stem}-{n}{target.suffix}", n + 1
        with open(target, "wb") as out:
            shutil.copyfileobj(f.file, out)
        saved.append(target)
    await form.close()
    return saved, ", ".join(p.name for p in saved)


def api_remove(web: Web, request: Request) -> JSONResponse:
    target = collection.find(web.settings, request.path_params["file_id"])

    def work(app: Retrac, emit: Callable[[dict[str, Any]], None]) -> None:
        emit({"event": "Removed", **collection.remove(app, target.file_id)})

    return _job(web, web.worker.submit("remove", target.path, work), 202)


def settings_data(web: Web) -> dict[str, Any]:
    from retrac_local.config_doc import settings_rows
    from retrac_local.modelcheck import model_rows

    return {
        "settings": settings_rows(web.settings),
        "models": model_rows(web.reader()),
        "models_loaded": web.worker.models_loaded,
    }


def api_settings(web: Web, request: Request) -> JSONResponse:
    return JSONResponse(settings_data(web))


def api_session(web: Web, request: Request) -> JSONResponse:
    """The CSRF token that state-changing requests carry in `X-Retrac-CSRF` (the pages embed it)."""
    return JSONResponse({"csrf": web.csrf, "header": CSRF_HEADER})


# -- the app -------------------------------------------------------------------------------------
def _handled(web: Web, handler: Callable[..., Any]) -> Callable[[Request], Any]:
    """A route: RetracError becomes a clear 400 (404 for an unknown run), in JSON for the API and
    as a page for a person."""

    async def endpoint(request: Request) -> Response:
        try:
            if asyncio.iscoroutinefunction(handler):
                response: Response = await handler(web, request)
            else:
                response = await run_in_threadpool(handler, web, request)
            return response
        except RetracError as e:
            status = 404 if isinstance(e, RunNotFoundError) else 400
            if request.url.path.startswith("/api/"):
                return _error(status, mask_credentials(str(e)))
            return web.page("error.html.j2", status=status, nav="", message=mask_credentials(str(e)))

    return endpoint


def create_app(
    settings: Settings,
    make_app: Callable[[], Retrac] | None = None,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    port: int = 8750,
) -> Any:
    """The ASGI app. `make_app` builds the worker's `Retrac` (the tests pass one with a scripted
    model); `host` is the address the server is bound to, `token` the secret every request needs."""
    from retrac_local.api import Retrac

    web = Web(settings, make_app or partial(Retrac, settings), new_secret())
    routes = [
        Route("/", _handled(web, ask_page)),
        Route("/runs", _handled(web, runs_page)),
        Route("/runs/{run_id}", _handled(web, run_page)),
        Route("/runs/{run_id}/answer", _handled(web, answer_fragment)),
        Route("/runs/{run_id}/export/{fmt}", _handled(web, export)),
        Route("/collection", _handled(web, collection_page)),
        Route("/settings", _handled(web, settings_page)),
        Route("/documents/{doc_id}/file", _handled(web, document_file)),
        Route("/report.css", _handled(web, report_css)),
        Route("/api/session", _handled(web, api_session)),
        Route("/api/ask", _handled(web, api_ask), methods=["POST"]),
        Route("/api/runs", _handled(web, api_runs)),
        Route("/api/runs/{run_id}", _handled(web, api_run)),
        Route("/api/runs/{run_id}/resume", _handled(web, api_resume), methods=["POST"]),
        Route("/api/jobs/{job_id}", _handled(web, api_job)),
        Route("/api/jobs/{job_id}/events", _handled(web, api_events)),
        Route("/api/jobs/{job_id}/cancel", _handled(web, api_cancel), methods=["POST"]),
        Route("/api/collection", _handled(web, api_collection)),
        Route("/api/ingest", _handled(web, api_ingest), methods=["POST"]),
        Route("/api/collection/{file_id}/remove", _handled(web, api_remove), methods=["POST"]),
        Route("/api/settings", _handled(web, api_settings)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        web.worker.start()
        yield
        web.stopping = True
        web.worker.stop()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.web = web
    return Guard(app, bound_host=host, token=token, csrf=web.csrf, port=port)
