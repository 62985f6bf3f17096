"""Side-by-side evaluation of the answering modes (Re-TRAC, ReAct, RAG) on published QA sets."""
