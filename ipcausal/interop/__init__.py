"""Other harnesses' files in and out: inspect_ai, lm-evaluation-harness, and human validation sheets.

* :func:`export_inspect` / :func:`import_inspect` — an inspect_ai dataset (one sample per side)
  and its eval logs back as a PairSet (``ipcausal export inspect``, ``ipcausal import inspect``);
* :func:`export_lm_eval` / :func:`import_lm_eval` — a local lm-eval task and its
  ``--log_samples`` output back (``ipcausal export lm-eval``, ``ipcausal import lm-eval``);
* :class:`IPEarlyStopping`, :func:`ip_task`, :func:`ip_test` — inside inspect_ai: anytime-valid
  early stopping, an IP task from a PairSet, the paired test as an inspect metric; the model
  ``ipcausal/simulated`` (:mod:`ipcausal.interop.inspect_model`);
* :func:`compare_lm_eval` — two models' lm-eval ``--log_samples`` compared document by document
  (``ipcausal compare lm-eval``); :func:`compare_inspect` (also
  ``ipcausal.interop.inspect.compare_logs``) — two models' inspect_ai logs compared sample by
  sample (``ipcausal compare inspect``);
* :func:`export_validation` / :func:`import_validation` — a blinded rating sheet for people who
  speak the varieties, and their ratings attached to the pairs with the raters' agreement
  (``ipcausal export validation``, ``ipcausal import validation``).

Names are imported lazily: ``import ipcausal.interop`` loads neither inspect_ai nor pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcausal._lazy import lazy_names

_LAZY: dict[str, str] = {
    "export_inspect": "ipcausal.interop.inspect",
    "import_inspect": "ipcausal.interop.inspect",
    "export_lm_eval": "ipcausal.interop.lm_eval",
    "import_lm_eval": "ipcausal.interop.lm_eval",
    "export_validation": "ipcausal.interop.validation",
    "import_validation": "ipcausal.interop.validation",
    "cohen_kappa": "ipcausal.interop.validation",
    "Agreement": "ipcausal.interop.validation",
    "ValidationResult": "ipcausal.interop.validation",
    "VARIETY_NAMES": "ipcausal.interop.validation",
    "ImportResult": "ipcausal.interop._common",
    "IPEarlyStopping": "ipcausal.interop.inspect_stop",
    "ip_task": "ipcausal.interop.inspect_task",
    "ip_test": "ipcausal.interop.inspect_task",
    "compare_lm_eval": "ipcausal.interop.lm_eval_compare",
    "compare_inspect": "ipcausal.interop.inspect_compare",
    "CompareResult": "ipcausal.interop.lm_eval_compare",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:  # pragma: no cover
    from ipcausal.interop._common import ImportResult
    from ipcausal.interop.inspect import export_inspect, import_inspect
    from ipcausal.interop.inspect_stop import IPEarlyStopping
    from ipcausal.interop.inspect_task import ip_task, ip_test
    from ipcausal.interop.inspect_compare import compare_inspect
    from ipcausal.interop.lm_eval_compare import CompareResult, compare_lm_eval
    from ipcausal.interop.lm_eval import export_lm_eval, import_lm_eval
    from ipcausal.interop.validation import (VARIETY_NAMES, Agreement, ValidationResult, cohen_kappa,
                                             export_validation, import_validation)


__getattr__, __dir__ = lazy_names('ipcausal.interop', _LAZY)
