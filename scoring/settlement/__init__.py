"""Settlement of a 血战到底 round: who pays whom, in base units (RULES.md, "Settlement").

    >>> from scoring.presets import get_preset
    >>> round = parse_round({"events": [
    ...     {"type": "win", "player": "A", "self_drawn": True, "fan": 3},
    ...     {"type": "win", "player": "B", "discarder": "C", "fan": 0},
    ...     {"type": "win", "player": "C", "self_drawn": True, "fan": 1},
    ...     {"type": "end", "reason": "three_won"}]})
    >>> settle_round(round, get_preset("xuezhan_3cap"), base=200).totals
    (4800, -1400, -1400, -2000)

Flow: round JSON --``parse_round``--> ``Round`` (frozen events) --``settle_round(round, rules, base)``-->
``Ledger`` (payments, totals; ``to_json()``). ``validate_round`` raises ``RoundError`` (``code``,
``message``, ``event``) for a malformed or impossible round; ``settle_round`` calls it first.

Round JSON
----------
::

    {
      "players": ["A", "B", "C", "D"],        // optional: 4 names for seats 0-3 in turn order (default A-D)
      "dealer": "A",                          // optional: 庄家 (for 天胡 / 地胡, and next_dealer at 连庄)
      "void_suits": {"A": "s", "B": "m"},     // optional: 定缺, checked when the preset plays 定缺
      "events": [ ...in the order they happened... ]
    }

A player is a seat (0-3) or a name; object keys may be either ("0" or "A"). Tiles are ``5p``-style text
(``5筒``, ``p5`` too). Every object is read strictly: an unknown field is an error; each event (and the
round) may carry a ``"comment"``, which is ignored. Events:

``{"type": "kong", "player": P, "kind": "direct" | "added" | "concealed", "tile": "5p"}``
    刮风下雨. A direct kong (直杠) names its ``"discarder"``; an added kong (面下杠) may say
    ``"immediate": false`` when the fourth tile was not added right after drawing it (pays nothing under
    ``added_kong_immediate_only``). ``kong_exposed`` / ``kong_added`` / ``kong_concealed`` are accepted too.

``{"type": "win", "player": P, "discarder": Q | "self_drawn": true, "hand": HAND | "fan": N, flags...}``
    A win on Q's discard, or self-drawn. Several winners on one discard (一炮多响):
    ``"winners": [{"player": P, "hand": HAND | "fan": N}, ...]`` with the ``"discarder"``.
    HAND is ``{"concealed": "123m456p...", "melds": [{"type": "pong" | "kong_exposed" | "kong_added" |
    "kong_concealed", "tile": "5p"}], "win_tile": "6p"}`` (``Hand.to_json()``; the winning tile is among the
    concealed ones and defaults to the last; a plain string is the concealed tiles), scored under the
    preset; ``fan`` is the hand's fan already scored (bonus fans included; the preset's cap applies).
    Flags (true/false, default false): ``qiang_gang`` (抢杠: the discarder is the robbed konger; a robbed
    added kong, if recorded, is the event just before and becomes void), ``gang_shang_pao`` (right after
    the discarder's kong), ``gang_shang_hua`` (right after the winner's kong; implies self-drawn),
    ``hai_di``, ``tian_hu``, ``di_hu``.

``{"type": "end", "reason": "three_won" | "wall_exhausted", "hands": {P: FINAL, ...}}``
    The last event. At ``wall_exhausted`` (流局) every player still in has a FINAL: their tiles
    ``{"concealed": "...", "melds": [...]}`` (13 + one per kong; 花猪, ready and the best or smallest wait
    are computed), or a declared standing ``{"hua_zhu": true}``, ``{"ready": true, "fan": N}``,
    ``{"ready": false}``. Without an end event the round is still in play (``Ledger.finished`` is false).

Ledger JSON (``Ledger.to_json()``)
----------------------------------
::

    {"preset": "chengdu", "base": 1, "players": ["A", "B", "C", "D"], "finished": true, "next_dealer": 0,
     "payments": [{"payer": 2, "payee": 0, "amount": 2, "reason": "刮风 直杠 5p", "kind": "kong",
                   "event": 0}, ...],
     "totals": [6, -1, -4, -1], "notes": []}

``payer`` / ``payee`` / ``next_dealer`` are seats (index ``players``); ``amount`` is base units times
``base``; ``kind`` is a ``PaymentKind``; ``event`` the index of the event that caused the payment. The
totals sum to zero.
"""

from scoring.settlement.events import (
    End,
    EndReason,
    Event,
    FinalHand,
    FinalStatus,
    Kong,
    KongKind,
    Round,
    Seat,
    Win,
    Winner,
)
from scoring.settlement.ledger import Ledger, Payment, PaymentKind
from scoring.settlement.parse import parse_round, round_to_json
from scoring.settlement.settle import settle_round
from scoring.settlement.validate import (
    MAX_AMOUNT,
    MAX_FAN,
    CheckedRound,
    RoundError,
    RoundErrorCode,
    validate_round,
)

__all__ = [
    "MAX_AMOUNT",
    "MAX_FAN",
    "CheckedRound",
    "End",
    "EndReason",
    "Event",
    "FinalHand",
    "FinalStatus",
    "Kong",
    "KongKind",
    "Ledger",
    "Payment",
    "PaymentKind",
    "Round",
    "RoundError",
    "RoundErrorCode",
    "Seat",
    "Win",
    "Winner",
    "parse_round",
    "round_to_json",
    "settle_round",
    "validate_round",
]
