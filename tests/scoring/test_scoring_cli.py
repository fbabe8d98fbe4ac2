"""``smj score`` and ``smj waits`` run in-process through ``smj.main``.

The other packages' commands (vision, datasets, api) are not registered here, so these tests only depend
on ``smj.py`` and ``scoring``.
"""

from __future__ import annotations

import json

import pytest
from scoring_builders import SCORE_JSON_KEYS
from smj_runner import Main, core_main, run


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Main:
    return core_main(monkeypatch)


def test_score_json_points_linear(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        main,
        capsys,
        "score",
        "--hand",
        "123345m66999p",
        "--kong",
        "2p",
        "--win",
        "6p",
        "--preset",
        "points_linear",
        "--json",
    )
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert set(payload) == SCORE_JSON_KEYS
    assert payload["valid"] and payload["preset"] == "points_linear"
    assert [(fan["key"], fan["fan"]) for fan in payload["fans"]] == [("ping_hu", 1), ("gen", 1)]
    assert (payload["raw_fan"], payload["total_fan"], payload["multiplier"]) == (2, 2, 2)
    assert payload["decomposition"] == ["123m", "345m", "999p", "2222p(kong)", "66p"]


def test_score_takes_the_hand_typed_as_the_page_takes_it(
    main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--hand`` typed with its melds (``scoring.typed``) scores as the options give it; a typo exits 2
    naming the word in Chinese and English."""
    flags = run(main, capsys, "score", "--hand", "123345m66999p", "--kong", "2p", "--win", "6p", "--json")
    typed = run(main, capsys, "score", "--hand", "123345m66999p kong 2p win 6p", "--json")
    both = run(main, capsys, "score", "--hand", "123345m 66999p 胡6p", "--kong", "2p", "--json")
    assert flags[0] == 0 and typed == flags and both == flags
    code, out, err = run(main, capsys, "score", "--hand", "123345m66999p kang 2p")
    assert code == 2 and out == "" and "“kang” 不是牌" in err and "'k'" in err
    waits = run(main, capsys, "waits", "--hand", "12334567m 66999p", "--json")
    assert waits == run(main, capsys, "waits", "--hand", "12334567m66999p", "--json")


def test_score_text_is_bilingual(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        main,
        capsys,
        "score",
        "--hand",
        "55m",
        "--kong",
        "1m",
        "--kong",
        "2m",
        "--concealed-kong",
        "3m",
        "--added-kong",
        "4m",
        "--self-drawn",
        "--gang-shang-hua",
    )
    assert code == 0
    for text in (
        "清一色",
        "Full flush",
        "金钩钓",
        "根",
        "Root x4",
        "杠上花",
        "清十八罗汉",
        "Pure eighteen arhats",
        "原番 Raw: 9",
        "封顶 Capped: 4",
        "(cap 4)",
        "倍数 Multiplier: x16",
        "3333m(concealed kong)",
    ):
        assert text in out, text


def test_score_context_flags_reach_the_score(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        main,
        capsys,
        "score",
        "--hand",
        "123m456m789m234p55p",
        "--win",
        "3p",
        "--qiang-gang",
        "--preset",
        "qq_xuezhan",
        "--json",
    )
    assert code == 0
    payload = json.loads(out)
    assert [fan["key"] for fan in payload["fans"]] == ["ping_hu", "qiang_gang"] and payload["total_fan"] == 2
    code, out, _ = run(
        main,
        capsys,
        "score",
        "--hand",
        "123m456m789m234p55p",
        "--tian-hu",
        "--dealer",
        "--self-drawn",
        "--json",
    )
    assert code == 0 and json.loads(out)["total_fan"] == 4


def test_score_not_a_win_exits_1_and_says_why(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(main, capsys, "score", "--hand", "123m456p789s234m55m", "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["valid"] is False and payload["error"]["code"] == "three_suits"
    code, out, _ = run(main, capsys, "score", "--hand", "123m456m789m234p55p", "--void-suit", "p")
    assert code == 1 and "void_suit_present" in out and "Not a win" in out


@pytest.mark.parametrize(
    ("argv", "code_name"),
    [
        (["--hand", "123m456m789m234p5p"], "wrong_tile_count"),
        (["--hand", "11111m456m789m555p"], "too_many_copies"),
        (["--hand", "123m456m789m234p55p", "--gang-shang-hua"], "contradictory_context"),
    ],
)
def test_score_an_impossible_hand_exits_2_and_still_prints_why(
    argv: list[str], code_name: str, main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(main, capsys, "score", *argv, "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == code_name
    assert f"impossible hand [{code_name}]" in err
    code, out, _ = run(main, capsys, "score", *argv)
    assert code == 2 and f"Impossible hand [{code_name}]" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["score", "--hand", "123m456m789x"], "unknown character 'x'"),
        (["score", "--hand", "123m456m789m234p55p", "--preset", "beijing"], "valid presets: chengdu"),
        (["score"], "--hand"),
        (["score", "--hand", "123m456m789m234p55p", "--pong", "0m"], "rank 0"),
        (["waits", "--hand", "123m456m789m23p5p", "--win", "5p"], "--win"),
        (["waits", "--hand", "123q"], "unknown character"),
    ],
    ids=[
        "unknown-tile",
        "unknown-preset",
        "no-hand",
        "bad-meld-tile",
        "waits-with-win",
        "waits-unknown-tile",
    ],
)
def test_malformed_input_exits_2(
    main: Main, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, out, err = run(main, capsys, *argv)
    assert code == 2
    assert out == ""
    assert fragment in err


def test_waits_json(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(main, capsys, "waits", "--hand", "2233445566778m", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["ready"] is True and payload["error"] is None and payload["largest_fan"] == 4
    assert [wait["tile"] for wait in payload["waits"]] == ["2m", "5m", "8m"]
    assert set(payload["waits"][2]["score"]) == SCORE_JSON_KEYS
    assert payload["waits"][2]["score"]["combination"]["name_zh"] == "清七对"


def test_waits_with_melds_and_preset(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        main,
        capsys,
        "waits",
        "--hand",
        "7p",
        "--pong",
        "1m",
        "--pong",
        "5m",
        "--pong",
        "3p",
        "--kong",
        "9p",
        "--preset",
        "qq_xuezhan",
        "--json",
    )
    assert code == 0
    payload = json.loads(out)
    assert [wait["tile"] for wait in payload["waits"]] == ["7p"]
    assert payload["waits"][0]["score"]["total_fan"] == 3  # 对对胡 2 + 1 root


def test_waits_text(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(main, capsys, "waits", "--hand", "1112345678999m")
    assert code == 0
    assert "Waits (9)" in out and "9万" in out and "清一色" in out


def test_waits_not_ready_exits_1(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(main, capsys, "waits", "--hand", "123m456m789m2589p", "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["ready"] is False and payload["waits"] == [] and payload["error"] is None
    code, out, _ = run(main, capsys, "waits", "--hand", "123m456m789m2589p")
    assert code == 1 and "Not ready" in out


def test_waits_wrong_tile_count_exits_2_with_the_reason(
    main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(main, capsys, "waits", "--hand", "123m456m789m234p55p", "--json")
    assert code == 2
    assert json.loads(out)["error"]["code"] == "wrong_tile_count" and "wrong_tile_count" in err


def test_waits_says_why_a_hand_can_never_be_ready(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(main, capsys, "waits", "--hand", "1122334455667m", "--void-suit", "m")
    assert code == 1 and "Not ready [void_suit_present]" in out
    code, out, _ = run(main, capsys, "waits", "--hand", "123m456p789s2345m")
    assert code == 1 and "Not ready [three_suits]" in out


def test_helpers_used_by_the_photo_command() -> None:
    """``vision.cli`` reads the context and preset with ``context_from_args`` and prints ``format_score``."""
    import argparse

    from scoring import cli as scoring_cli
    from scoring import score
    from scoring.hand import Hand

    parser = argparse.ArgumentParser()
    scoring_cli.add_hand_arguments(parser, hand_required=False)
    scoring_cli.add_context_arguments(parser)
    context, rules = scoring_cli.context_from_args(
        parser.parse_args(["--self-drawn", "--void-suit", "s", "--preset", "qq_xuezhan"])
    )
    assert context.self_drawn and context.void_suit == "s" and not context.gang_shang_hua
    assert rules.name == "qq_xuezhan"
    with pytest.raises(ValueError, match="valid presets"):
        scoring_cli.context_from_args(parser.parse_args(["--preset", "nope"]))
    text = scoring_cli.format_score(score(Hand.parse("11224444557799m"), context, rules))
    assert "清龙七对" in text and "Preset: qq_xuezhan" in text and "x32" in text
    invalid = scoring_cli.format_score(score(Hand.parse("123m456p789s234m55m")))
    assert "three_suits" in invalid


def test_score_says_what_each_payer_pays(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    hand = ["--hand", "67788889m", "--pong", "1m", "--pong", "2m", "--win", "6m"]
    code, out, _ = run(main, capsys, "score", *hand)
    assert code == 0 and "支付 Payment: 点炮 the discarder pays 8 底 base" in out
    code, out, _ = run(main, capsys, "score", *hand, "--self-drawn")
    assert code == 0 and "自摸 each player still in pays 9 底 base (x8, 自摸加底 +1)" in out
    code, out, _ = run(main, capsys, "score", *hand, "--self-drawn", "--preset", "xuezhan_3cap", "--json")
    assert (json.loads(out)["payment"], json.loads(out)["payers"]) == (8, "each_player_still_in")


def test_a_condition_that_scores_nothing_under_the_preset_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    main = core_main(monkeypatch)
    hand = ("score", "--hand", "123345m66999p", "--kong", "2p", "--win", "6p", "--hai-di")
    code, out, _ = run(main, capsys, *hand)
    assert code == 0 and "海底 last tile scores nothing under chengdu" in out
    code, out, _ = run(main, capsys, *hand, "--preset", "sichuan_bloody")
    assert code == 0 and "scores nothing" not in out
