"""Photo -> detections -> hand -> score, through the Python API and the `smj` command."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import smj
from api.fakes import OneStep
from scoring import WinContext, score
from scoring.hand import Hand
from scoring.presets import CHENGDU
from vision.detect.detector import DEFAULT_WEIGHTS
from vision.detect.view import Located
from vision.detections import CLASS_IDS, Detections
from vision.grouping.result import GroupRole, WarningCode
from vision.pipeline import score_photo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCENES = ["hand", "hand_melds", "hand_rotated"]
needs_model = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


class _TruthDetector(OneStep):
    """Answers with the labelled boxes of the bundled scene: the pipeline without the model's errors."""

    def __init__(self, scene: dict) -> None:
        self._scene = scene

    def answer(self, located: Located, conf: float) -> Detections:
        boxes = self._scene["boxes"]
        return Detections(
            np.array([b["box"] for b in boxes], np.float32),
            np.array([b["cls"] for b in boxes], np.int64),
            np.full(len(boxes), 0.9, np.float32),
            located.size,
        )


def _scene(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def _truth_hand(scene: dict) -> Hand:
    return Hand.from_json(scene["hand"])


@pytest.mark.parametrize("name", SCENES)
def test_bundled_photos_score_as_their_true_hand(name: str) -> None:
    scene = _scene(name)
    result = score_photo(
        (EXAMPLES / f"{name}.jpg").read_bytes(),
        _TruthDetector(scene),  # type: ignore[arg-type]
        WinContext(),
        CHENGDU,
    )
    truth = _truth_hand(scene)
    assert result.hand is not None
    assert sorted(result.hand.concealed) == sorted(truth.concealed)
    assert sorted((m.tile, m.kind.is_kong) for m in result.hand.melds) == sorted(
        (m.tile, m.kind.is_kong) for m in truth.melds
    )
    assert result.score is not None
    found, expected = result.score.to_json(), score(truth, WinContext(), CHENGDU).to_json()
    assert sorted(found.pop("decomposition")) == sorted(expected.pop("decomposition"))  # type: ignore[arg-type]
    assert found == expected
    payload = result.to_json(name)
    assert (payload["width"], payload["height"]) == (scene["width"], scene["height"])
    assert len(payload["detections"]) == len(scene["boxes"])  # type: ignore[arg-type]


def test_a_blurred_photo_is_read_with_a_warning_that_says_so() -> None:
    """The bundled photo as it is reads without a ``blurred_photo`` warning; blurred by 4 px (a
    twenty-fifth of its tiles' width, as a shaking hand does) it reads with one, naming no tile."""
    scene = _scene("hand")
    pixels = cv2.imread(str(EXAMPLES / "hand.jpg"))
    blurred = cv2.imencode(".jpg", cv2.GaussianBlur(pixels, (0, 0), 4.0))[1].tobytes()
    detector = _TruthDetector(scene)
    sharp = score_photo((EXAMPLES / "hand.jpg").read_bytes(), detector, WinContext(), CHENGDU)  # type: ignore[arg-type]
    soft = score_photo(blurred, detector, WinContext(), CHENGDU)  # type: ignore[arg-type]
    assert WarningCode.BLURRED_PHOTO not in sharp.grouping.codes
    warning = next(w for w in soft.grouping.warnings if w.code is WarningCode.BLURRED_PHOTO)
    assert warning.tiles == () and "blurred" in warning.message
    assert soft.hand == sharp.hand  # a warning, not a change
    codes = [w["code"] for w in soft.to_json("hand")["warnings"]]  # type: ignore[union-attr]
    assert "blurred_photo" in codes


@needs_model
def test_smj_detect_prints_json_for_each_image(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    images = [str(EXAMPLES / "hand.jpg"), str(EXAMPLES / "hand_melds.jpg")]
    code = smj.main(["detect", *images, "--json", "--annotate", str(tmp_path)])
    assert code == 0
    results = json.loads(capsys.readouterr().out)
    assert [r["image"] for r in results] == images
    assert (results[0]["width"], results[0]["height"]) == (1024, 768)
    for result in results:
        for detection in result["detections"]:
            assert set(detection) == {"tile", "confidence", "box", "alternatives"}
            # the classifier's next suited readings, likeliest first, those likelier than an honour or no tile
            others = detection["alternatives"]
            assert len(others) <= 2 and all(o["tile"][0] in "mps" and o["tile"][1].isdigit() for o in others)
            confidences = [detection["confidence"]] + [o["confidence"] for o in others]
            assert confidences == sorted(confidences, reverse=True)
    assert any(len(d["alternatives"]) == 2 for r in results for d in r["detections"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hand.jpg", "hand_melds.jpg"]


@needs_model
def test_annotated_photos_of_one_name_from_two_folders_are_both_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "hand.jpg").write_bytes((EXAMPLES / "hand_melds.jpg").read_bytes())
    out = tmp_path / "out"
    photos = [str(EXAMPLES / "hand.jpg"), str(other / "hand.jpg")]
    assert smj.main(["detect", *photos, "--annotate", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["hand.jpg", "hand_2.jpg"]


def test_an_annotation_that_cannot_be_written_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    photo = str(EXAMPLES / "hand.jpg")
    assert smj.main(["score", photo, "--annotate", str(tmp_path / "out.txt")]) == 2
    assert "out.txt" in capsys.readouterr().err
    a_file = tmp_path / "taken"
    a_file.write_text("", encoding="utf-8")
    assert smj.main(["detect", photo, "--annotate", str(a_file)]) == 2
    assert "not a folder" in capsys.readouterr().err


@needs_model
def test_a_failed_annotation_still_prints_the_score(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("", encoding="utf-8")  # a file where the annotation's folder would be
    out = str(blocker / "a.jpg")
    assert smj.main(["score", str(EXAMPLES / "hand.jpg"), "--json", "--annotate", out]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["score"] is not None and "a.jpg" in captured.err


@needs_model
def test_smj_score_photo_prints_the_whole_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "annotated.jpg"
    code = smj.main(["score", str(EXAMPLES / "hand.jpg"), "--json", "--annotate", str(out)])
    payload = json.loads(capsys.readouterr().out)
    assert {"image", "detections", "hand", "score", "warnings"} <= set(payload)
    valid = payload["score"] is not None and payload["score"]["valid"]
    assert code == (0 if valid else 1)
    assert out.stat().st_size > 10_000


def test_names_drawn_on_an_annotated_photo_never_overlap_and_are_whole() -> None:
    """A row of touching tiles narrower than their names: every name placed meets no other, inside the
    photo; one with no free place is left out, never drawn over another."""
    from vision.annotate import label_spots

    boxes = np.array([[100 + 12 * i, 300, 112 + 12 * i, 316] for i in range(14)], dtype=np.float32)
    names = ["honour", "m1", "back", *(["p5"] * 11)]
    spots = label_spots(boxes, names, (400, 400), 0.5)
    placed = [spot for spot in spots if spot is not None]
    assert len(placed) >= 8
    for i, (x1, y1, x2, y2) in enumerate(placed):
        assert 0 <= x1 < x2 <= 400 and 0 <= y1 < y2 <= 400
        for a1, b1, a2, b2 in placed[i + 1 :]:
            assert not (x1 < a2 and a1 < x2 and y1 < b2 and b1 < y2)
    first = spots[0]
    assert first is not None and first[2] - first[0] > 40  # "honour" whole, wider than its 12 px tile


@needs_model
def test_an_annotated_12_mp_photo_says_its_size_and_carries_the_hand_and_score(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "phone.png"
    smj.main(["score", str(EXAMPLES / "hand_phone.jpg"), "--annotate", str(out)])
    said = capsys.readouterr().out
    assert f"annotated: {out} (2016x1512, 0.5 of the photo's 4032x3024)" in said
    drawn = cv2.imread(str(out))
    assert drawn.shape[1] == 2016 and drawn.shape[0] > 1512  # the caption's band under the photo
    band = drawn[1512:]
    assert (band < 100).any() and (band > 250).mean() > 0.8  # dark lines of text on white


@needs_model
@pytest.mark.parametrize(
    ("content", "message"),
    [(b"not an image at all", "not an image"), (b"\xff\xd8\xff\xe0" + b"\x00" * 50, "")],
    ids=["text", "broken-jpeg"],
)
def test_bad_photos_exit_2_with_a_message(
    content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jpg"
    path.write_bytes(content)
    assert smj.main(["score", str(path), "--json"]) == 2
    assert smj.main(["detect", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.jpg" in err and message in err


def test_score_needs_a_hand_or_a_photo(capsys: pytest.CaptureFixture[str]) -> None:
    assert smj.main(["score", str(EXAMPLES / "hand.jpg"), "--hand", "123m"]) == 2
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--pong", "5p"], "--pong"),
        (["--concealed-kong", "1m"], "--concealed-kong"),
        (["--win", "9s"], "--win"),
    ],
)
def test_a_photo_refuses_the_options_of_a_hand_given_as_text(
    extra: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert smj.main(["score", str(EXAMPLES / "hand.jpg"), *extra]) == 2
    assert f"{named} goes with --hand" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--conf", "0.5"], ["--annotate", "out.jpg"], ["--weights", "w.onnx"]])
def test_a_hand_given_as_text_refuses_the_options_of_a_photo(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert smj.main(["score", "--hand", "123m456m789m11122p", *option]) == 2
    assert f"{option[0]} goes with a photo" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "1.5", "-1", "high"])
def test_a_confidence_outside_0_to_1_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["score", str(EXAMPLES / "hand.jpg")], ["detect", str(EXAMPLES / "hand.jpg")]):
        with pytest.raises(SystemExit) as stopped:
            smj.main([*command, "--conf", value])
        assert stopped.value.code == 2
        assert "--conf" in capsys.readouterr().err


@needs_model
def test_a_12_megapixel_phone_photo_is_read_end_to_end() -> None:
    """A bundled 4032x3024 synthetic photo stored sideways with EXIF orientation 6, the hand small in
    the frame: the two-pass looks must find and read the player's tiles with the shipped model."""
    from vision.detect.detector import Detector

    scene = _scene("hand_phone")
    result = score_photo((EXAMPLES / "hand_phone.jpg").read_bytes(), Detector(), WinContext(), CHENGDU)
    assert result.photo.original_size == (4032, 3024) == (scene["width"], scene["height"])
    assert result.photo.scale > 1  # decoded reduced by the JPEG decoder
    truth = _truth_hand(scene)
    assert result.hand is not None
    assert result.hand.to_json() == truth.to_json()
    assert result.score is not None and result.score.valid
    assert result.score.total_fan == score(truth, WinContext(), CHENGDU).total_fan


@needs_model
@pytest.mark.parametrize("name", SCENES)
def test_bundled_close_ups_read_as_their_true_hand_with_the_shipped_models(name: str) -> None:
    from vision.detect.detector import Detector

    result = score_photo((EXAMPLES / f"{name}.jpg").read_bytes(), Detector(), WinContext(), CHENGDU)
    truth = _truth_hand(_scene(name))
    assert result.hand is not None and sorted(result.hand.concealed) == sorted(truth.concealed)
    assert sorted((m.tile, m.kind.is_kong) for m in result.hand.melds) == sorted(
        (m.tile, m.kind.is_kong) for m in truth.melds
    )
    if name == "hand":
        # the pong 1m's turned tile, drawn by the localiser as two boxes on its halves, is read as one tile
        # (vision.detect.rowfit.join_halves): nothing to leave out, a pong of three boxes
        assert not [w for w in result.grouping.warnings if w.code is WarningCode.LEFT_OUT_TILE]
        ones = [
            g
            for g in result.grouping.groups
            if g.role is GroupRole.MELD and result.detections.class_ids[g.indices[0]] == CLASS_IDS["m1"]
        ]
        assert [len(g.indices) for g in ones] == [3]


def test_smj_score_of_a_photo_of_a_waiting_hand_lists_its_waits(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from api.fakes import FakeDetector
    from vision import cli as vision_cli

    waiting = FakeDetector((("2m3m3m4m5m6p6p9p9p9p",), ("2p2p2p2p",)))  # 23345m66999p + kong 2p: waits 1m, 4m
    monkeypatch.setattr(vision_cli, "load_detector", lambda args: waiting)
    assert smj.main(["score", str(EXAMPLES / "hand.jpg")]) == 1
    out = capsys.readouterr().out
    assert "wrong_tile_count" in out and "叫 Waits (2):" in out and out.count("规则 Preset") == 1
    assert smj.main(["score", str(EXAMPLES / "hand.jpg"), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert [wait["tile"] for wait in payload["waits"]["waits"]] == ["1m", "4m"]
