"""Progress bars (``vision.progress``): drawn on a terminal's stderr, never in a log, a pipe or --quiet."""

from __future__ import annotations

import io
import sys

import pytest

from vision.factory.face_net import validation_line
from vision.progress import bar, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_is_drawn_on_a_terminal_and_the_items_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(progress(range(5), total=5, unit="photo", desc="autolabel")) == [0, 1, 2, 3, 4]
    assert "autolabel" in terminal.getvalue() and "/5 " in terminal.getvalue()  # the count, as it starts


@pytest.mark.parametrize("where", ["pipe", "quiet"])
def test_no_bar_off_a_terminal_or_under_quiet(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    stream = io.StringIO() if where == "pipe" else _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    assert list(progress(iter("abc"), enabled=where != "quiet")) == ["a", "b", "c"]
    assert bar(total=3, enabled=where != "quiet") is None
    assert stream.getvalue() == ""


def test_a_hand_advanced_bar_shows_its_postfix(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    steps = bar(total=10, unit="step", desc="epoch 1/2")
    steps.update(4)
    steps.set_postfix_str("loss 1.234")
    steps.close()
    assert "epoch 1/2" in terminal.getvalue() and "loss 1.234" in terminal.getvalue()


def test_the_validation_line_says_whether_its_figure_is_expected() -> None:
    smoke = validation_line(1, 0.0625, 60, 4)
    assert "validation top-1 0.0625 on 60 crops" in smoke and "after 4 steps" in smoke
    assert "about chance: expected of a run this short" in smoke
    assert "a finished fine-tune reads above 0.95" in validation_line(1, 0.7, 60, 400)
    assert "as a finished fine-tune reads" in validation_line(2, 0.98, 60, 4000)
