"""The one progress bar of the study layer (:func:`ipcausal.run`, :func:`ipcausal.audit`)."""

from __future__ import annotations

import sys
from typing import Any

from ipcausal.study.inputs import check_progress

__all__ = ["bar"]


def bar(progress: Any, total: int, *, unit: str, desc: str) -> Any:
    """A tqdm bar on stderr for ``progress=True``, the caller's tqdm-like object, or ``None`` (no bar).

    Examples
    --------
    >>> bar(False, 10, unit="req", desc="ipcausal run") is None
    True
    """
    check_progress(progress)
    if progress is False or progress is None:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency of the CLI extra
            return None
        return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True)
    return progress
