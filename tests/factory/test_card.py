"""The model card's measured table is written from the manifest, and the shipped card agrees with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import smj
from vision.factory.card import BEGIN, END, CardError, rendered, table

ROW = {
    "measure": "mAP50",
    "photos": "real val (44)",
    "value": 0.84,
    "target": ">= 0.90",
    "command": "smj eval",
}


def test_the_shipped_card_agrees_with_the_manifest() -> None:
    assert smj.main(["card", "--check"]) == 0


def test_rows_become_a_table_between_the_markers() -> None:
    card = f"# Card\\n\\n{BEGIN}\\nold table\\n{END}\\n\\nmore text\\n".replace("\\n", "\n")
    new = rendered(card, {"measured": [ROW, {**ROW, "measure": "a | b", "target": None}]})
    assert new.startswith("# Card\n\n" + BEGIN + "\n| measure | photos | value | target | command |")
    assert "| mAP50 | real val (44) | 0.84 | >= 0.90 | `smj eval` |" in new
    assert "| a \\| b | real val (44) | 0.84 |  | `smj eval` |" in new  # a blank target, a pipe escaped
    assert "old table" not in new and new.endswith(f"{END}\n\nmore text\n")
    assert rendered(new, {"measured": [ROW, {**ROW, "measure": "a | b", "target": None}]}) == new


@pytest.mark.parametrize(
    ("card", "manifest", "message"),
    [
        ("no markers", {"measured": [ROW]}, "no measured block"),
        (f"{BEGIN}\n{END}", {}, "no measured rows"),
        (f"{BEGIN}\n{END}", {"measured": [{**ROW, "value": ""}]}, "row 1 has no value"),
    ],
)
def test_a_card_or_manifest_that_cannot_be_matched_is_refused(
    card: str, manifest: dict, message: str
) -> None:
    with pytest.raises(CardError, match=message):
        rendered(card, manifest)


def test_smj_card_writes_and_checks_a_models_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text(f"card\n{BEGIN}\n{END}\n", encoding="utf-8")
    (tmp_path / "manifest.json").write_text(json.dumps({"measured": [ROW]}), encoding="utf-8")
    assert smj.main(["card", "--check", "--models", str(tmp_path)]) == 1
    assert "run 'smj card'" in capsys.readouterr().err
    assert smj.main(["card", "--models", str(tmp_path)]) == 0
    assert smj.main(["card", "--check", "--models", str(tmp_path)]) == 0
    assert table([ROW]) in (tmp_path / "README.md").read_text(encoding="utf-8")
