"""The one table of win conditions (``scoring.conditions``): the command line, the API schema and the page
are built from it, and validation refuses exactly what it says cannot go together."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from scoring_builders import hand
from smj_runner import core_main, run

from api.app import create_app
from api.schemas import ContextIn
from api.settings import Settings
from scoring import ErrorCode, WinContext, score
from scoring.cli import add_context_arguments, context_from_args
from scoring.conditions import (
    CONDITIONS_BY_KEY,
    KEYS,
    WIN_CONDITIONS,
    brings,
    clears,
    conditions_json,
    excluded,
    implied,
)
from scoring.settlement.events import WIN_FLAGS, Win
from scoring.validate import CONDITION_RULES, ContextFacts

STATIC = Path(__file__).resolve().parents[2] / "api" / "static"
GOOD_TEXT = "123m456m789m234p55p"
GOOD = hand(GOOD_TEXT)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("api")
    app = create_app(Settings(weights=folder / "missing.onnx", dataset_dir=folder / "dataset"))
    with TestClient(app) as client:
        yield client


def test_the_cli_the_api_schema_and_the_page_agree_with_the_table(client: TestClient) -> None:
    assert [f.name for f in fields(WinContext) if f.type in (bool, "bool")] == list(KEYS)
    # a round's win events: every condition but 自摸 (no discarder) and the dealer (the round's)
    assert {f.name for f in fields(Win) if f.type in (bool, "bool")} == set(WIN_FLAGS)
    assert set(KEYS) - set(WIN_FLAGS) == {"self_drawn", "dealer"}
    # the command line: a flag per condition, in order, with its help
    parser = argparse.ArgumentParser()
    add_context_arguments(parser)
    flags = [a for a in parser._actions if isinstance(a, argparse._StoreTrueAction) and a.dest != "json"]
    assert [(a.dest, a.option_strings, a.help) for a in flags] == [
        (c.key, [c.flag], c.describe("flag")) for c in WIN_CONDITIONS
    ]
    # the API: the JSON context and the photo's form fields
    assert list(ContextIn.model_fields) == [*KEYS, "void_suit"]
    assert [ContextIn.model_fields[key].description for key in KEYS] == [c.describe() for c in WIN_CONDITIONS]
    schema = client.get("/openapi.json").json()
    form = next(
        s for name, s in schema["components"]["schemas"].items() if name.startswith("Body_score_photo")
    )
    conditions = [name for name in form["properties"] if name not in ("image", "preset", "set")]
    assert conditions == [*KEYS, "void_suit"]
    assert [form["properties"][key]["description"] for key in KEYS] == [c.describe() for c in WIN_CONDITIONS]
    # the page: its choices come from /api/v1/conditions, and it names none of them itself
    answer = client.get("/api/v1/conditions")
    assert answer.status_code == 200
    assert answer.json() == {"conditions": conditions_json(), "win_event_flags": list(WIN_FLAGS)}
    assert [row["key"] for row in answer.json()["conditions"]] == list(KEYS)
    page = "".join((STATIC / name).read_text(encoding="utf-8") for name in ("index.html", "app.js"))
    assert '"/conditions"' in page
    assert [key for key in KEYS if key in page] == []


def test_tian_hu_implies_the_dealer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    context = WinContext(tian_hu=True, self_drawn=True)
    assert context.dealer and context == WinContext(tian_hu=True, self_drawn=True, dealer=True)
    assert score(GOOD, context).total_fan == 4  # chengdu: 天胡 is the cap
    code, out, _ = run(
        core_main(monkeypatch), capsys, "score", "--hand", GOOD_TEXT, "--tian-hu", "--self-drawn", "--json"
    )
    assert code == 0 and json.loads(out)["total_fan"] == 4
    body = {"hand": {"concealed": GOOD_TEXT}, "context": {"tian_hu": True, "self_drawn": True}}
    answer = client.post("/api/v1/score", json=body)
    assert answer.status_code == 200 and answer.json()["total_fan"] == 4
    assert implied("tian_hu") == {"dealer"} and not any(implied(key) for key in KEYS if key != "tian_hu")


def refusal(keys: Iterable[str]) -> str | None:
    """What the table's rules say against a context holding ``keys`` (and what they imply)."""
    facts = ContextFacts(WinContext(**dict.fromkeys(keys, True)), ())
    for flag, contradicts, message in CONDITION_RULES:
        if getattr(facts.context, flag) and contradicts(facts):
            return message
    return None


@pytest.mark.parametrize(
    ("one", "other", "says"),
    [
        ("di_hu", "dealer", "non-dealer"),
        ("gang_shang_pao", "self_drawn", "discard"),
        ("qiang_gang", "self_drawn", "自摸"),
        ("gang_shang_hua", "gang_shang_pao", "杠上炮"),
        ("tian_hu", "di_hu", "地胡"),
        ("hai_di", "tian_hu", "海底"),
    ],
)
def test_conditions_that_exclude_each_other_are_refused(one: str, other: str, says: str) -> None:
    assert other in excluded(one) and one in excluded(other)
    for context in (
        WinContext(**dict.fromkeys({one, other} | brings(one) | brings(other), True)),
        WinContext(**dict.fromkeys({other, one} | brings(other) | brings(one), True)),
    ):
        result = score(GOOD, context)
        assert result.error is not None and result.error.code is ErrorCode.CONTRADICTORY_CONTEXT
        assert says in result.error.message


@pytest.mark.parametrize(("key", "required"), [("gang_shang_hua", "self_drawn"), ("tian_hu", "self_drawn")])
def test_a_condition_without_one_it_requires_is_refused(key: str, required: str) -> None:
    assert CONDITIONS_BY_KEY[key].requires == (required,)
    message = refusal([key])
    assert message is not None and f"set {required} too" in message
    assert refusal([key, required]) is None


@pytest.mark.parametrize("key", KEYS)
def test_what_the_page_ticks_and_clears_is_what_validation_accepts_and_refuses(key: str) -> None:
    """Ticking a condition ticks ``brings`` and clears ``clears``: every other condition not cleared can
    be ticked too, and every one cleared cannot."""
    held = {key} | brings(key)
    assert refusal(held) is None
    for other in set(KEYS) - held:
        together = refusal(held | {other} | brings(other))
        assert (together is not None) == (other in clears(key)), (key, other, together)


def test_the_page_ticks_and_clears_as_the_rules_say() -> None:
    assert {key: sorted(brings(key)) for key in KEYS if brings(key)} == {
        "gang_shang_hua": ["self_drawn"],
        "tian_hu": ["dealer", "self_drawn"],
    }
    assert {key: sorted(clears(key)) for key in KEYS} == {
        "self_drawn": ["gang_shang_pao", "qiang_gang"],
        "gang_shang_hua": ["gang_shang_pao", "qiang_gang"],
        "gang_shang_pao": ["gang_shang_hua", "qiang_gang", "self_drawn", "tian_hu"],
        "qiang_gang": ["di_hu", "gang_shang_hua", "gang_shang_pao", "self_drawn", "tian_hu"],
        "hai_di": ["di_hu", "tian_hu"],
        "tian_hu": ["di_hu", "gang_shang_pao", "hai_di", "qiang_gang"],
        "di_hu": ["dealer", "hai_di", "qiang_gang", "tian_hu"],
        "dealer": ["di_hu"],
    }


def test_the_cli_context_is_the_flags_given() -> None:
    parser = argparse.ArgumentParser()
    add_context_arguments(parser)
    context, rules = context_from_args(
        parser.parse_args(["--gang-shang-hua", "--self-drawn", "--void-suit", "s"])
    )
    assert (
        context == WinContext(gang_shang_hua=True, self_drawn=True, void_suit="s") and rules.name == "chengdu"
    )
    context, _ = context_from_args(parser.parse_args(["--tian-hu"]))
    assert context == WinContext(tian_hu=True, dealer=True)
