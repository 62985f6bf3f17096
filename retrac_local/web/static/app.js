// retrac-local's page: follows jobs (asks, resumes, ingests, removals) through server-sent events.
// Every text from documents or models is set with textContent, never parsed as HTML; the only HTML
// inserted is the server's own answer fragment, which the server escapes.
"use strict";

const csrf = document.querySelector('meta[name="retrac-csrf"]').content;
const $ = (id) => document.getElementById(id);

function line(text, kind) {
  const li = document.createElement("li");
  li.textContent = text;
  if (kind) li.className = kind;
  $("progress").appendChild(li);
  li.scrollIntoView({block: "nearest"});
}

function status(text) {
  $("job-status").textContent = text;
}

async function send(url, body) {
  const init = {method: "POST", headers: {"X-Retrac-CSRF": csrf}, credentials: "same-origin"};
  if (body instanceof FormData) {
    init.body = body;
  } else {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body || {});
  }
  const response = await fetch(url, init);
  const data = await response.json().catch(() => ({error: `the server answered ${response.status}`}));
  if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
  return data;
}

const size = (bytes) => (bytes < 1e6 ? `${Math.round(bytes / 1e3)} KB` : `${(bytes / 1e6).toFixed(1)} MB`);
const seconds = (t) => (t === undefined ? "" : ` · ${Math.round(t)} s`);

function describe(e) {
  switch (e.event) {
    case "LoadingModels":
      return "loading the models (the first question only)…";
    case "RunStarted":
      return e.resumed_at_round ? `resumed at round ${e.resumed_at_round}` : "started: searching the question itself";
    case "StepTaken": {
      const by = {code: " [by code]", pick: " [picked from the candidates]"}[e.by] || "";
      return `round ${e.iteration}: ${e.tool}(${e.argument})${by}${e.summary ? ` → ${e.summary}` : ""}`;
    }
    case "RoundCompressed": {
      const rate = e.llm_seconds ? `, ${(e.completion_tokens / e.llm_seconds).toFixed(1)} tok/s` : "";
      return `round ${e.iteration} folded into the state: ${e.summary || "nothing new"}; ${e.evidence} piece(s) of evidence`
        + `${e.compression_failed ? " (compression failed: previous state kept)" : ""}`
        + ` · ${e.prompt_tokens.toLocaleString()} prompt + ${e.completion_tokens.toLocaleString()} generated tokens${rate}`;
    }
    case "Converged":
      return `done: ${e.reason}`;
    case "RunFinished":
      return `finished: ${e.result.status}, in ${Math.round(e.result.seconds)} s`;
    case "IngestProgress":
      return e.stage === "start"
        ? `${e.files} file(s) to read, ${size(e.bytes)}`
        : `${e.documents} document(s), ${e.chunks} chunk(s), ${size(e.bytes_done)} read`;
    case "IngestFinished": {
      const r = e.report;
      return `ingested ${r.files_added} file(s), ${r.documents_added} document(s), ${r.chunks} chunk(s); `
        + `skipped ${r.files_skipped} unchanged file(s)`;
    }
    case "Removed":
      return `removed ${e.removed}: ${e.documents} document(s), ${e.chunks} chunk(s)`;
    case "Cancelled":
      return "cancelled before it started";
    case "Failed":
      return `failed: ${e.error}`;
    default:
      return e.event;
  }
}

// Follow a job's events; `done(last)` gets its last event when the job ends.
function follow(jobId, done) {
  $("job").hidden = false;
  status("waiting for the server…");
  let last = null;
  const source = new EventSource(`/api/jobs/${encodeURIComponent(jobId)}/events`);
  source.onmessage = (message) => {
    const e = JSON.parse(message.data);
    last = e;
    if (e.event === "IngestProgress" && e.stage !== "start" && $("progress").lastChild
        && $("progress").lastChild.dataset.progress) {
      $("progress").lastChild.textContent = describe(e);  // one line that counts up
    } else {
      line(describe(e) + seconds(e.t), e.event === "Failed" ? "failed" : "");
      if (e.event === "IngestProgress") $("progress").lastChild.dataset.progress = e.stage !== "start" ? "1" : "";
    }
    if (e.event === "RunStarted" && $("job-question")) $("job-question").textContent = e.question;
    status(e.event === "Failed" ? "failed" : "working…");
    if (e.event === "RunStarted") status(`run ${e.run_id}: working…`);
  };
  source.addEventListener("queued", (message) => {
    const ahead = JSON.parse(message.data).ahead;
    status(ahead ? `queued: ${ahead} job(s) ahead of this one (one model, one job at a time)` : "starting…");
    if (ahead) {
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.className = "remove";
      cancel.textContent = "Cancel";
      cancel.addEventListener("click", () => send(`/api/jobs/${encodeURIComponent(jobId)}/cancel`)
        .catch((error) => status(error.message)));
      $("job-status").append(" ", cancel);
    }
  });
  source.addEventListener("end", () => {
    source.close();
    status(last && last.event === "Failed" ? "failed" : "finished");
    done(last);
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      status("the server cannot be reached; reload the page once it runs again (finished rounds are saved)");
    }
  };
}

async function showAnswer(runId) {
  const response = await fetch(`/runs/${encodeURIComponent(runId)}/answer`, {credentials: "same-origin"});
  if (response.ok) $("result").innerHTML = await response.text();  // the server's escaped HTML
}

function askPage() {
  const form = $("ask-form");
  const fromUrl = new URLSearchParams(location.search).get("job");
  const onEnd = (last) => {
    if (last && last.event === "RunFinished") showAnswer(last.result.run_id);
    $("ask-button").disabled = false;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (!question) return;
    $("ask-button").disabled = true;
    $("progress").replaceChildren();
    $("result").replaceChildren();
    $("job-question").textContent = question;
    try {
      const job = await send("/api/ask", {question});
      history.replaceState(null, "", `/?job=${job.job_id}`);
      follow(job.job_id, onEnd);
    } catch (error) {
      $("job").hidden = false;
      status(error.message);
      $("ask-button").disabled = false;
    }
  });
  if (fromUrl) {
    fetch(`/api/jobs/${encodeURIComponent(fromUrl)}`, {credentials: "same-origin"}).then(async (response) => {
      const job = await response.json();
      if (!response.ok) {
        $("job").hidden = false;
        status(job.error);
        return;
      }
      $("job-question").textContent = job.label;
      follow(job.job_id, onEnd);
    });
  }
}

function runPage() {
  const section = $("job");
  if (section && section.dataset.job) follow(section.dataset.job, () => location.reload());
  const resume = $("resume");
  if (resume) {
    resume.addEventListener("click", async () => {
      resume.disabled = true;
      try {
        const job = await send(`/api/runs/${encodeURIComponent(resume.dataset.run)}/resume`);
        follow(job.job_id, () => location.reload());
      } catch (error) {
        section.hidden = false;
        status(error.message);
        resume.disabled = false;
      }
    });
  }
}

function collectionPage() {
  const start = async (request) => {
    $("progress").replaceChildren();
    $("result").replaceChildren();
    try {
      const job = await request();
      history.replaceState(null, "", `/collection?job=${job.job_id}`);
      follow(job.job_id, (last) => {
        if (!last || last.event === "Failed") return;
        if (last.event === "IngestFinished") {
          for (const f of last.report.failed) line(`could not read ${f.path}: ${f.error}`, "failed");
        }
        const again = document.createElement("a");
        again.href = "/collection";
        again.textContent = "Show the collection as it is now";
        $("result").appendChild(again);
      });
    } catch (error) {
      $("job").hidden = false;
      status(error.message);
    }
  };
  $("ingest-path").addEventListener("submit", (event) => {
    event.preventDefault();
    start(() => send("/api/ingest", {path: $("path").value.trim()}));
  });
  $("ingest-upload").addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData();
    for (const file of $("files").files) data.append("files", file);
    start(() => send("/api/ingest", data));
  });
  for (const button of document.querySelectorAll("button.remove")) {
    button.addEventListener("click", () => {
      if (!confirm(`Remove ${button.dataset.name} from the collection? The file itself stays on disk.`)) return;
      start(() => send(`/api/collection/${encodeURIComponent(button.dataset.file)}/remove`));
    });
  }
  const fromUrl = new URLSearchParams(location.search).get("job");
  if (fromUrl) follow(fromUrl, () => {});
}

if ($("ask-form")) askPage();
else if ($("ingest-path")) collectionPage();
else if ($("job") || $("resume")) runPage();
