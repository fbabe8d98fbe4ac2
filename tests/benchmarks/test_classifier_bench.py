"""The classifier benchmark, through ``measure_scenes`` and ``measure_rendered``: the shipped classifier's
top-1 on labelled synthetic tiles and on rendered crops, per style, role and suit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark

from datasets.synth.scene import SceneOptions
from datasets.synth.writer import write_dataset
from vision.detect.classifier import TileClassifier
from vision.detect.detector import DEFAULT_CLASSIFIER

bench = load_benchmark("bench_classifier")


@pytest.fixture(scope="module")
def classifier() -> TileClassifier:
    return TileClassifier(DEFAULT_CLASSIFIER)


def _adds_up(result) -> None:  # type: ignore[no-untyped-def]
    """Every tile read is counted once under ``all`` and once under its suit, each rate in [0, 1], and the
    confusions are the tiles read wrong."""
    assert next(iter(result.tiles)) == "all" and list(result.tiles) == list(result.right)
    assert result.tiles["all"] == sum(n for key, n in result.tiles.items() if key.startswith("suit "))
    assert result.right["all"] == sum(n for key, n in result.right.items() if key.startswith("suit "))
    assert all(0.0 <= result.rate(key) <= 1.0 for key in result.tiles)
    assert sum(n for _, _, n in result.confusions) == result.tiles["all"] - result.right["all"]
    counts = [n for _, _, n in result.confusions]
    assert counts == sorted(counts, reverse=True)


def test_benchmark_reads_the_hand_tiles_of_a_few_scenes(tmp_path: Path, classifier: TileClassifier) -> None:
    write_dataset(tmp_path, 2, seed=11, options=SceneOptions(size=(640, 480)), progress=False)
    result = bench.measure_scenes(classifier, tmp_path, {"hand", "meld"})
    hand_tiles = sum(1 for _ in (tmp_path / "labels").rglob("*.txt"))  # scenes written
    assert hand_tiles == 2 and result.tiles["all"] >= 14  # at least one whole hand read
    assert result.tiles["all"] == result.tiles["role hand"] + result.tiles.get("role meld", 0)
    assert result.tiles["all"] == sum(n for key, n in result.tiles.items() if key.startswith("style "))
    _adds_up(result)
    assert 0.5 <= result.rate("all") <= 1.0  # the shipped classifier reads most tiles of its own renderer
    hand = bench.measure_scenes(classifier, tmp_path, {"hand"})
    assert hand.tiles["all"] == hand.tiles["role hand"] == result.tiles["role hand"]
    assert "role meld" not in hand.tiles
    assert bench.main([str(tmp_path)]) == 0


def test_benchmark_says_when_there_is_nothing_to_read(tmp_path: Path, classifier: TileClassifier) -> None:
    (tmp_path / "scenes.jsonl").write_text("", encoding="utf-8")
    nothing = bench.measure_scenes(classifier, tmp_path, {"hand", "meld"})
    assert nothing.tiles == nothing.right == {} and nothing.confusions == ()
    assert bench.main([str(tmp_path)]) == 2


def test_benchmark_reads_rendered_crops_of_fresh_styles(classifier: TileClassifier) -> None:
    result = bench.measure_rendered(classifier, 60, seed=3)
    assert result.tiles["all"] == 60 and not any(key.startswith(("role ", "style ")) for key in result.tiles)
    _adds_up(result)
    assert 0.3 <= result.rate("all") <= 1.0  # the shipped classifier reads most of them
    assert bench.measure_rendered(classifier, 60, seed=3) == result  # seeded
    fives = bench.measure_rendered(classifier, 12, seed=3, red_fives=True)
    assert fives.tiles["all"] == 12 and set(fives.tiles) <= {"all", "suit m", "suit p", "suit s"}
    assert bench.main(["--rendered", "6", "--seed", "3"]) == 0


def test_the_shipped_classifier_reads_tile_sets_it_never_trained_on(classifier: TileClassifier) -> None:
    from datasets.synth.face_crops import rendered_crops
    from vision.contract import CLASSIFIER_CLASSES
    from vision.detect.detector import MODELS_DIR

    named = list(rendered_crops(300, seed=bench.RENDERED_SEED, size=classifier.imgsz))
    read = classifier.probabilities(np.stack([crop for _, crop in named])).argmax(1)
    right = np.mean([CLASSIFIER_CLASSES[k] == name for k, (name, _) in zip(read, named, strict=True)])
    floor = json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))["test_floors"][
        "rendered_top1"
    ]
    assert right >= floor > 0.5


@pytest.mark.parametrize("argv", [[], ["somewhere", "--rendered", "5"]])
def test_benchmark_wants_one_source(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(argv)


def test_the_shipped_classifier_reads_red_fives_as_fives(classifier: TileClassifier) -> None:
    """A red five (赤五: a five printed in red, common in Japanese and generic sets) is its plain five."""
    from datasets.synth.face_crops import rendered_crops
    from vision.contract import CLASSIFIER_CLASSES
    from vision.detect.detector import MODELS_DIR

    named = list(
        rendered_crops(
            120,
            seed=bench.RENDERED_SEED,
            size=classifier.imgsz,
            red_five_p=1.0,
            classes=("m5", "p5", "s5"),
        )
    )
    read = classifier.probabilities(np.stack([crop for _, crop in named])).argmax(1)
    right = np.mean([CLASSIFIER_CLASSES[k] == name for k, (name, _) in zip(read, named, strict=True)])
    floor = json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))["test_floors"][
        "red_five_top1"
    ]
    assert right >= floor > 0.8
