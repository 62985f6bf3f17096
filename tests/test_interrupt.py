import os
import signal

import pytest

from retrac_local import interrupt
from retrac_local.agent.loop import ResearchAgent
from retrac_local.config import Settings
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, search


def test_first_ctrl_c_only_requests_a_stop_and_the_next_check_raises() -> None:
    with interrupt.graceful_sigint():
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt here
        assert interrupt.stop_requested()
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
        assert not interrupt.stop_requested()
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C does not wait
            os.kill(os.getpid(), signal.SIGINT)
    assert not interrupt.stop_requested()


def test_the_loop_stops_at_the_next_safe_point(settings: Settings, orrin: MemoryCorpus) -> None:
    def ctrl_c_during_the_model_call(messages, schema):
        os.kill(os.getpid(), signal.SIGINT)
        return search("Ada Vellacott")

    llm = ScriptedLLM().enqueue(constraints(), ctrl_c_during_the_model_call, search("never asked"))
    agent = ResearchAgent(llm, llm, orrin, settings, RunStore(settings.runs_db))
    with interrupt.graceful_sigint(), pytest.raises(KeyboardInterrupt):
        list(agent.ask("When was Ada Vellacott born?"))
    # hops 0 and 1 (by code), then the planner's step finished, then the loop stopped
    assert orrin.searches == ["When was Ada Vellacott born?", "Port Saltry", "Ada Vellacott"]
    assert len(llm.calls) == 2
