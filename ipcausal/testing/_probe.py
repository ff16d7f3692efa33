"""How :class:`~ipcausal.testing.SimulatedModel` answers a background probe (:func:`ipcausal.probe`).

The probe prompt is recognised by :func:`ipcausal.study.probe.read_probe_prompt` (it starts
with :data:`~ipcausal.study.probe.PROBE_MARKER`).  The true background is what the simulator
itself infers from the quoted message (:meth:`SimulatedModel.detect`: its ``known`` mapping, its
markers and tags, the cases' cues), matched to an option by name (``british`` is ``uk``).  With
``probe_accuracy=a`` the answer names it with probability a and one of the other options,
uniformly, otherwise, so P(correct) = a exactly (a = 1/|B| is chance: the probe's null holds
exactly); when the message implies no background (no marker, or a tie) the answer is uniform
over the options.  With ``probe_accuracy=None`` the answer names the inferred background, or
says it cannot tell (an unparseable answer).  The draws are fixed by a hash of the model seed
and the prompt (and, when sampling, the sample's seed), like every other simulated answer.
The answer's wording varies with the prompt (a bare letter, "Answer: B", "(B) name", the name
in a sentence), so that the probe's parser is exercised.
"""

from __future__ import annotations

import hashlib
from typing import Any

_FORMATS = ("{letter}", "Answer: {letter}", "({letter}) {name}", "The writer is most likely {name}.")


def _uniform(*parts: object) -> float:
    h = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(h, "big") + 0.5) / 2.0**64


def probe_answer(sim: Any, prompt: str, options: tuple[str, ...], truth: str | None, temperature: float,
                 sample_seed: int | None) -> str:
    """The simulated answer to the probe prompt ``prompt`` with ``options``, whose message's background is ``truth``."""
    from ipcausal.testing._cues import same

    draw = (sim.seed, "probe", prompt) + ((sample_seed, float(temperature)) if temperature > 0 else ())
    u, v = _uniform(*draw, "u"), _uniform(*draw, "v")
    right = next((i for i, o in enumerate(options) if truth is not None and same(o, truth)), None)
    known = right is not None
    acc = sim.probe_accuracy
    if acc is None:
        if not known:
            return "I cannot tell from this message."
        pick = right
    elif known and u < acc:
        pick = right
    elif known:
        others = [i for i in range(len(options)) if i != right]
        pick = others[min(int(v * len(others)), len(others) - 1)]
    else:
        pick = min(int(v * len(options)), len(options) - 1)
    fmt = _FORMATS[int(_uniform(*draw, "format") * len(_FORMATS))]
    return fmt.format(letter="ABCDEFGHIJKLMNOPQRSTUVWXYZ"[pick], name=options[pick])
