"""Class names of other datasets: the public sets' own spellings, a --map-file, and every unknown name
listed in one run (``datasets.labels``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from dataset_builders import make_image

import smj
from datasets.labels import DatasetError, class_id_for_name, map_class_names, read_map_file
from datasets.yolo import read_yolo
from vision.detections import DETECTOR_CLASSES, HONOUR


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sb1", "s1"),  # Roboflow: s<suit><rank>, b bamboo
        ("sc9", "m9"),  # c characters
        ("sd5", "p5"),  # d dots
        ("0m", "m5"),  # Riichi red fives
        ("0p", "p5"),
        ("0s", "s5"),
        ("1z", "honour"),  # Riichi winds and dragons
        ("7z", "honour"),
        ("bonus-flower-plum", "honour"),
        ("bonus-season-2", "honour"),
        ("wind_east", "honour"),
        ("dragon red", "honour"),
        ("Flowers", "honour"),
    ],
)
def test_public_datasets_spellings(name: str, expected: str) -> None:
    assert DETECTOR_CLASSES[class_id_for_name(name)] == expected


@pytest.mark.parametrize(
    "name", ["joker_x", "joker", "blank tile", "windmill", "dragonfly", "8z", "se1", "0x"]
)
def test_names_no_rule_covers_are_unknown(name: str) -> None:
    """A pattern that took any name after 'joker' or 'wind' sent them to honour unasked."""
    with pytest.raises(DatasetError, match="unknown class name"):
        class_id_for_name(name)


def test_every_unknown_name_is_listed_at_once() -> None:
    with pytest.raises(DatasetError) as caught:
        map_class_names(["m1", "joker_x", "mystery", "1z", "zz"])
    message = str(caught.value)
    assert message.startswith("3 unknown class names 'joker_x', 'mystery', 'zz'")
    assert "--map-file" in message
    assert map_class_names(["joker_x", "1z"], {"joker_x": "drop"}) == {"joker_x": None, "1z": HONOUR}


def _foreign_set(tmp_path: Path) -> Path:
    """A YOLO set whose names are a Riichi / home-made mix: three of them unknown."""
    root = tmp_path / "foreign"
    names = ["0p", "joker_x", "mystery", "sb3", "zz"]
    (root).mkdir()
    (root / "data.yaml").write_text(yaml.safe_dump({"names": names}))
    for split in ("train", "valid"):
        make_image(root / split / "images" / f"{split}.png")
        (root / split / "labels").mkdir(parents=True)
        lines = "".join(f"{index} 0.5 0.5 0.1 0.1\n" for index in range(len(names)))
        (root / split / "labels" / f"{split}.txt").write_text(lines)
    return root


def test_import_lists_every_unknown_name_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _foreign_set(tmp_path)
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "out")]
    assert smj.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 unknown class names 'joker_x', 'mystery', 'zz'" in err


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".txt"])
def test_a_map_file_maps_them(tmp_path: Path, suffix: str) -> None:
    root = _foreign_set(tmp_path)
    entries = {"joker_x": "drop", "mystery": "honour", "zz": "m1"}
    map_file = tmp_path / f"map{suffix}"
    if suffix == ".yaml":
        map_file.write_text(yaml.safe_dump(entries))
    elif suffix == ".json":
        map_file.write_text(json.dumps(entries))
    else:
        map_file.write_text("# name=class\njoker_x=drop\nmystery, honour\nzz\tm1\n")
    assert read_map_file(map_file) == entries
    out = tmp_path / "out"
    argv = [
        "dataset",
        "import",
        "--format",
        "yolo",
        str(root),
        "--out",
        str(out),
        "--map-file",
        str(map_file),
    ]
    assert smj.main([*argv, "--map", "zz=s9"]) == 0  # --map wins over the file
    (item, *_) = read_yolo(out)
    assert [DETECTOR_CLASSES[b.class_id] for b in item.boxes] == ["p5", "honour", "s3", "s9"]


def test_bad_targets_of_a_map_file_are_all_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _foreign_set(tmp_path)
    map_file = tmp_path / "map.txt"
    map_file.write_text("joker_x=jokers\nmystery=honour\nzz=10m\n")
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "out")]
    assert smj.main([*argv, "--map-file", str(map_file)]) == 2
    err = capsys.readouterr().err
    assert "joker_x=jokers" in err and "zz=10m" in err and "mystery" not in err
