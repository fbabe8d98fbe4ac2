"""The model card's measured table, written from the manifest so that the card and the manifest agree.

``models/manifest.json`` holds, under ``"measured"``, one row per figure: what was measured, on which
photos, the value, the target where an issue sets one, and the command that measures it. ``smj card``
writes those rows as the table between the card's ``BEGIN`` and ``END`` markers; ``smj card --check``
says whether the card is up to date (the test suite runs it on the shipped card).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BEGIN = "<!-- measured: written by `smj card` from manifest.json; do not edit by hand -->"
END = "<!-- end of measured -->"
COLUMNS = ("measure", "photos", "value", "target", "command")


class CardError(ValueError):
    """The card or the manifest cannot be matched up; the message says why."""


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (a missing target or command is left blank)."""
    if not rows:
        raise CardError("the manifest has no measured rows")
    for number, row in enumerate(rows, 1):
        missing = [key for key in ("measure", "photos", "value") if not str(row.get(key, "")).strip()]
        if missing:
            raise CardError(f"measured row {number} has no {', '.join(missing)}")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = [str(row.get(key) or "").replace("|", "\\|") for key in COLUMNS]
        if cells[4]:
            cells[4] = f"`{cells[4]}`"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rendered(card: str, manifest: dict[str, Any]) -> str:
    """``card`` with its measured block written from ``manifest``."""
    start, stop = card.find(BEGIN), card.find(END)
    if start < 0 or stop < start:
        raise CardError("the card has no measured block (its BEGIN and END markers)")
    block = table(list(manifest.get("measured") or []))
    return card[: start + len(BEGIN)] + "\n" + block + "\n" + card[stop:]


def write_card(card_path: Path, manifest_path: Path, *, check: bool = False) -> bool:
    """Write the card's table from the manifest; with ``check``, only say whether it is up to date.
    Returns True when the card (now) agrees with the manifest."""
    card = card_path.read_text(encoding="utf-8")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    new = rendered(card, manifest)
    if check:
        return new == card
    card_path.write_text(new, encoding="utf-8")
    return True
