"""No network, ever: ingest, search and ask work with internet sockets made impossible (the slow
tier does the same with the real models and embeddings, in real processes)."""

from __future__ import annotations

import socket

import pytest

from retrac_local.api import Retrac
from retrac_local.config import Settings
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.llm.fake import ScriptedLLM
from tests.conftest import DEMO_DOCS
from tests.offline import NoNetworkSocket
from tests.scripts import constraints, final, finish, update


def test_ingest_search_and_ask_open_no_socket(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", NoNetworkSocket)
    with pytest.raises(OSError, match="network access attempted"):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # the guard works
    llm = ScriptedLLM().enqueue(
        constraints(),
        finish("Ada Vellacott"),  # after two searches by code
        update(facts=["The tower was designed by the civil engineer Ada Vellacott"], answer="Ada Vellacott"),
        final("Ada Vellacott"),
    )
    app = Retrac(settings, planner=llm, compressor=llm, embedder=HashingEmbedder())
    report = app.ingest([DEMO_DOCS])
    assert report.failed == [] and report.documents_added == 18
    assert app.search("Gull Line ferry founder", k=3)[0].chunk.doc_id == "gull-line"
    events = list(app.ask("Who designed the Karn Point Lighthouse?"))
    assert events[-1].result.answer == "Ada Vellacott"
