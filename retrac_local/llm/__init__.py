"""LLM backends behind one interface (`LLM.generate`); heavy libraries load only when used."""

from retrac_local.llm.base import LLM, Generation, Message, Usage

__all__ = ["LLM", "Generation", "Message", "Usage"]
