"""retrac-local: an offline research agent with recursive trajectory compression (Re-TRAC).

Importing the package is cheap: llama_cpp, torch, sentence_transformers, lancedb and outlines are
imported only by the parts that use them, when they are first used.
"""

from retrac_local.errors import RetracError

__version__ = "0.1.0"
__all__ = ["RetracError", "__version__"]
