"""The model contract: what the models are asked for and answer in (schemas), the research state, the events a run yields, and the tools."""
