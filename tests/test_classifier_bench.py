"""The classifier benchmark reads labelled synthetic tiles with the shipped classifier, per style."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark

from datasets.synth.scene import SceneOptions
from datasets.synth.writer import write_dataset


def _bench() -> object:
    module = load_benchmark("bench_classifier")
    return module


def test_benchmark_reads_the_hand_tiles_of_a_few_scenes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_dataset(tmp_path, 2, seed=11, options=SceneOptions(size=(640, 480)), progress=False)
    assert _bench().main([str(tmp_path)]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    counts = {
        key.strip(): (int(n), float(rate))
        for key, n, rate in re.findall(r"  (.+?)\s+(\d+) tiles  top-1 ([\d.]+)", out)
    }
    hand_tiles = sum(1 for _ in (tmp_path / "labels").rglob("*.txt"))  # scenes written
    assert hand_tiles == 2 and counts["all"][0] >= 14  # at least one whole hand read
    assert counts["all"][0] == counts["role hand"][0] + counts.get("role meld", (0, 0.0))[0]
    assert counts["all"][0] == sum(n for key, (n, _) in counts.items() if key.startswith("suit "))
    assert 0.5 <= counts["all"][1] <= 1.0  # the shipped classifier reads most hand tiles of its own renderer


def test_benchmark_says_when_there_is_nothing_to_read(tmp_path: Path) -> None:
    (tmp_path / "scenes.jsonl").write_text("", encoding="utf-8")
    assert _bench().main([str(tmp_path)]) == 2  # type: ignore[attr-defined]


def test_benchmark_reads_rendered_crops_of_fresh_styles(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench().main(["--rendered", "60", "--seed", "3"]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    counts = {
        key.strip(): (int(n), float(rate))
        for key, n, rate in re.findall(r"  (.+?)\s+(\d+) tiles  top-1 ([\d.]+)", out)
    }
    assert counts["all"][0] == 60 and "first view only" in out
    assert counts["all"][0] == sum(n for key, (n, _) in counts.items() if key.startswith("suit "))
    assert 0.3 <= counts["all"][1] <= 1.0  # the shipped classifier reads most of them


def test_the_shipped_classifier_reads_tile_sets_it_never_trained_on() -> None:
    from datasets.synth.face_crops import rendered_crops
    from vision.classifier import CLASSIFIER_CLASSES, TileClassifier
    from vision.detector import DEFAULT_CLASSIFIER, MODELS_DIR

    classifier = TileClassifier(DEFAULT_CLASSIFIER)
    named = list(rendered_crops(300, seed=_bench().RENDERED_SEED, size=classifier.imgsz))  # type: ignore[attr-defined]
    read = classifier.probabilities(np.stack([crop for _, crop in named])).argmax(1)
    right = np.mean([CLASSIFIER_CLASSES[k] == name for k, (name, _) in zip(read, named, strict=True)])
    floor = json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))["test_floors"][
        "rendered_top1"
    ]
    assert right >= floor > 0.5


@pytest.mark.parametrize("argv", [[], ["somewhere", "--rendered", "5"]])
def test_benchmark_wants_one_source(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        _bench().main(argv)  # type: ignore[attr-defined]


def test_the_shipped_classifier_reads_red_fives_as_fives() -> None:
    """A red five (赤五: a five printed in red, common in Japanese and generic sets) is its plain five."""
    from datasets.synth.face_crops import rendered_crops
    from vision.classifier import CLASSIFIER_CLASSES, TileClassifier
    from vision.detector import DEFAULT_CLASSIFIER, MODELS_DIR

    classifier = TileClassifier(DEFAULT_CLASSIFIER)
    named = list(
        rendered_crops(
            120,
            seed=_bench().RENDERED_SEED,  # type: ignore[attr-defined]
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
