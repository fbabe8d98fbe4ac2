"""Copies of one photo, found by content (``datasets.duplicates``), and kept out of two splits.

A byte-for-byte copy and a re-encoded, resized copy of a real photo under other names are found; a
different photo is not. ``smj dataset import`` keeps each group in one split, splits a source that has
no validation split by source photo (never ``val: images/train``), and ``check`` reports the copies.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from PIL import Image, ImageDraw

import smj
from datasets.check import check_dataset
from datasets.duplicates import find_duplicates, perceptual_hash
from datasets.labels import Box, LabelledImage
from datasets.yolo import read_yolo, write_yolo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def reencoded(source: Path, target: Path, scale: float = 0.6, quality: int = 60) -> Path:
    with Image.open(source) as image:
        smaller = image.resize((round(image.width * scale), round(image.height * scale)))
        out = io.BytesIO()
        smaller.save(out, "JPEG", quality=quality)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(out.getvalue())
    return target


@pytest.fixture
def photos(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "photos"
    folder.mkdir()
    original = shutil.copy(EXAMPLES / "hand.jpg", folder / "hand.jpg")
    return {
        "original": Path(original),
        "copy": Path(shutil.copy(EXAMPLES / "hand.jpg", folder / "IMG_0001.jpg")),
        "reencoded": reencoded(EXAMPLES / "hand.jpg", folder / "smaller.jpg"),
        "other": Path(shutil.copy(EXAMPLES / "hand_melds.jpg", folder / "melds.jpg")),
    }


def test_a_copied_and_a_reencoded_photo_are_found(photos: dict[str, Path]) -> None:
    groups = find_duplicates(photos.values())
    assert len(groups) == 1
    (group,) = groups
    assert set(group.paths) == {photos["original"], photos["copy"], photos["reencoded"]}
    assert not group.exact
    exact = find_duplicates([photos["original"], photos["copy"], photos["other"]])
    assert [set(g.paths) for g in exact] == [{photos["original"], photos["copy"]}] and exact[0].exact


def test_different_photos_are_far_apart(photos: dict[str, Path]) -> None:
    near = perceptual_hash(photos["original"])
    far = perceptual_hash(photos["other"])
    assert near is not None and far is not None
    assert (near ^ far).bit_count() > 12
    assert (near ^ (perceptual_hash(photos["reencoded"]) or 0)).bit_count() <= 6


def _split_dataset(tmp_path: Path, photos: dict[str, Path]) -> Path:
    """A YOLO set whose val split holds a re-encoded copy of a train photo, and another photo."""
    boxes = (Box(0, 0.5, 0.5, 0.1, 0.1),)
    items = [
        LabelledImage(photos["original"], boxes, 1024, 768, source="hand", split="train"),
        LabelledImage(photos["reencoded"], boxes, 614, 461, source="smaller", split="val"),
        LabelledImage(photos["other"], boxes, 1024, 768, source="melds", split="val"),
    ]
    root = tmp_path / "src"
    write_yolo(items, root)
    return root


def test_check_reports_copies_in_two_splits(tmp_path: Path, photos: dict[str, Path]) -> None:
    root = _split_dataset(tmp_path, photos)
    leaks = [w for w in check_dataset(root).warnings if w.kind == "split_leak"]
    assert len(leaks) == 1
    assert "hand.jpg" in leaks[0].message and "smaller.jpg" in leaks[0].message
    assert "train and val" in leaks[0].message


def test_import_keeps_each_group_of_copies_in_one_split(tmp_path: Path, photos: dict[str, Path]) -> None:
    root = _split_dataset(tmp_path, photos)
    out = tmp_path / "out"
    assert smj.main(["dataset", "import", "--format", "yolo", str(root), "--out", str(out)]) == 0
    split_of = {item.image.name: item.split for item in read_yolo(out)}
    assert split_of["hand.jpg"] == split_of["smaller.jpg"] == "train"
    assert split_of["melds.jpg"] == "val"  # the rest keeps the splits it came with
    assert not [w for w in check_dataset(out).warnings if w.kind == "split_leak"]


def test_a_source_without_a_val_split_is_split_by_source(tmp_path: Path) -> None:
    items = []
    for index in range(10):
        path = tmp_path / "raw" / f"p{index}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.effect_noise((64, 48), 40 + index * 5).convert("RGB").save(path)
        items.append(
            LabelledImage(path, (Box(0, 0.5, 0.5, 0.1, 0.1),), 64, 48, source=f"p{index}", split="train")
        )
    root = tmp_path / "train_only"
    write_yolo(items, root)
    data = yaml.safe_load((root / "data.yaml").read_text())
    assert "val" not in data  # written with train only: no val that is train
    out = tmp_path / "out"
    assert smj.main(["dataset", "import", "--format", "yolo", str(root), "--out", str(out)]) == 0
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["val"] == "images/val" and data["train"] == "images/train"
    splits = {item.source: item.split for item in read_yolo(out)}
    assert set(splits.values()) == {"train", "val", "test"}


def test_split_keeps_copies_together_without_a_sources_file(tmp_path: Path, photos: dict[str, Path]) -> None:
    """Twelve photos, each its own source (no sources.csv), four of them copies of others: however the
    ratios fall, every copy lands in its original's part."""
    root = tmp_path / "flat"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    shutil.copy(photos["original"], root / "images" / "a.jpg")
    shutil.copy(photos["original"], root / "images" / "a_copy.jpg")
    shutil.copy(photos["reencoded"], root / "images" / "a_small.jpg")
    for index in range(9):
        image = Image.new("RGB", (320, 240), (index * 25, 255 - index * 25, (index * 70) % 255))
        ImageDraw.Draw(image).rectangle((20 + index * 20, 30, 80 + index * 20, 120), fill=(250, 250, 240))
        image.save(root / "images" / f"other{index}.jpg", quality=90)
    for image in (root / "images").iterdir():
        (root / "labels" / f"{image.stem}.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (root / "classes.txt").write_text("m1\n")
    for seed_ratio in ("0.34,0.33,0.33", "0.5,0.25,0.25", "0.7,0.2,0.1"):
        out = tmp_path / f"split_{seed_ratio}"
        assert smj.main(["dataset", "split", str(root), "--ratios", seed_ratio, "--out", str(out)]) == 0
        split_of = {item.image.name: item.split for item in read_yolo(out)}
        assert split_of["a.jpg"] == split_of["a_copy.jpg"] == split_of["a_small.jpg"]
        assert not [w for w in check_dataset(out).warnings if w.kind == "split_leak"]
