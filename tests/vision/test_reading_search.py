"""The search for a winning reading (``vision.grouping.search``): edits of the first reading (a tile
re-read, an unsure tile taken back, a least-sure tile left out), cheapest first, under one budget and
the request's rules."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from detection_builders import TILE_H, lay_hand, lay_row, make_detections

from api.fakes import OneStep
from scoring import CHENGDU, WinContext
from scoring.hand import Hand
from scoring.tiles import CLASS_NAMES, parse_tiles
from vision import pipeline
from vision.detect.view import Located
from vision.detections import BACK, HONOUR, Detections
from vision.grouping.grouper import WarningCode, group_detections
from vision.grouping.result import Grouping, warning_name
from vision.grouping.search import SEARCH, EditKind, SearchConfig, Searched, search
from vision.images import Photo

THRESHOLD = 0.55
WIN = "123m456m789m234p5p 5p"  # 14 tiles, the last set apart

Readings = dict[int, tuple[str, float]]  # detection index -> (tile, confidence)


def _with_alternatives(dets: Detections, seconds: Readings, thirds: Readings | None = None) -> Detections:
    """Give each box two other readings: the tiles named in ``seconds`` and ``thirds``, else the next
    tiles of its suit at low confidences."""
    others = np.array([[(c + 1) % 27, (c + 2) % 27] for c in map(int, dets.class_ids)], np.int64)
    confidences = np.tile(np.array([0.01, 0.005], np.float32), (len(dets), 1))
    for rank, chosen in enumerate((seconds, thirds or {})):
        for index, (tile, confidence) in chosen.items():
            others[index, rank] = CLASS_NAMES.index(tile)
            confidences[index, rank] = confidence
    return replace(dets, alternatives=others, alternative_confidences=confidences)


def _split(dets: Detections, unsure_at: dict[int, float]) -> tuple[Detections, Detections]:
    """(kept, unsure): the boxes of ``unsure_at`` given those confidences and moved to ``unsure``."""
    mask = np.zeros(len(dets), bool)
    mask[list(unsure_at)] = True
    confidences = dets.confidences.copy()
    confidences[list(unsure_at)] = list(unsure_at.values())
    lowered = Detections(dets.boxes, dets.class_ids, confidences, dets.image_size)
    return lowered[~mask], lowered[mask]


def _whole() -> Detections:
    # room below the row for a stray tile
    dets = make_detections(lay_row(WIN, gap=1.0))
    return Detections(dets.boxes, dets.class_ids, dets.confidences, (dets.image_size[0], 1000))


def _search(dets: Detections, unsure: Detections | None = None, **options: object) -> Searched:
    return search(dets, unsure, threshold=THRESHOLD, **options)  # type: ignore[arg-type]


def _warning(grouping: Grouping, code: WarningCode):  # type: ignore[no-untyped-def]
    return next(w for w in grouping.warnings if w.code is code)


def _kept_as_read(found: Searched, dets: Detections) -> bool:
    """The first reading kept: the detections as given, grouped as the grouper groups them."""
    return found.detections is dets and found.edits == () and found.grouping == group_detections(dets)


# --- the table: each kind of edit, none, and none within the budget ---------------------------------


def _misread() -> tuple[Detections, None]:
    # the 5m (index 4) read 6m with 5m a close second
    return _with_alternatives(
        make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0)), {4: ("m5", 0.6)}
    ), None


def _one_short() -> tuple[Detections, Detections]:
    return _split(_whole(), {4: 0.4})  # the 5m found at 0.4 only


def _one_over() -> tuple[Detections, None]:
    # a 6p in line with the row (a discard, or a second box): 15 tiles
    confidences = [0.9] * 13 + [0.5, 0.9]
    return make_detections(lay_row("123m456m789m234p5p6p 5p", gap=1.0, confidence=confidences)), None


def _already_a_win() -> tuple[Detections, None]:
    return _with_alternatives(make_detections(lay_row(WIN, gap=1.0)), {4: ("m6", 0.8)}), None


def _hopeless() -> tuple[Detections, None]:
    # 6m and 9m misread, but their runners-up far too unlikely: no edit within reach makes a win
    dets = make_detections(lay_row("123m466m799m234p5p 5p", gap=1.0))
    return _with_alternatives(dets, {4: ("m5", 0.01), 8: ("m8", 0.01)}), None


@pytest.mark.parametrize(
    ("case", "edits", "code"),
    [
        (_misread, [EditKind.REREAD], WarningCode.REREAD_TILE),
        (_one_short, [EditKind.TAKE_BACK], WarningCode.UNSURE_TILE),
        (_one_over, [EditKind.LEAVE_OUT], WarningCode.LEFT_OUT_TILE),
        (_already_a_win, [], None),
        (_hopeless, [], None),
    ],
)
def test_the_reading_that_needs_an_edit_gets_the_cheapest_one(case, edits, code) -> None:  # type: ignore[no-untyped-def]
    dets, unsure = case()
    found = _search(dets, unsure)
    assert [edit.kind for edit in found.edits] == edits
    assert found.won == (case is not _hopeless)
    if code is None:  # the first reading kept, with its warnings
        assert _kept_as_read(found, dets)
        return
    assert found.grouping.hand is not None and WarningCode.TILE_COUNT not in found.grouping.codes
    truth = group_detections(make_detections(lay_row(WIN, gap=1.0))).hand
    assert truth is not None and sorted(found.grouping.hand.concealed) == sorted(truth.concealed)
    assert code in found.grouping.codes


def test_a_reading_beyond_the_budget_keeps_the_first_reading_and_its_warnings() -> None:
    # two tiles short, six unsure candidates of which only the two least confident make the win: their
    # set is the last of the 15 pairs, beyond a budget of 4 groupings
    whole = _whole()
    kept, unsure = _split(whole, {4: 0.25, 8: 0.22})
    strays = make_detections(
        lay_row("1s2s3s4s", origin=(0.0, 10 * TILE_H), gap=3.0, confidence=[0.5, 0.48, 0.46, 0.44])
    )
    unsure = unsure.joined(Detections(strays.boxes, strays.class_ids, strays.confidences, unsure.image_size))
    first = group_detections(kept)
    tight = _search(kept, unsure, config=replace(SEARCH, max_groupings=4))
    assert tight.groupings <= 4 and _kept_as_read(tight, kept)
    assert tight.grouping.codes == first.codes and WarningCode.TILE_COUNT in first.codes
    roomy = _search(kept, unsure)
    assert roomy.groupings <= SEARCH.max_groupings
    assert sorted(_warning(roomy.grouping, WarningCode.UNSURE_TILE).tiles) == ["5m", "9m"]


def test_the_search_never_spends_more_groupings_than_its_budget() -> None:
    # nothing makes a win: every candidate is tried until the budget is spent
    dets = make_detections(lay_row("123m466m799m234p6p 1s", gap=1.0))
    seconds = {i: (CLASS_NAMES[(int(c) + 3) % 27], 0.5) for i, c in enumerate(dets.class_ids)}
    dets = _with_alternatives(
        dets, seconds, {i: (CLASS_NAMES[(int(c) + 5) % 27], 0.4) for i, c in enumerate(dets.class_ids)}
    )
    for budget in (1, 5, 24):
        found = _search(dets, config=replace(SEARCH, max_groupings=budget))
        assert 1 <= found.groupings <= budget and _kept_as_read(found, dets)


def test_the_reading_is_searched_under_the_requests_rules() -> None:
    # 123m 456m 789m 111p 99m is a win of no fan (平胡); its 111p have 1m as a close second. Under a
    # house rule of 一番起胡 (a win must score a fan) the plain reading is no win, and re-reading the
    # three 1p as 1m (清一色) is
    dets = make_detections(lay_row("123m456m789m111p9m 9m", gap=1.0))
    dets = _with_alternatives(dets, {9: ("m1", 0.5), 10: ("m1", 0.5), 11: ("m1", 0.5)})
    assert _kept_as_read(_search(dets), dets)
    found = _search(dets, rules=replace(CHENGDU, name="chengdu_one_fan", min_fan=1))
    assert [edit.kind for edit in found.edits] == [EditKind.REREAD] * 3
    assert found.grouping.hand is not None and set(found.grouping.hand.all_tiles) <= set(range(9))


def test_the_reading_is_searched_in_the_requests_context() -> None:
    # 123p 456p 789p 234m 55p is a win, but not for a player who declared 万 void (定缺): in that context
    # the 234m, with 234p as close seconds, are re-read
    dets = make_detections(lay_row("123p456p789p234m5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {9: ("p2", 0.5), 10: ("p3", 0.5), 11: ("p4", 0.5)})
    assert _kept_as_read(_search(dets), dets)
    voided = _search(dets, context=WinContext(void_suit="m"))
    assert [edit.kind for edit in voided.edits] == [EditKind.REREAD] * 3
    assert voided.grouping.hand is not None and all(9 <= tile < 18 for tile in voided.grouping.hand.all_tiles)


def test_another_row_is_read_as_the_hand_when_the_likeliest_one_makes_no_win() -> None:
    """A hand of four pongs and a pair: another player's standing row of 14, farther off, looks more like a
    hand, but holds all three suits; the player's pair and melds are a win as read."""
    mine = lay_hand("9m", win="9m", melds=["555p", "666m", "222p", "777m"], melds_at="below")
    theirs = lay_row("1m4m7m2p5p8p3s6s9s1s2s4s5s7s", origin=(0.0, -6 * TILE_H), gap=1.0)
    dets = make_detections(mine + theirs)
    first = group_detections(dets)
    assert first.hand is not None and len(first.hand.concealed) == 14  # their row, taken for the hand
    found = _search(dets)
    assert found.won and found.edits == () and found.detections is dets
    hand = found.grouping.hand
    assert hand is not None and [m.tile for m in hand.melds] == [13, 5, 10, 6] and hand.concealed == (8, 8)
    warning = _warning(found.grouping, WarningCode.OTHER_ROW)
    assert warning.tiles == ("9m", "9m") and "check that it is the player's" in warning.message
    assert _kept_as_read(_search(dets, config=replace(SEARCH, other_rows=0)), dets)
    assert _kept_as_read(_search(dets, config=replace(SEARCH, max_groupings=1)), dets)  # the budget holds


# --- re-readings ---------------------------------------------------------------------------------------


def test_a_misread_tile_is_read_as_its_second_choice_when_only_that_makes_a_win() -> None:
    dets, _ = _misread()
    grouping = group_detections(dets)
    assert grouping.hand is not None
    found = _search(dets)
    fixed, regrouped = found.detections, found.grouping
    assert WarningCode.REREAD_TILE in regrouped.codes
    assert fixed.names[4] == "m5" and fixed.alternatives is not None
    assert CLASS_NAMES[fixed.alternatives[4, 0]] == "m6"
    assert regrouped.hand is not None and regrouped.hand.win_tile == grouping.hand.win_tile
    warning = _warning(regrouped, WarningCode.REREAD_TILE)
    assert warning.indices == (4,) and warning.tiles == ("5m",) and "6m as 5m" in warning.message
    assert len(fixed) == len(dets)  # no tile gained or lost
    assert found.groupings == 2  # the first reading, and the re-reading judged on its hand, then grouped


def test_the_cheapest_re_reading_wins() -> None:
    # either 6m (index 4 or 5) read as 5m makes the win: the one whose runner-up is the closer second
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 5: ("m5", 0.85)})
    found = _search(dets)
    assert found.detections.names.count("m5") == 1 and found.detections.names.count("m6") == 1
    assert [w.indices for w in found.grouping.warnings if w.code is WarningCode.REREAD_TILE] == [(5,)]


def test_two_tiles_are_re_read_when_one_is_not_enough() -> None:
    dets = make_detections(lay_row("123m466m799m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 8: ("m8", 0.5)})
    found = _search(dets)
    truth = group_detections(make_detections(lay_row(WIN, gap=1.0))).hand
    assert found.grouping.hand is not None and truth is not None
    assert sorted(found.grouping.hand.concealed) == sorted(truth.concealed)
    assert sorted(_warning(found.grouping, WarningCode.REREAD_TILE).indices) == [4, 8]


def test_three_tiles_are_re_read_when_two_are_not_enough() -> None:
    dets = make_detections(lay_row("123m466m799m234p6p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 8: ("m8", 0.5), 12: ("p5", 0.4)})
    found = _search(dets)
    assert found.grouping.hand is not None
    assert sorted(found.grouping.hand.concealed) == sorted(Hand.parse("123m456m789m234p5p5p").concealed)
    assert sorted(_warning(found.grouping, WarningCode.REREAD_TILE).indices) == [4, 8, 12]


def test_a_tile_is_re_read_as_its_third_choice_when_the_second_makes_no_win() -> None:
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m7", 0.6)}, {4: ("m5", 0.3)})
    found = _search(dets)
    assert found.detections.names[4] == "m5"
    warning = _warning(found.grouping, WarningCode.REREAD_TILE)
    assert warning.tiles == ("5m",) and "6m as 5m" in warning.message


def test_a_re_read_meld_tile_completes_its_pong() -> None:
    # the pong 777p apart from the hand, one of its tiles misread 1p: read again, the pong is whole
    dets = make_detections(lay_row("123m456m789m5p 5p  717p", gap=1.0))
    before = group_detections(dets)
    assert before.hand is not None and not before.hand.melds
    dets = _with_alternatives(dets, {12: ("p7", 0.4)})
    found = _search(dets)
    assert found.detections.names[12] == "p7"
    assert found.grouping.hand is not None
    assert [m.tile for m in found.grouping.hand.melds] == [CLASS_NAMES.index("p7")]


@pytest.mark.parametrize(
    ("layout", "seconds"),
    [
        (
            "123m466m789m234p5p 5p",
            {4: ("m5", 0.9 / np.exp(SEARCH.max_cost) / 2)},
        ),  # runner-up far too unlikely
        ("123m466m789m234p 5p", {4: ("m5", 0.6)}),  # a tile missing and none unsure: no re-reading mends it
    ],
)
def test_nothing_is_re_read_without_cause(layout: str, seconds: Readings) -> None:
    dets = _with_alternatives(make_detections(lay_row(layout, gap=1.0)), seconds)
    assert _kept_as_read(_search(dets), dets)


def test_detections_without_alternatives_are_left_as_read() -> None:
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    found = _search(dets)
    assert _kept_as_read(found, dets) and found.groupings == 1


def test_reread_swaps_first_and_other_readings() -> None:
    dets = _with_alternatives(make_detections(lay_row("123m", gap=1.0)), {1: ("p7", 0.3)}, {1: ("s4", 0.1)})
    swapped = dets.reread(1)
    assert swapped.names == ["m1", "p7", "m3"]
    assert swapped.confidences[1] == pytest.approx(0.3)
    assert swapped.alternatives is not None and CLASS_NAMES[swapped.alternatives[1, 0]] == "m2"
    assert swapped.reread(1).names == dets.names
    third = dets.reread(1, rank=1)
    assert third.names == ["m1", "s4", "m3"] and third.confidences[1] == pytest.approx(0.1)
    assert dets[np.array([True, False, True])].alternatives.shape == (2, 2)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="alternative"):
        make_detections(lay_row("123m")).reread(0)
    with pytest.raises(ValueError, match="go together"):
        replace(dets, alternative_confidences=None)
    with pytest.raises(ValueError, match="alternative"):
        replace(dets, alternatives=np.zeros((3, 2), np.int64), alternative_confidences=np.zeros((3, 1)))


# --- tiles taken back -------------------------------------------------------------------------------


def test_a_tile_found_below_the_threshold_is_taken_back_when_the_hand_is_one_short() -> None:
    whole = _whole()
    kept, unsure = _one_short()
    assert WarningCode.TILE_COUNT in group_detections(kept).codes
    found = _search(kept, unsure)
    truth = group_detections(whole).hand
    mended = found.grouping
    assert mended.hand is not None and truth is not None
    assert sorted(mended.hand.concealed) == sorted(truth.concealed)
    assert mended.hand.win_tile == truth.win_tile
    assert WarningCode.TILE_COUNT not in mended.codes
    warning = _warning(mended, WarningCode.UNSURE_TILE)
    assert warning.indices == (13,) and warning.tiles == ("5m",) and "(40%)" in warning.message
    assert len(found.detections) == 14 and found.detections.names[13] == "m5"
    assert float(found.detections.confidences[13]) == pytest.approx(0.4)


def test_the_likeliest_unsure_tiles_that_make_a_win_are_taken() -> None:
    whole = _whole()
    kept, unsure = _split(whole, {4: 0.3, 8: 0.25})  # two tiles short: 5m and 9m
    stray = make_detections(lay_row("8m", origin=(0.0, 10 * TILE_H), confidence=0.45))
    stray = Detections(stray.boxes, stray.class_ids, stray.confidences, unsure.image_size)
    # the more confident stray 8m makes no win with either, so the pair 5m + 9m is taken
    found = _search(kept, unsure.joined(stray))
    assert sorted(_warning(found.grouping, WarningCode.UNSURE_TILE).tiles) == ["5m", "9m"]
    assert found.grouping.hand is not None and len(found.detections) == 14


@pytest.mark.parametrize(
    ("unsure_at", "overlapping"),
    [
        ({}, False),  # the hand is whole: nothing to take back
        ({0: 0.4, 4: 0.4, 8: 0.4}, False),  # three tiles short: not mended from unsure tiles
        ({4: 0.4}, True),  # the only unsure box lies on a kept tile: the same tile, not another
    ],
)
def test_nothing_is_taken_back_without_cause(unsure_at: dict[int, float], overlapping: bool) -> None:
    kept, unsure = _split(_whole(), unsure_at)
    if overlapping:  # the 5m's box moved onto the 6m's
        boxes = unsure.boxes.copy()
        boxes[0] = kept.boxes[4]
        unsure = Detections(boxes, unsure.class_ids, unsure.confidences, unsure.image_size)
    assert _kept_as_read(_search(kept, unsure), kept)


def test_unsure_tiles_that_make_no_win_are_left_out() -> None:
    kept, unsure = _split(_whole(), {4: 0.4})
    unsure = Detections(unsure.boxes, np.array([7], np.int64), unsure.confidences, unsure.image_size)  # 8m
    assert _kept_as_read(_search(kept, unsure), kept)


def test_an_unsure_tile_of_the_row_is_taken_back_instead_of_a_lone_tile_apart() -> None:
    # the 5m was found at 0.4 only, and the grouper made up the count with a lone 7s lying below the
    # row (not_a_meld): taking back the 5m makes a win without it, the 7s left out as a stray
    tiles = lay_hand("123m456m789m234p5p", "5p", ["7s"])
    kept, unsure = _split(make_detections(tiles), {4: 0.4})
    assert group_detections(kept).codes == (WarningCode.NOT_A_MELD,)
    found = _search(kept, unsure)
    mended = found.grouping
    assert mended.hand is not None
    assert sorted(mended.hand.concealed) == sorted(parse_tiles("123456789m23455p"))
    assert mended.codes == (WarningCode.STRAY_TILES, WarningCode.UNSURE_TILE)
    warning = _warning(mended, WarningCode.UNSURE_TILE)
    assert (
        warning.tiles == ("5m",)
        and "made up its count" in warning.message
        and len(found.detections) == len(tiles)
    )


def test_a_legal_hand_with_a_lone_tile_apart_is_left_as_read() -> None:
    # 123m456m789m234p with a 5p apart below and the winning 5p: a legal win as read; the unsure 5p in
    # the row would make one too (the lone 5p then a stray), but a legal reading is not second-guessed
    tiles = lay_hand("123m456m789m234p5p", "5p", ["5p"])
    kept, unsure = _split(make_detections(tiles), {12: 0.4})
    grouping = group_detections(kept)
    assert WarningCode.NOT_A_MELD in grouping.codes and WarningCode.TILE_COUNT not in grouping.codes
    assert _kept_as_read(_search(kept, unsure), kept)


def test_a_lone_tile_apart_stays_when_no_unsure_tile_makes_a_win() -> None:
    tiles = lay_hand("123m456m789m234p5p", "5p", ["7s"])
    kept, unsure = _split(make_detections(tiles), {4: 0.4})
    wrong = Detections(unsure.boxes, np.array([parse_tiles("9s")[0]]), unsure.confidences, unsure.image_size)
    assert _kept_as_read(_search(kept, wrong), kept)


# --- tiles left out ---------------------------------------------------------------------------------


@pytest.mark.parametrize("first", [0.4, 0.0])  # 0: a tile sent to the API with no confidence
def test_the_least_sure_tile_whose_leaving_out_makes_a_win_is_left_out(first: float) -> None:
    # a 6p in the row (a discard in line, or a duplicate box): 15 tiles; the 1m is less sure still,
    # but only leaving out the 6p makes a win
    confidences = [first] + [0.9] * 12 + [0.5, 0.9]
    dets = make_detections(lay_row("123m456m789m234p5p6p 5p", gap=1.0, confidence=confidences))
    assert WarningCode.TILE_COUNT in group_detections(dets).codes
    found = _search(dets)
    mended = found.grouping
    assert mended.hand is not None and WarningCode.TILE_COUNT not in mended.codes
    truth = group_detections(make_detections(lay_row(WIN, gap=1.0))).hand
    assert truth is not None and sorted(mended.hand.concealed) == sorted(truth.concealed)
    warning = _warning(mended, WarningCode.LEFT_OUT_TILE)
    assert warning.indices == (13,) and warning.tiles == ("6p",) and "(50%)" in warning.message
    indices = sorted(i for group in mended.groups for i in group.indices)
    assert len(found.detections) == len(dets) and indices == list(range(len(dets)))  # kept, ignored
    assert mended.win_index is not None and found.detections.names[mended.win_index] == "p5"


def test_a_box_across_a_melds_seam_is_left_out_when_lone_tiles_made_up_the_count() -> None:
    # a box across the seam of the pong 777p, read 2s at 0.5: the grouper counts 7p 2s 7p as concealed
    # (not_a_meld) and the last 7p as a stray, 14 tiles; leaving the box out makes the pong whole
    dets = make_detections(lay_hand("123m456m789m5p", "5p", ["777p"]))
    first, second = dets.boxes[11], dets.boxes[12]
    across = np.array(
        [[(first[0] + first[2]) / 2, first[1], (second[0] + second[2]) / 2, first[3]]], np.float32
    )
    dets = Detections(
        np.concatenate([dets.boxes, across]),
        np.concatenate([dets.class_ids, [CLASS_NAMES.index("s2")]]),
        np.concatenate([dets.confidences, [0.5]]).astype(np.float32),
        dets.image_size,
    )
    assert WarningCode.NOT_A_MELD in group_detections(dets).codes
    found = _search(dets)
    assert [(edit.kind, edit.index) for edit in found.edits] == [(EditKind.LEAVE_OUT, 14)]
    assert found.grouping.hand is not None and found.grouping.hand.to_json()["melds"] == [
        {"type": "pong", "tile": "7p"}
    ]
    warning = _warning(found.grouping, WarningCode.LEFT_OUT_TILE)
    assert warning.tiles == ("2s",) and "made up its count" in warning.message


def test_a_hand_three_over_is_left_as_it_is() -> None:
    dets = make_detections(
        lay_row("123m456m789m234p5p6p7p8p 5p", gap=1.0, confidence=[0.9] * 13 + [0.3] * 3 + [0.9])
    )
    assert _kept_as_read(_search(dets), dets)


# --- through the pipeline ---------------------------------------------------------------------------


class _ThresholdDetector(OneStep):
    """Answers fixed detections above ``conf``, as the real detector filters by its threshold."""

    def __init__(self, detections: Detections) -> None:
        self.detections = detections

    def answer(self, located: Located, conf: float) -> Detections:
        return self.detections[self.detections.confidences >= conf]


def _photo(dets: Detections) -> Photo:
    width, height = dets.image_size
    return Photo(np.zeros((height, width, 3), np.uint8), (width, height))


def test_the_pipeline_takes_back_an_unsure_tile_and_says_so() -> None:
    whole = _whole()
    confidences = whole.confidences.copy()
    confidences[4] = 0.3  # below the operating threshold, above the unsure floor
    dets = Detections(whole.boxes, whole.class_ids, confidences, whole.image_size)
    read = pipeline.recognize(_photo(dets), _ThresholdDetector(dets), conf=THRESHOLD)  # type: ignore[arg-type]
    assert read.grouping.codes == (WarningCode.UNSURE_TILE,)
    assert len(read.detections) == 14 and read.grouping.hand is not None
    assert len(read.grouping.hand.concealed) == 14 and read.groupings == 2


def test_a_tile_torn_between_two_faces_counts_as_found_and_the_hand_picks_its_face() -> None:
    # the 5m (index 4) read 6m at 0.42 with 5m at 0.4: neither reading reaches 0.55, but the detector is
    # sqrt(0.42^2 + 0.4^2) = 0.58 sure a tile is there, so it is kept and the win reads it as 5m
    whole = _whole()
    others = np.array([[(c + 1) % 27] for c in map(int, whole.class_ids)], np.int64)
    other_confidences = np.full((len(whole), 1), 0.01, np.float32)
    class_ids, confidences = whole.class_ids.copy(), whole.confidences.copy()
    class_ids[4], confidences[4], others[4, 0], other_confidences[4, 0] = 5, 0.42, 4, 0.4
    dets = Detections(whole.boxes, class_ids, confidences, whole.image_size, others, other_confidences)
    assert dets.presences[4] == pytest.approx(0.58, abs=0.01) and dets.presences[0] > dets.confidences[0]
    read = pipeline.recognize(_photo(dets), _ThresholdDetector(dets), conf=THRESHOLD)  # type: ignore[arg-type]
    # kept, not taken back as unsure; its two faces close, so the player is told to check it
    assert read.grouping.codes == (WarningCode.REREAD_TILE, WarningCode.CLOSE_FACES)
    close = read.grouping.warnings[-1]
    assert close.indices == (4,) and set(close.tiles) == {"5m", "6m"}
    assert "tile 5 of the hand" in close.message
    assert read.detections.names[4] == "m5" and read.grouping.hand is not None
    assert len(read.grouping.hand.concealed) == 14


def test_presences_are_the_confidences_without_other_readings() -> None:
    whole = _whole()
    assert whole.presences is whole.confidences


def test_warnings_name_every_kind_of_tile() -> None:
    # a tile taken back or left out may be a back (a concealed kong's) or an honour, not only a suited tile
    assert [warning_name(c) for c in (0, 13, 26, BACK, HONOUR)] == ["1m", "5p", "9s", "back", "honour"]


def test_a_search_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        SEARCH.max_groupings = 1  # type: ignore[misc]
    assert SearchConfig().max_groupings == SEARCH.max_groupings


# --- rows found once ------------------------------------------------------------------------------------


def test_rows_are_found_once_per_set_of_boxes_and_given_back_as_they_were() -> None:
    from vision.geometry.rows import RowCache, find_rows

    boxes = make_detections(lay_row(WIN, gap=1.0)).boxes
    cache = RowCache()
    first = cache.find(boxes)
    assert cache.find(boxes.copy()) is first and first == find_rows(boxes)
    assert (cache.asked, cache.found) == (2, 1)
    cache.find(boxes, weights=np.full(len(boxes), 0.25))  # other weights: other rows, found anew
    cache.find(boxes[:-1])  # another set of boxes
    assert (cache.asked, cache.found) == (4, 3)


def test_a_grouping_with_rows_handed_on_is_the_grouping_without() -> None:
    from vision.geometry.rows import RowCache

    cache = RowCache()
    for layout in ("123m466m789m234p5p 5p", WIN):
        dets = make_detections(lay_row(layout, gap=1.0))
        assert group_detections(dets, rows=cache) == group_detections(dets)
    assert cache.found == 1  # the two rows lie alike (their faces differ): their rows were found once


def test_the_grouper_settings_given_to_the_reading_reach_every_grouping() -> None:
    from vision.grouping.grouper import GROUPER

    dets = make_detections(lay_row(WIN, inner_gaps=-0.45))  # neighbours overlap (IoU 0.29)
    plain = pipeline.read_hand(dets)
    strict = pipeline.read_hand(dets, grouper=replace(GROUPER, duplicate_iou=0.2))
    assert WarningCode.DUPLICATE_BOX not in plain.grouping.codes
    assert WarningCode.DUPLICATE_BOX in strict.grouping.codes  # the overlapping neighbours taken for one
