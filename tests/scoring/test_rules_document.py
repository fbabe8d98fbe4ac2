"""The rules document (``scoring/RULES.md``) against the code: every number of its tables is what the presets,
the scorer and the settlement give, so the document cannot drift from what the project scores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scoring import WinContext, score
from scoring.presets import PRESETS
from scoring.settlement import parse_round, settle_round
from scoring.typed import parse_typed

DOCUMENT = (Path(__file__).resolve().parents[2] / "scoring" / "RULES.md").read_text(encoding="utf-8")


def _table(header: str) -> list[list[str]]:
    """The rows of the table whose header line starts with ``header``, as stripped cells."""
    lines = DOCUMENT.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip().strip("|").split("|")])
    assert rows, header
    return rows


def _number(value: int | None) -> str:
    return "none" if value is None else str(value)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def test_every_preset_is_in_the_document_once_per_table() -> None:
    for header in ("| preset | 计番", "| preset | 直杠", "| preset | 花猪"):
        assert [row[0] for row in _table(header)] == list(PRESETS), header


def test_the_fans_table_is_what_each_preset_scores() -> None:
    header = "| key | 中文 | English | "
    columns = [name.strip().strip("`") for name in DOCUMENT.split(header)[1].splitlines()[0].split("|")[:-1]]
    assert columns == list(PRESETS)
    shown: dict[str, set[str]] = {name: set() for name in PRESETS}
    for key, name_zh, name_en, *cells in _table(header):
        for name, cell in zip(columns, cells, strict=True):
            row = next((row for row in PRESETS[name].fan_table() if row["key"] == key), None)
            expected = "—" if row is None else "cap" if row["limit"] else str(row["fan"])
            assert cell == expected, (key, name)
            if row is not None:
                assert (row["name_zh"], row["name_en"]) == (name_zh, name_en)
                shown[name].add(key)
    for name, rules in PRESETS.items():  # nothing a preset scores is left out
        assert {row["key"] for row in rules.fan_table()} == shown[name], name


def test_the_presets_numbering_cap_and_self_drawn_bonus() -> None:
    for name, numbering, stacking, cap, bonus in _table("| preset | 计番"):
        rules = PRESETS[name]
        assert (numbering, stacking) == (rules.numbering.value, rules.stacking.value), name
        assert (cap, bonus) == (_number(rules.cap), rules.settlement.self_draw_bonus.value), name


def test_the_kong_payments() -> None:
    for name, direct, others, added, concealed in _table("| preset | 直杠"):
        settlement = PRESETS[name].settlement
        expected = (
            settlement.direct_kong_base,
            settlement.direct_kong_others_base,
            settlement.added_kong_base,
            settlement.concealed_kong_base,
        )
        assert tuple(map(int, (direct, others, added, concealed))) == expected, name


def test_the_walls_end() -> None:
    for name, pays, whom, fan, cap, roots, refund, to_won in _table("| preset | 花猪"):
        s = PRESETS[name].settlement
        assert pays == ("the cap" if s.hua_zhu_pays_cap else f"{s.hua_zhu_base} base"), name
        assert whom == ("every other seat" if s.hua_zhu_pays_everyone else "each still in, no 花猪"), name
        assert (fan, cap) == (s.cha_jiao.value, _number(s.cha_jiao_cap)), name
        assert (roots, refund) == (_yes(s.cha_jiao_kong_roots), _yes(s.refund_kongs_when_not_ready)), name
        assert to_won == _yes(s.refund_to_won_players), name


def test_the_worked_round_pays_as_written() -> None:
    round_json = json.loads(re.search(r"```json\n(.*?)\n```", DOCUMENT, re.S).group(1))  # type: ignore[union-attr]
    ledger = settle_round(parse_round(round_json), PRESETS["chengdu"], 1)
    names = round_json["players"]
    written = [
        (int(e), payer, payee, int(amount), reason) for e, payer, payee, amount, reason in _table("| event |")
    ]
    paid = [(p.event, names[p.payer], names[p.payee], p.amount, p.reason) for p in ledger.payments]
    assert written == paid
    totals = ", ".join(f"{name} {total:+d}" for name, total in zip(names, ledger.totals, strict=True))
    assert f"Totals 总数: {totals}." in DOCUMENT
    # the 退税 to a player who has won, as the document says: sichuan_bloody refunds A's 2, chengdu does not
    refunds = settle_round(parse_round(round_json), PRESETS["sichuan_bloody"], 1).payments
    assert {names[p.payee] for p in refunds if p.kind.value == "kong_refund"} == {"A", "C", "D"}
    assert {payee for _, _, payee, _, reason in written if reason.startswith("退税")} == {"C", "D"}


@pytest.mark.parametrize("row", _table("| preset | hand (typed)"), ids=lambda row: f"{row[0]}-{row[1]}")
def test_the_worked_hands_score_as_written(row: list[str]) -> None:
    name, typed, how, fan, payment = row
    result = score(parse_typed(typed).hand(), WinContext(self_drawn=how.startswith("自摸")), PRESETS[name])
    assert result.valid and (result.total_fan, result.payment) == (int(fan), int(payment))
