"""The round JSON (see the ``scoring.settlement`` docstring) to ``Round`` and back.

``parse_round(data)`` reads a decoded JSON object strictly: a wrong type, a missing field, an unknown
field or a non-tile raises ``RoundError`` (code ``malformed``, ``typed_hand`` or ``unknown_player``) whose
``path`` names the place, e.g. ``events[2].tile``, and whose message names the player. A hand may be typed
as a player types it (``scoring.typed``: ``123456789m11p kong 5p``); the kongs its player declared
before it are joined where it leaves them out. It checks the shape only; ``validate_round`` checks the
rules.
``round_to_json(round)`` writes the canonical form (players by name), which ``parse_round`` reads back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from scoring.hand import Hand, Meld, MeldKind
from scoring.settlement.events import (
    DEFAULT_PLAYERS,
    WIN_FLAGS,
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
from scoring.settlement.validate import RoundError, RoundErrorCode
from scoring.tiles import SUITS, Tile, TileParseError, format_tiles, parse_tile, parse_tiles, tile_name
from scoring.typed import TypedHand, TypedHandError, parse_typed

__all__ = ["parse_round", "round_to_json"]

_KONG_KINDS = {kind.value: kind for kind in KongKind} | {kind.meld_kind.value: kind for kind in KongKind}
_MELD_KINDS = {kind.value: kind for kind in MeldKind} | {kind.value: kind.meld_kind for kind in KongKind}
_COMMENT = "comment"  # allowed on the round and on each event, and ignored


_T = TypeVar("_T")
Declared = dict[Seat, list[Meld]]  # the kongs each player declared so far, as their hands show them


def _malformed(path: str, message: str) -> RoundError:
    return RoundError(RoundErrorCode.MALFORMED, message, path=path)


def _object(
    value: object, path: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _malformed(path, f"expected an object, got {type(value).__name__}")
    unknown = sorted(set(map(str, value)) - set(allowed))
    if unknown:
        raise _malformed(path, f"unknown field {unknown[0]!r} (expected: {', '.join(allowed)})")
    for key in required:
        if key not in value:
            raise _malformed(path, f"missing field {key!r}")
    return dict(value)


def _typed(value: object, kind: type | tuple[type, ...], path: str, what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _malformed(path, f"expected {what}, got {value!r}")
    return value


def _tile(value: object, path: str) -> Tile:
    try:
        return parse_tile(_typed(value, str, path, "a tile such as '5p'"))
    except TileParseError as problem:
        raise _malformed(path, str(problem)) from None


def _tiles(value: object, path: str) -> tuple[Tile, ...]:
    try:
        return parse_tiles(_typed(value, str, path, "tiles such as '123m456p'"))
    except TileParseError as problem:
        raise _malformed(path, str(problem)) from None


class _Players:
    """Resolves a player given as a seat (0-3), a name, or a seat in a string (JSON object keys)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def seat(self, value: object, path: str) -> Seat:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 4:
            return value
        if isinstance(value, str):
            if value in self.names:
                return self.names.index(value)
            if value in ("0", "1", "2", "3"):
                return int(value)
        raise RoundError(
            RoundErrorCode.UNKNOWN_PLAYER,
            f"没有玩家 {value!r} / no player {value!r}: the players are {', '.join(self.names)} (or 0-3)",
            path=path,
        )


def parse_round(data: object) -> Round:
    """A ``Round`` from the decoded round JSON; raises ``RoundError`` for a malformed one."""
    top = _object(data, "round", ("players", "dealer", "void_suits", "events", _COMMENT), ("events",))
    names = tuple(_typed(top.get("players", list(DEFAULT_PLAYERS)), list, "players", "a list of 4 names"))
    for index, name in enumerate(names):
        _typed(name, str, f"players[{index}]", "a name")
    if len(names) != 4 or len(set(names)) != 4 or not all(name.strip() for name in names):
        raise _malformed("players", f"expected 4 different names, got {list(names)}")
    players = _Players(names)
    dealer = top.get("dealer")
    void_suits: dict[Seat, str] = {}
    for key, suit in _typed(top.get("void_suits", {}), dict, "void_suits", "an object of suits").items():
        seat = players.seat(key, f"void_suits.{key}")
        if suit not in tuple(SUITS) or seat in void_suits:
            raise _malformed(f"void_suits.{key}", f"expected one 'm', 'p' or 's' per player, got {suit!r}")
        void_suits[seat] = suit
    declared: Declared = {seat: [] for seat in range(4)}
    parsed = []
    for index, event in enumerate(_typed(top["events"], list, "events", "a list of events")):
        try:
            parsed.append(_event(event, f"events[{index}]", players, declared))
        except RoundError as error:
            error.event = index
            raise
        if isinstance(parsed[-1], Kong):
            declared[parsed[-1].player].append(Meld(parsed[-1].kind.meld_kind, parsed[-1].tile))
    return Round(
        events=tuple(parsed),
        players=names,
        dealer=None if dealer is None else players.seat(dealer, "dealer"),
        void_suits=void_suits,
    )


def _event(value: object, path: str, players: _Players, declared: Declared) -> Event:
    if not isinstance(value, Mapping):
        raise _malformed(path, f"expected an event object, got {type(value).__name__}")
    kind = value.get("type")
    if kind == "kong":
        return _kong(value, path, players)
    if kind == "win":
        return _win(value, path, players, declared)
    if kind == "end":
        return _end(value, path, players, declared)
    raise _malformed(f"{path}.type", f"expected 'kong', 'win' or 'end', got {kind!r}")


def _kong(value: object, path: str, players: _Players) -> Kong:
    fields = ("type", "player", "kind", "tile", "discarder", "immediate", _COMMENT)
    data = _object(value, path, fields, ("player", "kind", "tile"))
    kind = _KONG_KINDS.get(data["kind"]) if isinstance(data["kind"], str) else None
    if kind is None:
        raise _malformed(f"{path}.kind", f"expected 'direct', 'added' or 'concealed', got {data['kind']!r}")
    discarder = data.get("discarder")
    return Kong(
        player=players.seat(data["player"], f"{path}.player"),
        kind=kind,
        tile=_tile(data["tile"], f"{path}.tile"),
        discarder=None if discarder is None else players.seat(discarder, f"{path}.discarder"),
        immediate=_typed(data.get("immediate", True), bool, f"{path}.immediate", "true or false"),
    )


def _win(value: object, path: str, players: _Players, declared: Declared) -> Win:
    fields = ("type", "player", "hand", "fan", "winners", "discarder", "self_drawn", *WIN_FLAGS, _COMMENT)
    data = _object(value, path, fields)
    flags = {
        flag: _typed(data.get(flag, False), bool, f"{path}.{flag}", "true or false") for flag in WIN_FLAGS
    }
    if ("winners" in data) == ("player" in data):
        raise _malformed(path, "give the winner as 'player' (with 'hand' or 'fan'), or a list 'winners'")
    if "winners" in data:
        if "hand" in data or "fan" in data:
            raise _malformed(path, "with 'winners', give each winner's 'hand' or 'fan' inside the list")
        listed = _typed(data["winners"], list, f"{path}.winners", "a list of winners")
        winners = tuple(
            _winner(item, f"{path}.winners[{i}]", players, declared) for i, item in enumerate(listed)
        )
    else:
        given = {k: data[k] for k in ("player", "hand", "fan") if k in data}
        winners = (_winner(given, path, players, declared),)
    self_drawn = _typed(data.get("self_drawn", False), bool, f"{path}.self_drawn", "true or false")
    discarder = data.get("discarder")
    if self_drawn and discarder is not None:
        raise _malformed(path, "a self-drawn win has no discarder")
    if discarder is None and not (self_drawn or flags["gang_shang_hua"] or flags["tian_hu"]):
        raise _malformed(path, "give the 'discarder' of the winning tile, or 'self_drawn': true")
    return Win(
        winners=winners,
        discarder=None if discarder is None else players.seat(discarder, f"{path}.discarder"),
        **flags,
    )


def _winner(value: object, path: str, players: _Players, declared: Declared) -> Winner:
    data = _object(value, path, ("player", "hand", "fan"), ("player",))
    if ("hand" in data) == ("fan" in data):
        raise _malformed(path, "give the winning 'hand' or its 'fan' (one of them)")
    fan = data.get("fan")
    seat = players.seat(data["player"], f"{path}.player")
    return Winner(
        player=seat,
        hand=_hand(data["hand"], f"{path}.hand", players.names[seat], declared[seat])
        if "hand" in data
        else None,
        fan=None if fan is None else _typed(fan, int, f"{path}.fan", "a whole number of fan"),
    )


def _melds(value: object, path: str) -> tuple[Meld, ...]:
    melds = []
    for index, item in enumerate(_typed(value, list, path, "a list of melds")):
        data = _object(item, f"{path}[{index}]", ("type", "tile"), ("type", "tile"))
        kind = _MELD_KINDS.get(data["type"]) if isinstance(data["type"], str) else None
        if kind is None:
            raise _malformed(f"{path}[{index}].type", f"expected one of {', '.join(_MELD_KINDS)}")
        melds.append(Meld(kind, _tile(data["tile"], f"{path}[{index}].tile")))
    return tuple(melds)


def _from_typed(text: str, path: str, who: str, make: Callable[[TypedHand], _T]) -> _T:
    """What ``make`` makes of ``text`` typed (``scoring.typed``); an error names the player."""
    try:
        return make(parse_typed(text))
    except TypedHandError as error:
        raise RoundError(
            RoundErrorCode.TYPED_HAND, f"{who} 的手牌: {error.zh} / {who}'s hand: {error.en}", path=path
        ) from None


def _hand(value: object, path: str, who: str, declared: list[Meld]) -> Hand:
    """A winning hand: typed as text (``scoring.typed``, the kongs ``declared`` joined), or ``{concealed,
    melds, win_tile}``."""
    if isinstance(value, str):
        return _from_typed(value, path, who, lambda typed: typed.hand(declared))
    data = _object(value, path, ("concealed", "melds", "win_tile"), ("concealed",))
    concealed = _tiles(data["concealed"], f"{path}.concealed")
    win = data.get("win_tile")
    if win is None and not concealed:
        raise _malformed(f"{path}.concealed", "a winning hand has concealed tiles")
    win_tile = concealed[-1] if win is None else _tile(win, f"{path}.win_tile")
    return Hand(tuple(sorted(concealed)), _melds(data.get("melds", []), f"{path}.melds"), win_tile)


def _end(value: object, path: str, players: _Players, declared: Declared) -> End:
    data = _object(value, path, ("type", "reason", "hands", _COMMENT), ("reason",))
    reasons = {reason.value: reason for reason in EndReason}
    reason = reasons.get(data["reason"]) if isinstance(data["reason"], str) else None
    if reason is None:
        raise _malformed(
            f"{path}.reason", f"expected 'three_won' or 'wall_exhausted', got {data['reason']!r}"
        )
    hands: dict[Seat, FinalHand | FinalStatus] = {}
    for key, item in _typed(data.get("hands", {}), dict, f"{path}.hands", "an object of final hands").items():
        seat = players.seat(key, f"{path}.hands.{key}")
        if seat in hands:
            raise _malformed(f"{path}.hands.{key}", f"a second final hand for {players.names[seat]}")
        hands[seat] = _final(item, f"{path}.hands.{key}", players.names[seat], declared[seat])
    return End(reason, hands)


def _final(value: object, path: str, who: str, declared: list[Meld]) -> FinalHand | FinalStatus:
    """Final tiles (typed as text, the kongs ``declared`` joined, or ``{concealed, melds}``), or a declared
    ``{hua_zhu}`` / ``{ready, fan}``."""
    if isinstance(value, str):
        return FinalHand(*_from_typed(value, path, who, lambda typed: typed.final(declared)))
    if isinstance(value, Mapping) and "concealed" in value:
        data = _object(value, path, ("concealed", "melds"))
        return FinalHand(
            _tiles(data["concealed"], f"{path}.concealed"), _melds(data.get("melds", []), f"{path}.melds")
        )
    data = _object(value, path, ("hua_zhu", "ready", "fan"))
    hua_zhu = _typed(data.get("hua_zhu", False), bool, f"{path}.hua_zhu", "true or false")
    fan = data.get("fan")
    ready = _typed(data.get("ready", fan is not None), bool, f"{path}.ready", "true or false")
    if ready and fan is None:
        raise _malformed(path, "a ready hand needs the 'fan' 查叫 pays (or give its tiles as 'concealed')")
    if not ready and fan is not None:
        raise _malformed(path, "'fan' is for a ready hand: set 'ready': true")
    return FinalStatus(
        hua_zhu, None if fan is None else _typed(fan, int, f"{path}.fan", "a whole number of fan")
    )


# ---- writing


def round_to_json(round: Round) -> dict[str, Any]:
    """The canonical round JSON: players by name, only the fields that differ from their defaults."""
    data: dict[str, Any] = {"players": list(round.players)}
    if round.dealer is not None:
        data["dealer"] = round.name(round.dealer)
    if round.void_suits:
        data["void_suits"] = {round.name(seat): suit for seat, suit in sorted(round.void_suits.items())}
    data["events"] = [_event_json(event, round) for event in round.events]
    return data


def _event_json(event: Event, round: Round) -> dict[str, Any]:
    if isinstance(event, Kong):
        data: dict[str, Any] = {
            "type": "kong",
            "player": round.name(event.player),
            "kind": event.kind.value,
            "tile": tile_name(event.tile),
        }
        if event.discarder is not None:
            data["discarder"] = round.name(event.discarder)
        if not event.immediate:
            data["immediate"] = False
        return data
    if isinstance(event, Win):
        data = {"type": "win"}
        winners = [_winner_json(winner, round) for winner in event.winners]
        if len(winners) == 1:
            data.update(winners[0])
        else:
            data["winners"] = winners
        if event.discarder is None:
            data["self_drawn"] = True
        else:
            data["discarder"] = round.name(event.discarder)
        data.update({flag: True for flag in WIN_FLAGS if getattr(event, flag)})
        return data
    hands = {round.name(seat): _final_json(final) for seat, final in sorted(event.hands.items())}
    return {"type": "end", "reason": event.reason.value, **({"hands": hands} if hands else {})}


def _winner_json(winner: Winner, round: Round) -> dict[str, Any]:
    data: dict[str, Any] = {"player": round.name(winner.player)}
    if winner.hand is not None:
        data["hand"] = winner.hand.to_json()
    else:
        data["fan"] = winner.fan
    return data


def _final_json(final: FinalHand | FinalStatus) -> dict[str, Any]:
    if isinstance(final, FinalHand):
        return {"concealed": format_tiles(final.concealed), "melds": [meld.to_json() for meld in final.melds]}
    if final.hua_zhu:
        return {"hua_zhu": True}
    return {"ready": True, "fan": final.ready_fan} if final.ready_fan is not None else {"ready": False}
