"""A small American/British culture-marker lexicon for the testing toolkit (stdlib only).

The two tuples are aligned: ``AMERICAN[k]`` and ``BRITISH[k]`` mean the same thing.  Only
single words whose counterpart is unambiguous in everyday text are listed, so that swapping
them keeps the meaning.  This list is deliberately short and independent of the full
substitution lexicon used by :mod:`ipcausal.interventions`.
"""

from __future__ import annotations

__all__ = ["AMERICAN", "BRITISH", "NEUTRAL_WORDS"]

_PAIRS: tuple[tuple[str, str], ...] = (
    ("color", "colour"),
    ("favorite", "favourite"),
    ("neighbor", "neighbour"),
    ("flavor", "flavour"),
    ("humor", "humour"),
    ("honor", "honour"),
    ("labor", "labour"),
    ("behavior", "behaviour"),
    ("center", "centre"),
    ("theater", "theatre"),
    ("organize", "organise"),
    ("realize", "realise"),
    ("analyze", "analyse"),
    ("defense", "defence"),
    ("traveler", "traveller"),
    ("catalog", "catalogue"),
    ("jewelry", "jewellery"),
    ("gray", "grey"),
    ("pajamas", "pyjamas"),
    ("aluminum", "aluminium"),
    ("truck", "lorry"),
    ("cookie", "biscuit"),
    ("sidewalk", "pavement"),
    ("vacation", "holiday"),
    ("gasoline", "petrol"),
    ("diaper", "nappy"),
    ("trash", "rubbish"),
    ("mom", "mum"),
    ("eggplant", "aubergine"),
    ("zucchini", "courgette"),
    ("flashlight", "torch"),
    ("mailman", "postman"),
    ("math", "maths"),
)

AMERICAN: tuple[str, ...] = tuple(a for a, _ in _PAIRS)
BRITISH: tuple[str, ...] = tuple(b for _, b in _PAIRS)

#: Words that signal no background: the filler of generated texts.
NEUTRAL_WORDS: tuple[str, ...] = (
    "the", "my", "a", "new", "old", "which", "best", "near", "is", "for", "with", "what",
    "do", "you", "think", "about", "recommend", "our", "this", "good", "small", "big",
)
