"""The code rules of the answering layer, as one catalogue (`catalogue.py`): each can be switched off
(`rules.disabled`), and each run records which fired and what each changed (`book.py`). The text
rules that read English live here too: the answer's shape and kind (`answers.py`), a question's
options (`choices.py`), dates compared by code (`datecompare.py`)."""
