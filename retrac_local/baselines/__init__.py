"""The baselines Re-TRAC is measured against: single-shot RAG and ReAct."""
