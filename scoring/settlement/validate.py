"""Is a round possible under the rules? Replays it and raises ``RoundError`` (a code and a one-line message)
at the first problem, or returns the facts settlement pays on (``CheckedRound``).

Checked: the table (four named players, dealer, 定缺 suits); the order of events (nothing after the end
or after the last allowed winner; 杠上花 / 杠上炮 / 抢杠 right after their kong; 天胡 first, 地胡 before any
kong; nothing but the end after 海底); 天胡 won by the named dealer and 地胡 not; nobody acting after
winning; each kong's discarder; every winner's hand a legal win (or a fan given instead); the kongs a
given hand shows are exactly the kongs its player declared; at most four copies of a tile across hands
and kongs; the end matching the wins, with a final hand (or a declared standing) for each player still
in at 流局.

Not checkable from these events (no draws or discards are recorded): 过水不胡 and 最后四张必胡.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from scoring.errors import ErrorCode, InvalidHandError, SmjError
from scoring.hand import Meld, MeldKind
from scoring.result import Score
from scoring.rules import Rules
from scoring.settlement.events import (
    SEATS,
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
from scoring.settlement.hands import Standing, WinFan, final_standing, winner_fan
from scoring.tiles import SUITS, Tile, tile_name

__all__ = ["MAX_AMOUNT", "MAX_FAN", "CheckedRound", "RoundError", "RoundErrorCode", "validate_round"]

MAX_FAN = 36
"""The most fan a given ``fan`` may claim. No hand of any preset reaches half of it (QQ's uncapped
清龙七对 with every root and bonus is about a dozen); beyond it a doubling preset's amounts have thousands
of digits and take seconds to compute."""
MAX_AMOUNT = 2**53 - 1
"""The largest payment or total settled: the largest integer every JSON reader keeps exact."""


class RoundErrorCode(StrEnum):
    """Machine-readable reason a round cannot be settled."""

    MALFORMED = "malformed"  # not the round format: a wrong type, a missing or unknown field, a non-tile
    TYPED_HAND = "typed_hand"  # a hand typed as text (``scoring.typed``) that is not tiles and meld words
    UNKNOWN_PLAYER = "unknown_player"  # a seat outside 0-3 or a name not at the table
    OUT_OF_ORDER = "out_of_order"  # an event where it cannot happen
    ALREADY_WON = "already_won"  # a player acting (or holding a final hand) after winning
    BAD_KONG = "bad_kong"  # a direct kong without its discarder, a discarder for another kong, ...
    BAD_WIN = "bad_win"  # no winner, a winner twice, the discarder winning, flags that exclude each other
    TOO_MANY_WINNERS = "too_many_winners"  # more winners than the round allows (3)
    INVALID_HAND = "invalid_hand"  # a winning hand that is not a win, a final hand of the wrong size
    KONG_NOT_HELD = "kong_not_held"  # a hand's kongs differ from the kongs its player declared
    TOO_MANY_COPIES = "too_many_copies"  # a fifth copy of a tile across hands and kongs
    BAD_END = "bad_end"  # the end contradicts the wins, or a final hand is missing
    FAN_TOO_LARGE = "fan_too_large"  # a given fan above MAX_FAN
    AMOUNT_TOO_LARGE = "amount_too_large"  # a payment or total above MAX_AMOUNT (a huge base)


def _too_many_fan(who: str, fan: int, what: str = "") -> str:
    return f"{who}'s {what}fan {fan:,} is more than the {MAX_FAN} fan any hand can have"


class RoundError(SmjError):
    """A round that is malformed or impossible. ``event`` is the index of the offending event, if any."""

    def __init__(
        self, code: RoundErrorCode, message: str, event: int | None = None, path: str | None = None
    ) -> None:
        super().__init__(message, code)
        self.code: RoundErrorCode = code
        self.event = event
        self.path = path

    @property
    def told(self) -> str:
        """The message with the event and the place in the round JSON (for a round sent as JSON)."""
        where = f"event {self.event}: " if self.event is not None else ""
        path = f"{self.path}: " if self.path else ""
        return f"{where}{path}{self.message}"

    def __str__(self) -> str:
        where = f"event {self.event}: " if self.event is not None else ""
        path = f"{self.path}: " if self.path else ""
        return f"{where}{path}{self.message} [{self.code.value}]"

    def to_json(self) -> dict[str, object]:
        return {"code": self.code.value, "message": self.message, "event": self.event, "path": self.path}


@dataclass(frozen=True)
class CheckedRound:
    """What settlement needs beyond the events: each winner's fan (by event index and seat), each
    remaining player's standing at 流局, and the indices of kongs voided by 抢杠."""

    round: Round
    fans: Mapping[tuple[int, Seat], WinFan]
    standings: Mapping[Seat, Standing]
    robbed: frozenset[int]


def validate_round(round: Round, rules: Rules) -> CheckedRound:
    """Replay ``round`` under ``rules``; raise ``RoundError`` at the first problem."""
    _check_table(round)
    replay = _Replay(round, rules)
    for index, event in enumerate(round.events):
        replay.check(index, event)
    replay.check_copies()
    return CheckedRound(
        round,
        MappingProxyType(replay.fans),
        MappingProxyType(replay.standings),
        frozenset(replay.robbed),
    )


def _check_table(round: Round) -> None:
    names = round.players
    if len(names) != 4 or not all(isinstance(name, str) and name.strip() for name in names):
        raise RoundError(RoundErrorCode.MALFORMED, f"a round has 4 players with names, got {list(names)}")
    if len(set(names)) != 4:
        raise RoundError(RoundErrorCode.MALFORMED, f"player names must differ, got {list(names)}")
    if round.dealer is not None:
        _seat(round.dealer, "dealer")
    for seat, suit in round.void_suits.items():
        _seat(seat, "a void suit's player")
        if suit not in SUITS:
            raise RoundError(RoundErrorCode.MALFORMED, f"void suit must be m, p or s, got {suit!r}")


def _seat(seat: object, what: str, event: int | None = None) -> Seat:
    if type(seat) is not int or seat not in SEATS:
        raise RoundError(RoundErrorCode.UNKNOWN_PLAYER, f"{what} must be a seat 0-3, got {seat!r}", event)
    return seat


class _Replay:
    """The state of a round being replayed: who has won, who konged what, the hands seen so far."""

    def __init__(self, round: Round, rules: Rules) -> None:
        self.round = round
        self.rules = rules
        self.won: dict[Seat, int] = {}  # seat -> index of the win
        self.kongs: dict[Seat, list[Kong]] = {seat: [] for seat in SEATS}  # robbed kongs excluded
        self.robbed: set[int] = set()
        self.ended = False
        self.tiles: dict[Seat, list[Tile]] = {}  # every tile of a hand given, minus shared winning tiles
        self.fans: dict[tuple[int, Seat], WinFan] = {}
        self.standings: dict[Seat, Standing] = {}

    def name(self, seat: Seat) -> str:
        return self.round.name(seat)

    def check(self, index: int, event: Event) -> None:
        if self.ended:
            raise RoundError(RoundErrorCode.OUT_OF_ORDER, "an event after the end of the round", index)
        previous = self.round.events[index - 1] if index else None
        if isinstance(previous, Win) and previous.hai_di and not isinstance(event, End):
            raise RoundError(
                RoundErrorCode.OUT_OF_ORDER, "海底 took the last tile: only the end can follow", index
            )
        if len(self.won) >= self.rules.settlement.max_winners and not isinstance(event, End):
            raise RoundError(
                RoundErrorCode.OUT_OF_ORDER, f"{len(self.won)} players have won: the round is over", index
            )
        if isinstance(event, Kong):
            self.kong(index, event)
        elif isinstance(event, Win):
            self.win(index, event, previous)
        elif isinstance(event, End):
            self.end(index, event)
        else:
            raise RoundError(RoundErrorCode.MALFORMED, f"not an event: {event!r}", index)

    def still_in(self, seat: object, what: str, index: int) -> Seat:
        seat = _seat(seat, what, index)
        if seat in self.won:
            raise RoundError(
                RoundErrorCode.ALREADY_WON,
                f"{what} {self.name(seat)} already won (event {self.won[seat]}) and is out of the round",
                index,
            )
        return seat

    def kong(self, index: int, kong: Kong) -> None:
        player = self.still_in(kong.player, "the konger", index)
        tile = tile_name(kong.tile)
        if kong.kind is KongKind.DIRECT:
            if kong.discarder is None:
                raise RoundError(
                    RoundErrorCode.BAD_KONG, f"直杠 {tile} needs the discarder who fed it", index
                )
            if self.still_in(kong.discarder, "the kong's discarder", index) == player:
                raise RoundError(RoundErrorCode.BAD_KONG, f"直杠 {tile}: the discarder is the konger", index)
        elif kong.discarder is not None:
            raise RoundError(
                RoundErrorCode.BAD_KONG,
                f"{kong.kind.name_zh} {tile} is made from one's own tiles: no discarder",
                index,
            )
        if not kong.immediate and kong.kind is not KongKind.ADDED:
            raise RoundError(
                RoundErrorCode.BAD_KONG, "'immediate' applies to an added kong (面下杠) only", index
            )
        for seat, kongs in self.kongs.items():
            if any(other.tile == kong.tile for other in kongs):
                raise RoundError(
                    RoundErrorCode.TOO_MANY_COPIES, f"{tile} was already konged by {self.name(seat)}", index
                )
        self.kongs[player].append(kong)

    def win(self, index: int, win: Win, previous: Event | None) -> None:
        if not win.winners:
            raise RoundError(RoundErrorCode.BAD_WIN, "a win needs a winner", index)
        players = [self.still_in(winner.player, "the winner", index) for winner in win.winners]
        if len(set(players)) != len(players):
            raise RoundError(RoundErrorCode.BAD_WIN, "a player is listed twice among the winners", index)
        if win.discarder is None:
            if len(players) > 1:
                raise RoundError(
                    RoundErrorCode.BAD_WIN,
                    "a self-drawn win has one winner (一炮多响 needs a discarder)",
                    index,
                )
        elif self.still_in(win.discarder, "the discarder", index) in players:
            raise RoundError(RoundErrorCode.BAD_WIN, "the discarder cannot win on their own tile", index)
        if len(self.won) + len(players) > self.rules.settlement.max_winners:
            raise RoundError(
                RoundErrorCode.TOO_MANY_WINNERS,
                f"{len(self.won)} players have won; {len(players)} more is more than "
                f"{self.rules.settlement.max_winners}",
                index,
            )
        self.check_flags(index, win, previous)
        for winner in win.winners:
            self.winner(index, win, winner)
        self.check_shared_tile(index, win)
        for player in players:
            self.won[player] = index

    def check_flags(self, index: int, win: Win, previous: Event | None) -> None:
        if win.qiang_gang + win.gang_shang_pao + win.gang_shang_hua > 1:
            raise RoundError(
                RoundErrorCode.BAD_WIN, "抢杠, 杠上炮 and 杠上花 exclude each other: set one at most", index
            )
        if win.tian_hu and win.di_hu:
            raise RoundError(RoundErrorCode.BAD_WIN, "天胡 and 地胡 exclude each other", index)
        if (win.gang_shang_hua or win.tian_hu) and not win.self_drawn:
            raise RoundError(RoundErrorCode.BAD_WIN, "杠上花 and 天胡 are self-drawn: no discarder", index)
        if (win.qiang_gang or win.gang_shang_pao) and win.self_drawn:
            raise RoundError(
                RoundErrorCode.BAD_WIN, "抢杠 and 杠上炮 are won on another player's tile", index
            )
        if win.tian_hu and index:
            raise RoundError(RoundErrorCode.OUT_OF_ORDER, "天胡 must be the first event", index)
        dealer = self.round.dealer
        if dealer is not None:
            players = [winner.player for winner in win.winners]
            if win.tian_hu and players != [dealer]:
                raise RoundError(RoundErrorCode.BAD_WIN, "天胡 is the dealer's win alone", index)
            if win.di_hu and dealer in players:
                raise RoundError(
                    RoundErrorCode.BAD_WIN,
                    f"地胡 is a non-dealer's win: {self.round.name(dealer)} is the dealer",
                    index,
                )
        if win.di_hu and any(isinstance(e, Kong) for e in self.round.events[:index]):
            raise RoundError(
                RoundErrorCode.OUT_OF_ORDER, "地胡 comes in the first go-round, before any kong", index
            )
        kong = previous if isinstance(previous, Kong) else None
        if win.gang_shang_hua and (kong is None or kong.player != win.winners[0].player):
            raise RoundError(
                RoundErrorCode.OUT_OF_ORDER, "杠上花 must come right after the winner's kong", index
            )
        if win.gang_shang_pao and (kong is None or kong.player != win.discarder):
            raise RoundError(
                RoundErrorCode.OUT_OF_ORDER, "杠上炮 must come right after the discarder's kong", index
            )
        if win.qiang_gang and kong is not None and kong.player == win.discarder:
            if kong.kind is not KongKind.ADDED:
                raise RoundError(
                    RoundErrorCode.BAD_WIN,
                    f"抢杠 robs an added kong (面下杠), not a {kong.kind.name_zh}",
                    index,
                )
            for winner in win.winners:
                if winner.hand is not None and winner.hand.win_tile != kong.tile:
                    raise RoundError(
                        RoundErrorCode.BAD_WIN,
                        f"抢杠: {self.name(winner.player)} must win on the robbed {tile_name(kong.tile)}",
                        index,
                    )
            self.robbed.add(index - 1)
            self.kongs[kong.player].remove(kong)

    def winner(self, index: int, win: Win, winner: Winner) -> None:
        who = self.name(winner.player)
        if (winner.hand is None) == (winner.fan is None):
            raise RoundError(
                RoundErrorCode.BAD_WIN, f"give {who}'s winning hand or its fan (one of them)", index
            )
        if winner.fan is not None and (type(winner.fan) is not int or winner.fan < 0):
            raise RoundError(RoundErrorCode.BAD_WIN, f"{who}'s fan must be a whole number >= 0", index)
        if winner.fan is not None and winner.fan > MAX_FAN:
            raise RoundError(RoundErrorCode.FAN_TOO_LARGE, _too_many_fan(who, winner.fan), index)
        result = winner_fan(self.round, win, winner, self.rules)
        if isinstance(result, Score):
            assert result.error is not None
            raise RoundError(
                RoundErrorCode.INVALID_HAND,
                f"{who} 的手牌不是和牌, {_WHY_ZH[result.error.code]} / {who}'s hand is not a win "
                f"({result.error.code.value}): {result.error.message}",
                index,
            )
        if winner.hand is not None:
            self.check_kongs(index, winner.player, winner.hand.melds)
            self.tiles[winner.player] = list(winner.hand.all_tiles)
        self.fans[(index, winner.player)] = result

    def check_shared_tile(self, index: int, win: Win) -> None:
        """一炮多响: the winners won on one tile; it is counted once, in the first hand given."""
        if win.self_drawn:
            return
        shared = [
            (winner.player, winner.hand.win_tile)
            for winner in win.winners
            if winner.hand is not None and winner.hand.win_tile is not None
        ]
        tiles = sorted({tile for _, tile in shared})
        if len(tiles) > 1:
            names = ", ".join(tile_name(tile) for tile in tiles)
            raise RoundError(RoundErrorCode.BAD_WIN, f"一炮多响 is won on one discard, not on {names}", index)
        for player, tile in shared[1:]:
            self.tiles[player].remove(tile)

    def check_kongs(self, index: int, seat: Seat, melds: tuple[Meld, ...]) -> None:
        """The kongs a hand shows must be the kongs its player declared (kind and tile)."""
        shown = Counter((meld.kind, meld.tile) for meld in melds if meld.kind.is_kong)
        declared = Counter((kong.kind.meld_kind, kong.tile) for kong in self.kongs[seat])
        if shown == declared:
            return
        missing = declared - shown
        extra = shown - declared
        who = self.name(seat)
        problem = (
            f"{who} 报了 {_kong_names(missing)}, 手牌里却没有 / {who} declared {_kong_names(missing)} but "
            "the hand does not show it"
            if missing
            else f"{who} 的手牌有 {_kong_names(extra)}, 却没报过这个杠 / {who}'s hand shows "
            f"{_kong_names(extra)} that no kong event declared"
        )
        raise RoundError(RoundErrorCode.KONG_NOT_HELD, problem, index)

    def end(self, index: int, end: End) -> None:
        self.ended = True
        max_winners = self.rules.settlement.max_winners
        if end.reason is EndReason.THREE_WON:
            if len(self.won) != max_winners:
                raise RoundError(
                    RoundErrorCode.BAD_END,
                    f"{end.reason.value} but {len(self.won)} of {max_winners} have won",
                    index,
                )
            if end.hands:
                raise RoundError(
                    RoundErrorCode.BAD_END, "final hands are only read when the wall ran out", index
                )
            return
        if len(self.won) >= max_winners:
            raise RoundError(
                RoundErrorCode.BAD_END, f"{max_winners} players have won: the end is three_won", index
            )
        for seat in end.hands:
            self.still_in(seat, "the final hand's player", index)
        for seat in (seat for seat in SEATS if seat not in self.won):
            final = end.hands.get(seat)
            if final is None:
                raise RoundError(
                    RoundErrorCode.BAD_END,
                    f"the wall ran out: give the final hand of {self.name(seat)} (still in) for 查叫",
                    index,
                )
            self.standings[seat] = self.standing(index, seat, final)

    def standing(self, index: int, seat: Seat, final: FinalHand | FinalStatus) -> Standing:
        who = self.name(seat)
        if isinstance(final, FinalStatus):
            fan = final.ready_fan
            if fan is not None and (type(fan) is not int or fan < 0):
                raise RoundError(
                    RoundErrorCode.BAD_END, f"{who}'s ready fan must be a whole number >= 0", index
                )
            if fan is not None and fan > MAX_FAN:
                raise RoundError(RoundErrorCode.FAN_TOO_LARGE, _too_many_fan(who, fan, "ready "), index)
            if final.hua_zhu and fan is not None:
                raise RoundError(
                    RoundErrorCode.BAD_END, f"{who} is a 花猪 (three suits) and cannot be ready", index
                )
        else:
            self.check_kongs(index, seat, final.melds)
            self.tiles[seat] = list(final.all_tiles)
        try:
            return final_standing(final, self.round.void_suits.get(seat), self.rules)
        except InvalidHandError as invalid:
            raise RoundError(
                RoundErrorCode.INVALID_HAND,
                f"{who} 流局的手牌{_WHY_ZH[invalid.error.code]} / {who}'s final hand "
                f"({invalid.error.code.value}): {invalid.error.message}",
                index,
            ) from None

    def check_copies(self) -> None:
        """At most four of a tile across the hands given, and the kongs (or robbed pongs) of the others."""
        counts: Counter[Tile] = Counter()
        for seat in SEATS:
            if seat in self.tiles:
                counts.update(self.tiles[seat])
            else:
                counts.update(tile for kong in self.kongs[seat] for tile in (kong.tile,) * 4)
        for index in self.robbed:
            robbed = self.round.events[index]
            assert isinstance(robbed, Kong)
            if robbed.player not in self.tiles:
                counts.update((robbed.tile,) * 3)  # the pong the robbed tile was added to
        for tile, count in counts.items():
            if count > 4:
                raise RoundError(
                    RoundErrorCode.TOO_MANY_COPIES,
                    f"手牌和杠里有 {count} 张 {tile_name(tile)}, 一种牌只有 4 张 / {count} copies of "
                    f"{tile_name(tile)} across the hands and kongs; there are 4",
                )


_WHY_ZH = {
    ErrorCode.WRONG_TILE_COUNT: "张数不对 (和牌 14 张, 每个杠多 1 张; 流局 13 张)",
    ErrorCode.TOO_MANY_COPIES: "有第五张",
    ErrorCode.THREE_SUITS: "有三门牌 (要缺一门)",
    ErrorCode.VOID_SUIT_PRESENT: "有定缺的那门牌",
    ErrorCode.WIN_TILE_NOT_IN_HAND: "和的牌不在手牌里",
    ErrorCode.NOT_A_WINNING_SHAPE: "不成和牌 (四组加一对, 或七对)",
    ErrorCode.CONTRADICTORY_CONTEXT: "和法互相矛盾",
    ErrorCode.TOO_FEW_FAN: "番数不够起胡",
}
"""Why a hand is no win, in Chinese (``scoring.errors.ErrorCode``; the English is the error's message)."""


def _kong_names(kongs: Counter[tuple[MeldKind, Tile]]) -> str:
    names = {MeldKind.KONG_EXPOSED: "直杠", MeldKind.KONG_ADDED: "面下杠", MeldKind.KONG_CONCEALED: "暗杠"}
    return ", ".join(f"{names[kind]} {tile_name(tile)}" for kind, tile in sorted(kongs.elements()))
