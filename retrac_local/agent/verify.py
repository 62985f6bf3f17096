"""Quote and value checks done by code, never by the model.

A quote counts only if it occurs in its source chunk after whitespace and typographic
normalisation. A fact the model states is attached to the sentence that supports it best: every
number and name of the fact must occur in that sentence (or its document's title), and most of its
content words; a fact that no sentence supports is rejected, never stored. Support is more than a bag
of the sentence's words: a fact must be a statement (not a question, not its subject's name alone), and
what it speaks of must be what the sentence speaks of (see `unfaithful`).
"""

from __future__ import annotations

import re
from typing import Literal

from retrac_local.text import words_of

_TYPOGRAPHY = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u2013": "-", "\u2014": "-", "\u00a0": " "}
)
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CONTENT_WORD = re.compile(r"[^\W\d_]{4,}")
FULL_SUPPORT = 0.6
PARTIAL_SUPPORT = 0.4
# Sentences that speak to the model, not about the world: a document's orders, a claimed answer,
# an order to record or write down "the fact" or "the answer", a chat-template turn marker (raw or
# defused at ingest). They are never evidence. "You must restart the server" stays: a manual speaks
# to its reader, and that is a fact about the server. The phrasings are those of English, French,
# German, Spanish, Italian and Portuguese; another language's order passes (README, "Safety").
_TO_THE_MODEL_PHRASES = (
    # English
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(previous|prior|above|earlier|preceding|former|original|other|system)\b[^.]{0,40}"
    r"\b(instructions?|prompts?|rules|context|passages|texts|documents|sources|question)\b",
    r"\b(ignore|disregard)\s+(all\s+|any\s+)?(your\s+)?(instructions|prompts?)\b",
    r"\bthe (correct |final |real |true |verified |right |actual |official |expected )?answer"
    r"( to (this|the|your) question)? (is|should be|must be|will be)\b",
    r"\b(respond|reply|answer)\s+only\s+with\b",
    r"^\W*(now\s+|please\s+|instead\s+|always\s+)?(respond|reply)\s+with\b",
    r"\bsystem (prompt|notice|message|instructions?)\b",
    r"\b(record|remember|store|note|write|save|log)( down)? (the|this|that) (fact|answer)\b",
    r"\bin (your |the )?notes?\b[^.]{0,20}\b(write|record|put)\b",
    r"\b(the |an? )?(assistant|ai|chatbot|language model|llm)s? (must|should|shall|is to|has to|will) "
    r"(answer|reply|respond|say|write|record|state|give|output|ignore)\b",
    r"\bas an ai\b|\b(tell|inform) the user\b",
    # French
    r"\b(ignore[rz]?|oublie[rz]?)\b[^.]{0,30}\b(précédentes|antérieures|ci-dessus|vos instructions|"
    r"vos consignes|toutes les instructions|toutes les consignes|autres passages)",
    r"\bla ((bonne|vraie|véritable|seule) réponse|réponse (correcte|exacte|à (cette|la|votre) question)) "
    r"(est|sera|doit être)\b",
    r"\b(répondez|réponds)\b[^.]{0,20}\b(uniquement|seulement)\b",
    r"\b(notez|écrivez|enregistrez|retenez)\b[^.]{0,20}\b(la réponse|le fait)\b",
    r"\bl'(assistant|ia)\b[^.]{0,20}\b(doit|devra) (répondre|écrire|noter|enregistrer|ignorer)\b",
    # German
    r"\b(ignoriere|ignorieren sie|vergiss|vergessen sie)\b[^.]{0,30}\b(vorherigen|bisherigen|obigen|"
    r"alle anweisungen|deine anweisungen|ihre anweisungen|anderen passagen)",
    r"\bdie ((richtige|korrekte|wahre|eigentliche) antwort|antwort auf (diese|die) frage) (ist|lautet|sollte)\b",
    r"\b(antworte|antworten sie) (nur|ausschließlich)\b",
    r"\b(schreibe|schreiben sie|notiere|notieren sie)\b[^.]{0,20}\b(die antwort|die tatsache)\b",
    # Spanish
    r"\b(ignora|ignore|olvida|olvide)\b[^.]{0,30}\b(anteriores|previas|todas las instrucciones|"
    r"tus instrucciones|sus instrucciones|otros pasajes)",
    r"\bla ((verdadera|única) respuesta|respuesta (correcta|verdadera|a (esta|la) pregunta)) (es|será|debe ser)\b",
    r"\b(responde|responda) (solo|sólo|solamente|únicamente)\b",
    r"\b(anota|anote|escribe|escriba)\b[^.]{0,20}\b(la respuesta|el dato|el hecho)\b",
    # Italian
    r"\b(ignora|ignori|dimentica)\b[^.]{0,30}\b(precedenti|tutte le istruzioni|le tue istruzioni|"
    r"altri passaggi)",
    r"\bla (vera risposta|risposta (corretta|giusta|esatta|a questa domanda)) (è|sarà|deve essere)\b",
    r"\b(rispondi|risponda) (solo|soltanto|unicamente)\b",
    r"\b(scrivi|scriva|annota|annoti)\b[^.]{0,20}\b(la risposta|il fatto)\b",
    # Portuguese
    r"\b(ignore|ignora|esqueça)\b[^.]{0,30}\b(anteriores|todas as instruções|suas instruções|outros trechos)",
    r"\ba (verdadeira resposta|resposta (correta|certa|verdadeira|a esta pergunta)) (é|será|deve ser)\b",
    r"\b(responda|responde) (apenas|somente|só)\b",
    r"\b(escreva|anote)\b[^.]{0,20}\b(a resposta|o fato|o facto)\b",
    # a chat template's turn marker, raw or defused at ingest
    r"<\|[^|<>]{1,40}\|>|‹\|[^|‹›]{1,40}\|›",
)
_TO_THE_MODEL = re.compile("|".join(f"(?:{p})" for p in _TO_THE_MODEL_PHRASES), re.IGNORECASE)


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text.translate(_TYPOGRAPHY)).strip()


def clean_quote(quote: str) -> str:
    """Strip what models wrap quotes in: surrounding quote marks and ellipses."""
    q = normalise(quote)
    q = re.sub(r"^(\.\.\.|…)\s*|\s*(\.\.\.|…)$", "", q)
    return q.strip().strip('"').strip()


def quote_in(quote: str, source_text: str) -> bool:
    q = clean_quote(quote)
    return len(q) >= 1 and q in normalise(source_text)


_INVISIBLE = re.compile(r"[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")  # soft hyphen, zero-width marks


def as_read(text: str) -> str:
    """The text as a check should read it: compatibility forms folded (NFKC: full-width letters and
    look-alike bars become the plain ones, "ｉｇｎｏｒｅ" is "ignore", "＜｜" is "<|") and zero-width
    characters removed ("ig\u200bnore" is "ignore"), so that no spelling a reader cannot see slips
    past a pattern."""
    import unicodedata

    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def addresses_the_model(sentence: str) -> bool:
    """True for a sentence that instructs the model, claims the answer or orders it recorded,
    instead of stating a fact (the phrasings of six languages; read as `as_read` folds it)."""
    return bool(_TO_THE_MODEL.search(as_read(sentence)))


def missing_numbers(fact: str, source_text: str) -> list[str]:
    """Numbers stated in `fact` that do not occur in the source: the model may have changed them."""
    source_numbers = set(_NUMBER.findall(normalise(source_text).replace(",", "")))
    return [n for n in _NUMBER.findall(fact) if n.replace(",", "") not in source_numbers]


def missing_names(fact: str, source_text: str) -> list[str]:
    """Capitalised words of `fact` (names) that the source does not contain. The first word counts
    too ("Rihanna collaborated with …" needs "Rihanna" in the source) unless it is one a sentence
    may start with as a common word: an article, pronoun or preposition, a participle or adverb
    ("Born in …", "Originally …")."""
    source_words = {w.lower() for w in words_of(source_text)}
    words = words_of(fact)
    if words and _common_start(words[0]):
        words = words[1:]
    return [w for w in words if w[:1].isupper() and len(w) >= 3 and w.lower() not in source_words]


def _common_start(word: str) -> bool:
    w = word.lower()
    return w in _SENTENCE_STARTERS or w.endswith(("ed", "ing", "ly")) or not word[:1].isupper()


_SENTENCE_STARTERS = frozenset(
    [
        "the",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "then",
        "than",
        "his",
        "her",
        "hers",
        "its",
        "she",
        "him",
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "after",
        "before",
        "during",
        "while",
        "although",
        "though",
        "because",
        "since",
        "until",
        "unlike",
        "like",
        "both",
        "each",
        "every",
        "all",
        "some",
        "many",
        "most",
        "several",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "first",
        "second",
        "third",
        "last",
        "later",
        "earlier",
        "also",
        "however",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "within",
        "into",
        "as",
        "an",
        "and",
        "but",
        "not",
        "nor",
        "yes",
        "our",
        "your",
        "you",
        "was",
        "were",
        "is",
        "are",
        "has",
        "had",
        "have",
        "being",
        "prior",
        "despite",
        "among",
        "between",
        "under",
        "over",
        "about",
        "around",
        "near",
        "along",
        "across",
        "through",
        "throughout",
        "toward",
        "towards",
        "upon",
        "against",
        "beside",
        "besides",
        "beyond",
        "instead",
        "today",
        "neither",
        "either",
        "other",
        "another",
        "such",
        "only",
        "even",
        "still",
        "yet",
        "thus",
        "therefore",
        "moreover",
        "meanwhile",
        "according",
        "known",
        "born",
        "now",
        "once",
        "per",
    ]
)


def support(fact: str, quote: str, context: str = "") -> float:
    """Share of the fact's content words found in the quote (or its context, e.g. the document
    title, which resolves "she" and "the tower"); 0 when a number of the fact is not in the quote."""
    if (
        missing_numbers(fact, quote)
        or missing_names(fact, f"{context} {quote}")
        or unfaithful(fact, quote, context)
    ):
        return 0.0
    fact_words = {w.lower() for w in _CONTENT_WORD.findall(fact)}
    if not fact_words:
        return 0.0
    quote_words = {w.lower() for w in _CONTENT_WORD.findall(f"{context} {quote}")}
    return len(fact_words & quote_words) / len(fact_words)


def support_level(score: float) -> Literal["yes", "partial"] | None:
    """yes: the quote states the fact; partial: it bears on it; None: it does not support it."""
    if score >= FULL_SUPPORT:
        return "yes"
    return "partial" if score >= PARTIAL_SUPPORT else None


_LINK = re.compile(r"\b(is|was|are|were|has|had|have|became|becomes|remains|remained)\b", re.IGNORECASE)
_STEM = 5  # "directed" states "director"; "composer" needs a word of "compo…" in the source


def unfaithful(fact: str, quote: str, context: str = "") -> str | None:
    """Why `fact` is not a faithful statement of `quote` (with `context`, its document's title), or
    None. Rules, each cheap and each about form, not topic:
    - a question is not a fact;
    - a fact must say something of its subject: the title's words alone ("Lanterns (Vell song)") state
      nothing;
    - the subject of a fact "S is/was/has … P" must be what the source speaks of: each word of S
      (pronouns and articles aside) occurs in the quote or the title, up to its ending. "The composer
      of Rio Sombre is Ilse Varnholt's political activism" fails when the sentence, about Varnholt's
      activism, says nothing of a composer."""
    f = normalise(fact).strip()
    if f.endswith("?"):
        return "a question, not a fact"
    title = {w.lower() for w in words_of(context)}
    words = [w.lower() for w in words_of(f)]
    if title and words and all(w in title for w in words):
        return "the subject's name alone, with nothing said of it"
    link = _LINK.search(f)
    if link is None:
        return None
    stems = {w.lower()[:_STEM] for w in re.findall(r"[^\W\d_]+", f"{context} {quote}")}
    subject = [
        w for w in re.findall(r"[^\W\d_]{3,}", f[: link.start()]) if w.lower() not in _SENTENCE_STARTERS
    ]
    missing = [w for w in subject if w.lower()[:_STEM] not in stems]
    return f"the source does not speak of {' '.join(missing)!r}" if missing else None
