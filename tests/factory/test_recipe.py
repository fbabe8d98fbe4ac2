"""The one recipe of the shipped models (``tools/make_models.sh``): each of its commands is one smj takes."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

import smj

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "make_models.sh"


def _commands() -> list[list[str]]:
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    variables = {"$ART": "../shared/data/tileart", "$TILEART": "../shared/data/tileart", "$DEVICE": "0"}
    commands = []
    for line in text.splitlines():
        if line.startswith("smj "):
            for name, value in variables.items():
                line = line.replace(f'"{name}"', value)
            commands.append(shlex.split(line, comments=True)[1:])
    return commands


def test_the_recipe_makes_both_models_and_the_card() -> None:
    commands = _commands()
    assert len(commands) > 30
    assert commands[0][:2] == ["dataset", "import"]
    assert any(c[:1] == ["train"] and "--task" not in c for c in commands)  # the localiser
    assert commands[-2][:2] == ["ship", "--classifier"] and commands[-1] == ["card"]


@pytest.mark.parametrize("argv", _commands(), ids=lambda argv: " ".join(argv[:3]))
def test_every_command_of_the_recipe_parses(argv: list[str]) -> None:
    smj.build_parser().parse_args(argv)  # argparse exits (SystemExit) on anything it does not take
