"""Command-line pieces of the scoring core, used by ``smj.py``.

``smj score --hand 123345m66999p --kong 2p --win 6p [--self-drawn ...] [--preset NAME] [--json]``
(the ``score`` command itself is built in ``smj.py`` from ``add_hand_arguments`` /
``add_context_arguments`` / ``run_score``), ``smj waits --hand TILES [melds] [context] [--json]`` and
``smj settle ROUND.json [--preset NAME] [--base N] [--json]`` (the round JSON: ``scoring.settlement``).

Exit codes: 0 scored (or ready, for ``waits``; settled, for ``settle``); 1 the hand was read but is not a
win (not ready) and the output says why; 2 malformed input (a non-tile, an unknown preset, no ``--hand``,
a round that cannot be read or cannot have happened), one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from dataclasses import replace
from typing import Any

from scoring.conditions import WIN_CONDITIONS
from scoring.errors import IMPOSSIBLE, InvalidHandError, ScoreError, UnknownPresetError
from scoring.hand import Hand, Meld, MeldKind, WinContext
from scoring.presets import CHENGDU, DEFAULT_PRESET, PRESETS, get_preset
from scoring.result import Payers, Score
from scoring.rules import Numbering, Rules, SelfDrawBonus
from scoring.score import score
from scoring.settlement import Ledger, RoundError, parse_round, settle_round
from scoring.tiles import SUITS, TileParseError, format_tiles, parse_tile, tile_name, tile_name_zh
from scoring.typed import TypedHandError, parse_typed
from scoring.waits import Wait, never_wins, waits, waits_to_json

_MELD_NAMES = {
    MeldKind.PONG: "碰 pong",
    MeldKind.KONG_EXPOSED: "明杠 kong",
    MeldKind.KONG_ADDED: "加杠 added kong",
    MeldKind.KONG_CONCEALED: "暗杠 concealed kong",
}


def add_hand_arguments(parser: argparse.ArgumentParser, hand_required: bool) -> None:
    """--hand TILES, repeatable --pong/--kong/--added-kong/--concealed-kong T, and --win T."""
    group = parser.add_argument_group("hand")
    group.add_argument(
        "--hand",
        metavar="TILES",
        required=hand_required,
        help="concealed tiles, the winning tile included: 123345m66999p (or 123万345万66999筒); or the hand "
        "typed with its melds as the page takes it: '123345m66999p kong 2p win 6p'",
    )
    for option, what in (
        ("--pong", "a pong 碰"),
        ("--kong", "an exposed kong 明杠 (直杠)"),
        ("--added-kong", "an added kong 加杠 (面下杠)"),
        ("--concealed-kong", "a concealed kong 暗杠"),
    ):
        group.add_argument(
            option, metavar="T", action="append", default=[], help=f"{what} of tile T, e.g. 5p (repeatable)"
        )
    group.add_argument("--win", metavar="T", help="the winning tile (default: the last tile of --hand)")


def _add_preset_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--preset NAME``, one of ``PRESETS`` (default ``DEFAULT_PRESET``)."""
    parser.add_argument(
        "--preset",
        metavar="NAME",
        default=DEFAULT_PRESET,
        help=f"rules preset: {', '.join(PRESETS)} (default {DEFAULT_PRESET})",
    )


def add_context_arguments(parser: argparse.ArgumentParser) -> None:
    """How the hand was won (a flag per ``scoring.conditions.WIN_CONDITIONS``), the rules preset, --json."""
    group = parser.add_argument_group("win context and rules")
    for condition in WIN_CONDITIONS:
        group.add_argument(
            condition.flag, dest=condition.key, action="store_true", help=condition.describe("flag")
        )
    group.add_argument("--void-suit", choices=list(SUITS), help="定缺: the declared void suit (m, p or s)")
    _add_preset_argument(group)
    group.add_argument("--json", action="store_true", help="print JSON instead of a readable breakdown")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``waits`` and ``settle`` commands."""
    parser = subparsers.add_parser(
        "waits",
        help="list the tiles a hand one tile short waits on, with their best scores",
        description="List every tile that completes a hand of 13 tiles (+1 per kong), scored as a win on a "
        "discard unless the flags say otherwise.",
    )
    add_hand_arguments(parser, hand_required=True)
    add_context_arguments(parser)
    parser.set_defaults(func=run_waits)
    register_settle(subparsers)


def unscored_conditions(context: WinContext, rules: Rules) -> list[str]:
    """A note for each win condition given that scores nothing under ``rules`` (海底 under chengdu)."""
    return [
        f"注 Note: {condition.name_zh} {condition.name_en} scores nothing under {rules.name}"
        for condition in WIN_CONDITIONS
        if getattr(context, condition.key) and rules.scores_nothing(condition.key)
    ]


def run_score(args: argparse.Namespace) -> int:
    """``smj score --hand ...``: print the score; exit 0 scored, 1 not a win, 2 malformed input."""
    if not args.hand:
        return _fail("smj score: give the hand with --hand TILES (or a photo)")
    try:
        context, rules = context_from_args(args)
        hand = _hand(args)
    except (TileParseError, TypedHandError, UnknownPresetError) as problem:
        return _fail(f"smj score: {problem}")
    result = score(hand, context, rules)
    if args.json:
        _print_json(result.to_json())
    else:
        print(_describe_hand(hand))
        print(format_score(result, rules))
        for note in unscored_conditions(context, rules):
            print(note)
    if result.error is not None and result.error.code in IMPOSSIBLE:
        return _fail(f"smj score: impossible hand [{result.error.code.value}]: {result.error.message}")
    return 0 if result.valid else 1


def run_waits(args: argparse.Namespace) -> int:
    """``smj waits --hand ...``: exit 0 ready, 1 not ready, 2 malformed (or not a hand one tile short)."""
    if args.win:
        return _fail("smj waits: --win does not apply: the waits are the winning tiles")
    try:
        context, rules = context_from_args(args)
        hand = _hand(args)
    except (TileParseError, TypedHandError, UnknownPresetError) as problem:
        return _fail(f"smj waits: {problem}")
    found: tuple[Wait, ...] = ()
    error: ScoreError | None = None
    try:
        found = waits(hand.concealed, hand.melds, context, rules)
    except InvalidHandError as invalid:
        error = invalid.error
    if args.json:
        _print_json({**waits_to_json(found, rules), "error": error.to_json() if error is not None else None})
    else:
        print(_describe_hand(hand, waiting=True))
        blocked = never_wins(hand.concealed, hand.melds, context) if error is None and not found else None
        print(f"规则 Preset: {rules.name}")
        print(describe_waits(found, rules, error.message if error is not None else None, blocked))
    if error is not None:
        return _fail(f"smj waits: impossible hand [{error.code.value}]: {error.message}")
    return 0 if found else 1


def register_settle(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``settle`` command."""
    parser = subparsers.add_parser(
        "settle",
        help="settle a 血战到底 round: every payment and each player's total",
        description="Settle a round given as JSON (kongs, wins and the end, in order; the format is in "
        "scoring/settlement/__init__.py and examples/round.json): 刮风下雨, wins, 查花猪, 查叫 and 退税.",
    )
    parser.add_argument(
        "round",
        metavar="ROUND.json",
        nargs="?",
        help="the round as JSON ('-' reads standard input); or --table, a stored round",
    )
    _add_preset_argument(parser)
    parser.add_argument(
        "--base", metavar="N", default="1", help="the base stake (底): amounts are N x base units"
    )
    parser.add_argument("--json", action="store_true", help="print the ledger as JSON")
    parser.set_defaults(func=run_settle)


def run_settle(args: argparse.Namespace) -> int:
    """``smj settle ROUND.json``: print the ledger; exit 0 settled, 2 unreadable or impossible round."""
    if args.round is None:
        return _fail("smj settle: give the round as a JSON file ('-': standard input), or --table ID")
    source = "standard input" if args.round == "-" else args.round
    try:
        if args.round == "-":
            data = json.load(sys.stdin)
        else:
            with open(args.round, encoding="utf-8") as handle:
                data = json.load(handle)
    except OSError as problem:
        return _fail(f"smj settle: cannot read {source}: {problem.strerror or problem}")
    except (json.JSONDecodeError, UnicodeDecodeError) as problem:
        return _fail(f"smj settle: {source} is not JSON: {problem}")
    return settle_data(data, source, args.preset, args.base, args.json)


def settle_data(data: object, source: str, preset: str, base: str, as_json: bool) -> int:
    """Settle a decoded round (from ``source``, as told in messages) and print its ledger."""
    if not (base.isascii() and base.isdigit()) or int(base) < 1:
        return _fail(f"smj settle: --base must be a whole number >= 1, got {base!r}")
    try:
        rules = get_preset(preset)
    except UnknownPresetError as problem:
        return _fail(f"smj settle: {problem}")
    try:
        ledger = settle_round(parse_round(data), rules, int(base))
    except RoundError as problem:
        return _fail(f"smj settle: {source}: {problem}")
    if as_json:
        _print_json(ledger.to_json())
    else:
        print(format_ledger(ledger))
    return 0


def format_ledger(ledger: Ledger) -> str:
    """The payments one per line, then each player's total."""
    names = ledger.players
    width = max(_width(name) for name in names)
    lines = [f"结算 Settlement: preset {ledger.preset}, base {ledger.base}"]
    if not ledger.payments:
        lines.append("  no payments")
    for payment in ledger.payments:
        lines.append(
            f"  [{payment.event}] {_pad(names[payment.payer], width)} -> {_pad(names[payment.payee], width)} "
            f"{payment.amount:>6}  {payment.reason}"
        )
    lines.extend(f"  注 {note}" for note in ledger.notes)
    lines.append("合计 Totals:")
    lines.extend(
        f"  {_pad(name, width)} {total:+d}" for name, total in zip(names, ledger.totals, strict=True)
    )
    if not ledger.finished:
        lines.append("未完 The round has no end event: still in play")
    if ledger.next_dealer is not None:
        lines.append(f"下局庄家 Next dealer: {names[ledger.next_dealer]}")
    return "\n".join(lines)


def context_from_args(args: argparse.Namespace) -> tuple[WinContext, Rules]:
    """The win context and rules preset given by ``add_context_arguments``' options.

    Raises ``UnknownPresetError`` (a ``ValueError``) for an unknown ``--preset``.
    """
    return _context(args), get_preset(args.preset)


def format_score(result: Score, rules: Rules | None = None) -> str:
    """A readable breakdown of a score, in Chinese and English (rules default to the score's preset)."""
    if rules is None:
        rules = PRESETS.get(result.preset, CHENGDU)
    lines = [f"规则 Preset: {result.preset}"]
    if not result.valid:
        assert result.error is not None
        label = "牌不成立 Impossible hand" if result.error.code in IMPOSSIBLE else "不是胡牌 Not a win"
        lines.append(f"{label} [{result.error.code.value}]: {result.error.message}")
        return "\n".join(lines)
    assert result.raw_fan is not None and result.total_fan is not None
    unit = "分 points" if rules.numbering is Numbering.POINTS else "番 fan"
    lines.append("番种 Fans:")
    for item in result.fans:
        times = f" x{item.count}" if item.count > 1 else ""
        lines.append(f"  {_pad(item.name_zh, 10)}{item.name_en + times:<34}{item.fan:+d}")
    if result.combination is not None:
        lines.append(f"组合 Combination: {result.combination.name_zh} ({result.combination.name_en})")
    lines.append(f"原番 Raw: {result.raw_fan} {unit}")
    cap = f" (cap {rules.cap})" if rules.cap is not None else " (no cap)"
    lines.append(f"封顶 Capped: {result.total_fan} {unit}{cap}")
    lines.append(f"倍数 Multiplier: x{result.multiplier}")
    lines.append(f"支付 Payment: {_describe_payment(result, rules)}")
    lines.append(f"拆牌 Sets: {' '.join(result.decomposition)}")
    return "\n".join(lines)


def _describe_payment(result: Score, rules: Rules) -> str:
    """``自摸: each player still in pays 9 base (x8, 自摸加底 +1)`` or ``点炮: the discarder pays 8 base``."""
    assert result.payment is not None and result.multiplier is not None
    if result.payers is Payers.DISCARDER:
        return f"点炮 the discarder pays {result.payment} 底 base"
    if result.payers is Payers.ROBBED_KONGER:
        return f"抢杠 the konger robbed pays {result.payment} 底 base"
    bonus = rules.settlement.self_draw_bonus
    extra = {SelfDrawBonus.ADD_BASE: ", 自摸加底 +1", SelfDrawBonus.ADD_FAN: ", 自摸加番 +1 fan"}.get(
        bonus, ""
    )
    return f"自摸 each player still in pays {result.payment} 底 base (x{result.multiplier}{extra})"


def describe_waits(
    found: tuple[Wait, ...], rules: Rules, error: str | None = None, blocked: ScoreError | None = None
) -> str:
    """The waits as ``smj waits`` prints them (and ``smj score PHOTO`` for a hand one tile short)."""
    lines = []
    if error is not None:
        lines.append(f"不是听牌的手牌 Not a hand one tile short: {error}")
    elif blocked is not None:
        lines.append(f"没有叫 Not ready [{blocked.code.value}]: {blocked.message}")
    elif not found:
        lines.append("没有叫 Not ready: no tile completes this hand")
    else:
        lines.append(f"叫 Waits ({len(found)}):")
        for wait in found:
            result = wait.score
            name = f" {result.combination.name_zh}" if result.combination is not None else ""
            fans = " + ".join(f"{item.name_zh}{item.fan:+d}" for item in result.fans)
            lines.append(
                f"  {tile_name(wait.tile):<3} {_pad(tile_name_zh(wait.tile), 4)} {result.total_fan} "
                f"(raw {result.raw_fan}, x{result.multiplier}){name}: {fans}"
            )
    return "\n".join(lines)


def _pad(text: str, width: int) -> str:
    """Left-justify to a display width, counting CJK characters as two columns."""
    return text + " " * max(width - _width(text), 0)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _describe_hand(hand: Hand, waiting: bool = False) -> str:
    melds = "  ".join(f"{_MELD_NAMES[meld.kind]} {format_tiles(meld.tiles)}" for meld in hand.melds)
    text = f"手牌 Hand: {format_tiles(hand.concealed)}" + (f"  {melds}" if melds else "")
    if not waiting and hand.win_tile is not None:
        text += f"  胡 win {tile_name(hand.win_tile)}"
    return text


def _hand(args: argparse.Namespace) -> Hand:
    """The hand of ``--hand`` (typed, ``scoring.typed``) with the melds and winning tile of the options."""
    typed = parse_typed(args.hand)
    options = (
        (MeldKind.PONG, args.pong),
        (MeldKind.KONG_EXPOSED, args.kong),
        (MeldKind.KONG_ADDED, args.added_kong),
        (MeldKind.KONG_CONCEALED, args.concealed_kong),
    )
    melds = tuple(Meld(kind, parse_tile(text)) for kind, texts in options for text in texts)
    win = parse_tile(args.win) if args.win is not None else typed.win_tile
    hand = replace(typed, win_tile=win).hand()
    return replace(hand, melds=hand.melds + melds)


def _context(args: argparse.Namespace) -> WinContext:
    flags = {condition.key: bool(getattr(args, condition.key)) for condition in WIN_CONDITIONS}
    return WinContext(void_suit=args.void_suit, **flags)


def _print_json(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2))


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2
