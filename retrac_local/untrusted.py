"""Text from documents is data. Before it is stored it loses what could act on a terminal (escape
sequences, other control characters, bidirectional overrides) and what a chat template reads as a
turn marker (`<|im_start|>` and its kind, defused into look-alikes that stay readable). Before it is
printed, whatever still holds such characters (a model's answer, a stored run) loses them too."""

from __future__ import annotations

import re

# C0 controls other than tab and newline, DEL, C1 controls (0x9b is a one-byte CSI on some
# terminals), and the Unicode bidirectional overrides and isolates that hide or reorder text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"\r\n?|[\x0b\x0c\x85\u2028\u2029]")
_TURN_MARKER = re.compile(r"<\|([A-Za-z0-9_.:\-]{1,40})\|>")  # <|im_start|>, <|eot_id|>, <|start_header_id|>


def for_terminal(text: str) -> str:
    """Printed text: nothing that a terminal would act on (tab and newline stay)."""
    return _CONTROL.sub("", _LINE_BREAKS.sub("\n", text))


def clean_document(text: str) -> str:
    """Stored text: as printed text, with turn markers defused too."""
    return _TURN_MARKER.sub(r"‹|\1|›", for_terminal(text))
