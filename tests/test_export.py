"""`retrac runs export`: JSON, Markdown and a self-contained HTML page, checked in headless Chromium
where it is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.agent.loop import ResearchAgent
from retrac_local.cli.main import cli
from retrac_local.config import Settings
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.export import build, highlight, render
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


@pytest.fixture
def finished_run(settings: Settings, orrin: MemoryCorpus) -> tuple[RunStore, str]:
    llm = ScriptedLLM().enqueue(
        # One tool call a round: the question (hop 0), then the lead the evidence names, both by code.
        constraints(),
        update(
            facts=["The tower was designed by the civil engineer Ada Vellacott"],
            uncertainties=["her birth year?"],
        ),
        update(facts=["She was born on 3 May 1849 in Port Saltry"], answer="1849"),
        final("1849", "E2"),
    )
    settings = settings.model_copy(
        update={"budget": settings.budget.model_copy(update={"max_steps_per_round": 1})}
    )
    store = RunStore(settings.runs_db)
    result = list(ResearchAgent(llm, llm, orrin, settings, store).ask(Q))[-1].result
    assert result.answer == "1849"
    return store, result.run_id


def test_the_report_holds_answer_citations_and_a_timeline(finished_run, orrin: MemoryCorpus) -> None:
    store, run_id = finished_run
    report = build(store, run_id, orrin)
    assert report["answer"] == "1849" and report["status"] == "answered"
    assert report["citations"][0]["chunk_text"] == orrin.get_chunk("ada-vellacott#0").text
    first, second = report["rounds"]
    assert [(s["argument"], s["by"]) for s in first["steps"]] == [(Q, "code")]
    assert [(s["argument"], s["by"]) for s in second["steps"]] == [("Ada Vellacott", "code")]
    assert [e["id"] for e in first["added"]] == ["E1"] and first["opened"] == ["her birth year?"]
    assert second["closed"] == ["her birth year?"] and second["answer_after"] == "1849"
    markdown = render(report, "md")
    assert (
        "**Answer:** 1849" in markdown
        and "### Round 2" in markdown
        and "✓ closed: her birth year?" in markdown
    )
    assert json.loads(render(report, "json"))["run_id"] == run_id


def test_the_html_page_is_self_contained_and_escapes_what_it_shows(finished_run, orrin: MemoryCorpus) -> None:
    store, run_id = finished_run
    page = render(build(store, run_id, orrin), "html")
    assert (
        not re.search(r"""(src|href)=["']?(https?:)?//""", page)
        and "<script" not in page
        and "@import" not in page
    )
    assert '<p class="answer" id="answer">1849</p>' in page
    assert "<mark>She was born on 3 May 1849 in Port Saltry" in page
    assert highlight("a <b> c", "<b>") == "a <mark>&lt;b&gt;</mark> c"  # document text is never markup


def test_export_from_the_command_line(finished_run, tmp_path: Path) -> None:
    _, run_id = finished_run
    out = tmp_path / "run.md"
    result = CliRunner().invoke(cli, ["runs", "export", run_id, "--format", "md", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith(f"# {Q}")
    assert "no run 'nope'" in CliRunner().invoke(cli, ["runs", "export", "nope"]).output


HOSTILE = (
    '<script>alert(1)</script> <img src=x onerror="fetch(1)"> ![t](http://tracker.example/p.gif) '
    "[click](javascript:alert(1)) `x` <http://tracker.example/a>\n# Forged heading"
)


def test_the_markdown_export_shows_document_text_and_never_runs_or_fetches_it(
    finished_run, orrin: MemoryCorpus
) -> None:
    store, run_id = finished_run
    report = build(store, run_id, orrin)
    report["answer"] = HOSTILE
    report["citations"][0] |= {"title": HOSTILE, "quote": HOSTILE}
    report["rounds"][0]["steps"][0]["argument"] = HOSTILE
    markdown = render(report, "md")
    assert "<script" not in markdown and "<img" not in markdown and "<http" not in markdown
    assert "![" not in markdown and not re.search(r"(?<!\\)\]\(", markdown) and "`x`" not in markdown
    assert "\n# Forged heading" not in markdown  # one line: no structure of its own
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown  # shown, as text


def test_export_writes_a_new_file_whole_and_replaces_one_only_when_asked(
    finished_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, run_id = finished_run
    out = tmp_path / "run.md"
    out.write_text("keep me")
    runner = CliRunner()
    refused = runner.invoke(cli, ["runs", "export", run_id, "--format", "md", "--output", str(out)])
    assert refused.exit_code == 1 and "exists; use --force" in refused.output and out.read_text() == "keep me"
    for target, message in (
        (tmp_path / "no" / "run.md", "does not exist; create it first"),
        (Path("/dev/full"), "is not a plain file"),
    ):
        result = runner.invoke(cli, ["runs", "export", run_id, "--output", str(target), "--force"])
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr("os.replace", full_disk)
        result = runner.invoke(
            cli, ["runs", "export", run_id, "--format", "md", "--output", str(out), "--force"]
        )
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert (
        out.read_text() == "keep me" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    )
    assert (
        runner.invoke(
            cli, ["runs", "export", run_id, "--format", "md", "--output", str(out), "--force"]
        ).exit_code
        == 0
    )
    assert out.read_text().startswith(f"# {Q}")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
def test_the_html_page_renders_in_headless_chromium(
    finished_run, orrin: MemoryCorpus, tmp_path: Path
) -> None:
    store, run_id = finished_run
    page = tmp_path / "report.html"
    page.write_text(render(build(store, run_id, orrin), "html"), encoding="utf-8")
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
    ]
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    dom = subprocess.run(
        [*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert '<p class="answer" id="answer">1849</p>' in dom and "Round 2" in dom
