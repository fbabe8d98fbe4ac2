"""Run ``smj.main`` in-process with only the core commands (score, waits, settle) registered."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

import smj

Main = Callable[[Sequence[str]], int]


def core_main(monkeypatch: pytest.MonkeyPatch) -> Main:
    """``smj.main`` without the optional packages' commands (vision, datasets, api)."""
    monkeypatch.setattr(smj, "_register_optional", lambda commands, module_name: None)
    return smj.main


def run(main: Main, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: the exit code, stdout and stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
