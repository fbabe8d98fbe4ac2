"""``smj settle ROUND.json [--preset NAME] [--base N] [--json]`` run in-process through ``smj.main``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from scoring_builders import LEDGER_JSON_KEYS
from smj_runner import Main, core_main, run

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "round.json")


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Main:
    return core_main(monkeypatch)


def write(tmp_path: Path, payload: object, name: str = "round.json") -> str:
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return str(path)


def test_settle_json(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(main, capsys, "settle", EXAMPLE, "--json")
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert set(payload) == LEDGER_JSON_KEYS
    assert payload["totals"] == [13, -1, -23, 11] and payload["preset"] == "chengdu"
    assert payload["payments"][1] == {
        "payer": 0,
        "payee": 3,
        "amount": 2,
        "reason": "下雨 暗杠 9m",
        "kind": "kong",
        "event": 1,
    }


def test_settle_readable(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(main, capsys, "settle", EXAMPLE)
    assert code == 0 and err == ""
    assert "preset chengdu, base 1" in out
    assert "[0] C -> B      2  刮风 直杠 5p" in out
    assert "查大叫 1 fan" in out and "退税 kong refund 直杠 5p" in out
    assert "  C -23" in out and "Next dealer: A" in out


def test_settle_preset_and_base(main: Main, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Seed 003 part B: base 200, self-drawn 3 fan under xuezhan_3cap."""
    path = write(tmp_path, {"events": [{"type": "win", "player": "A", "self_drawn": True, "fan": 3}]})
    code, out, _ = run(main, capsys, "settle", path, "--preset", "xuezhan_3cap", "--base", "200", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["base"] == 200 and payload["totals"] == [4800, -1600, -1600, -1600]
    assert not payload["finished"]
    code, out, _ = run(main, capsys, "settle", path, "--preset", "xuezhan_3cap", "--base", "200")
    assert "still in play" in out


def test_settle_stdin(
    main: Main, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(EXAMPLE).read_text(encoding="utf-8")))
    code, out, _ = run(main, capsys, "settle", "-", "--json")
    assert code == 0 and json.loads(out)["totals"] == [13, -1, -23, 11]


def test_settle_no_payments(main: Main, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(main, capsys, "settle", write(tmp_path, {"events": []}))
    assert code == 0 and "no payments" in out


@pytest.mark.parametrize(
    ("payload", "args", "says"),
    [
        ("{not json", (), "is not JSON"),
        ({"events": [{"type": "kong"}]}, (), "events[0]: missing field 'player' [malformed]"),
        (
            {
                "events": [
                    {"type": "win", "player": "A", "self_drawn": True, "fan": 0},
                    {"type": "kong", "player": "A", "kind": "concealed", "tile": "5p"},
                ]
            },
            (),
            "event 1: the konger A already won (event 0) and is out of the round [already_won]",
        ),
        ({"events": []}, ("--preset", "nope"), "unknown rules preset 'nope'"),
        ({"events": []}, ("--base", "0"), "--base must be a whole number >= 1"),
        ({"events": []}, ("--base", "2.5"), "--base must be a whole number >= 1"),
    ],
    ids=["not-json", "malformed", "impossible", "unknown-preset", "zero-base", "fractional-base"],
)
def test_settle_errors(
    main: Main,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    payload: object,
    args: tuple[str, ...],
    says: str,
) -> None:
    code, out, err = run(main, capsys, "settle", write(tmp_path, payload), *args)
    assert code == 2 and out == ""
    assert says in err and err.startswith("smj settle: ") and err.count("\n") == 1


def test_settle_missing_file(main: Main, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(main, capsys, "settle", str(tmp_path / "absent.json"))
    assert code == 2 and out == "" and "cannot read" in err and err.count("\n") == 1
