"""ipcausal's SCM simulator as an inspect_ai model provider: ``model="ipcausal/simulated"``.

inspect_ai finds providers of installed packages through its extension entry point (the
``inspect_ai`` group; ipcausal's ``pyproject.toml`` names this module there), and this module
registers one with inspect's public ``@modelapi`` decorator.  The model arguments are those of
:class:`ipcausal.testing.SimulatedModel` (``effect``, ``noise``, ``levels``, ``seed``,
``backgrounds``, ``markers``, …), passed through unchanged, so an IP task can be dry-run
inside inspect against a known truth::

    inspect_ai.eval(task, model="ipcausal/simulated", model_args={"effect": 0.8, "levels": 5})

(``inspect eval … --model ipcausal/simulated -M effect=0.8 -M levels=5`` on the command line.)
Each answer is the simulator's ``"Answer: <v> …"`` for the user messages joined by newlines;
with ``temperature > 0`` inspect's ``seed`` (default 0) and the sample's position make the draw.
The simulator reads each prompt's background from its own cues (a stated belief, a stated age,
culture markers, dialect features: :mod:`ipcausal.testing._cues`), so the built-in cases' pairs
exported to inspect (``ip_task``) are personalized with ``-M effect=…``; a prompt it cannot read
is answered with no effect and named in one ``BackgroundUnknownWarning``.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

__all__ = ["SimulatedAPI", "MODEL_NAME"]

MODEL_NAME = "ipcausal/simulated"
"""The model string inspect_ai knows the simulator by."""


class SimulatedAPI(ModelAPI):
    """inspect_ai ``ModelAPI`` answering with :class:`ipcausal.testing.SimulatedModel`.

    Parameters
    ----------
    model_name : str
        ``"simulated"`` (the part after ``ipcausal/``).
    base_url, api_key : str, optional
        Ignored (nothing is contacted).
    config : GenerateConfig
        inspect's generation settings (``temperature``, ``seed`` are used).
    **model_args
        Passed to :class:`~ipcausal.testing.SimulatedModel` (``effect=0.8``, ``levels=5`` …).

    Examples
    --------
    >>> import inspect_ai.model
    >>> import ipcausal.interop.inspect_model  # registers the provider (the entry point does this too)
    >>> model = inspect_ai.model.get_model("ipcausal/simulated", effect=1.0, levels=5, seed=3)
    >>> text = "Question 7: what do you think about the colour and the flavour?"
    >>> import asyncio
    >>> got = asyncio.run(model.generate(text)).completion
    >>> got[:8], got.endswith("background inferred: british)")
    ('Answer: ', True)
    >>> from ipcausal.testing import SimulatedModel
    >>> SimulatedModel.read(got) == SimulatedModel(effect=1.0, levels=5, seed=3).answer(text)
    True
    """

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name != "simulated":
            raise ValueError(f"`model`: the ipcausal provider has one model, 'ipcausal/simulated'; got "
                             f"'ipcausal/{model_name}'")
        from ipcausal.testing import SimulatedModel

        self.simulator = SimulatedModel(**model_args)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        from ipcausal.backends.base import GenerationConfig, Request

        texts = [m.text for m in input if m.role in ("system", "user")]
        temperature = float(config.temperature or 0.0)
        cfg = GenerationConfig(temperature=temperature, seed=config.seed if config.seed is not None else 0)
        resp = self.simulator.generate([Request(({"role": "user", "content": "\n".join(texts)},), cfg)])[0]
        out = ModelOutput.from_content(model=self.model_name, content=resp.text)
        out.usage = ModelUsage(input_tokens=resp.prompt_tokens, output_tokens=resp.completion_tokens,
                               total_tokens=resp.prompt_tokens + resp.completion_tokens)
        return out

    def max_connections(self) -> int:
        """Concurrent generate calls inspect may make (the simulator is instantaneous)."""
        return 32


@modelapi(name="ipcausal")
def ipcausal_provider() -> type[ModelAPI]:
    """The ``ipcausal`` provider of inspect_ai (its one model: ``simulated``)."""
    return SimulatedAPI
