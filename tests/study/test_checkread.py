"""The reads step on its own: the parse rate of a scripted real Backend's replies, and the floor of 80 %."""

from __future__ import annotations

import pytest

from ipcausal.backends.base import BackendBase, Choice, Response
from ipcausal.cases import get_case
from ipcausal.study.checkread import PARSE_FLOOR, read_check

ECHO = get_case("echo")


class Scripted(BackendBase):
    """A real Backend (BackendBase machinery) whose k-th reply is ``replies[k % len(replies)]``."""

    kind, model = "scripted", "scripted-model"

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies, self.k = replies, 0

    def _outcomes(self, requests, on_result, concurrency):
        outs = []
        for i, _ in enumerate(requests):
            out = Response((Choice(self.replies[self.k % len(self.replies)]),), self.model)
            self.k += 1
            on_result(i, out)
            outs.append(out)
        return outs


@pytest.mark.parametrize("replies, passed, read", [
    (["The answer is: 2.", "(B)", "Option 3", "2", "**1**"], True, 10),  # every format read
    (["2", "2", "2", "2", "I am not sure"], True, 8),  # 8 of 10: the floor itself passes
    (["2", "2", "I am not sure"], False, 7),  # 7 of 10
])
def test_the_parse_rate_and_its_floor(replies: list[str], passed: bool, read: int) -> None:
    got = read_check(ECHO, Scripted(replies), ECHO.demo.load(0, None))
    assert got.passed is passed and got.read == read and got.asked == 10
    assert (got.rate >= PARSE_FLOOR) is passed
    if not passed:
        assert "the scorer cannot read this model. Not read: 'I am not sure'" in got.reason
        assert got.unread == ("I am not sure",) * 3


def test_validation() -> None:
    with pytest.raises(TypeError, match="`backend` must implement ipcausal.backends.Backend"):
        read_check(ECHO, object(), ECHO.demo.load(0, 2))
    with pytest.raises(ValueError, match="`n_pairs` must be an integer >= 1"):
        read_check(ECHO, Scripted(["1"]), ECHO.demo.load(0, 2), n_pairs=0)
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        read_check(ECHO, Scripted(["1"]), [])
