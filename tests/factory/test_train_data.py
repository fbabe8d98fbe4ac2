"""Training the localiser: combined datasets (train parts train, val parts and --val datasets validate), and
the options `smj train` hands to its recipe."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vision.detections import DETECTOR_CLASSES
from vision.factory.train import combined_data_yaml


def _dataset(root: Path, train: str, val: str, names: list[str] | None = None) -> Path:
    root.mkdir(parents=True)
    names = names or list(DETECTOR_CLASSES)
    data = {"path": str(root), "train": train, "val": val, "names": dict(enumerate(names))}
    (root / "data.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return root


def test_parts_go_where_they_belong(tmp_path: Path) -> None:
    real = _dataset(tmp_path / "real", "images/train", "images/val")
    synth = _dataset(tmp_path / "synth", "images", "images")  # no val part of its own
    held_out = _dataset(tmp_path / "held", "images", "images")
    config = yaml.safe_load(combined_data_yaml([real, synth], tmp_path / "run", [held_out]).read_text())
    assert config["train"] == [str(real / "images/train"), str(synth / "images")]
    assert config["val"] == [str(real / "images/val"), str(held_out / "images")]
    assert list(config["names"].values()) == list(DETECTOR_CLASSES)


def test_other_classes_or_a_missing_dataset_are_refused(tmp_path: Path) -> None:
    other = _dataset(tmp_path / "other", "images", "images", ["a", "b"])
    with pytest.raises(ValueError, match="classes differ"):
        combined_data_yaml([other], tmp_path / "run")
    with pytest.raises(FileNotFoundError, match=r"no data\.yaml"):
        combined_data_yaml([tmp_path / "none"], tmp_path / "run")


def test_smj_train_hands_the_gpu_options_to_the_localisers_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import smj
    from vision.factory import train as training

    given: list[training.Recipe] = []

    def fake_train(data_dirs: list[str], out: str, recipe: training.Recipe, **kwargs: object) -> Path:
        given.append(recipe)
        return Path(out) / "weights" / "best.pt"

    monkeypatch.setattr(training, "train", fake_train)
    args = ["train", "--data", "a,b", "--out", str(tmp_path / "run"), "--batch", "128"]
    gpu = ["--hours", "0.11", "--close-mosaic", "6", "--workers", "14", "--cache", "ram", "--device", "0"]
    assert smj.main([*args, *gpu]) == 0
    recipe = given[-1]
    assert (recipe.time, recipe.close_mosaic, recipe.workers, recipe.cache, recipe.batch) == (
        0.11,
        6,
        14,
        "ram",
        128,
    )
    assert smj.main(args) == 0  # without them: the recipe's own (a CPU run of fixed epochs)
    assert (given[-1].time, given[-1].close_mosaic, given[-1].cache) == (None, 2, False)
    # what only the localiser has is refused for the classifier, each by name, before any data is read
    out = str(tmp_path / "classifier")
    for extra, named in (
        (["--hours", "1"], "--hours"),
        (["--close-mosaic", "3"], "--close-mosaic"),
        (["--cache", "ram"], "--cache"),
        (["--freeze", "11"], "--freeze"),
        (["--workers", "4"], "--workers is for the localiser"),
        (["--low-res", "0.4", "--backbone", "yolo26n-cls"], "--low-res is for the pretrained classifiers"),
        (["--low-res", "1.5"], "--low-res 1.5: give a share between 0 and 1"),
    ):
        assert smj.main(["train", "--task", "classify", "--data", str(tmp_path), "--out", out, *extra]) == 2
        assert named in capsys.readouterr().err
    # and what cannot be meant
    assert smj.main([*args, "--hours", "0"]) == 2
    assert "--hours 0.0: give a time above 0" in capsys.readouterr().err
    assert smj.main([*args, "--light", "--close-mosaic", "3"]) == 2
    assert "--light" in capsys.readouterr().err
    assert smj.main([*args, "--freeze", "0"]) == 2
    assert "--freeze 0: give a number of layers above 0" in capsys.readouterr().err
    assert smj.main([*args, "--freeze", "11"]) == 0  # a fine-tune keeping the backbone it starts from
    assert given[-1].freeze == 11 and given[-2].freeze is None
    assert smj.main([*args, "--low-res", "0.4"]) == 2  # the localiser's crops are not cut small
    assert "--low-res is for the pretrained classifiers" in capsys.readouterr().err
    assert len(given) == 3 and not (tmp_path / "classifier").exists()


def test_smj_train_hands_the_low_resolution_share_to_the_classifiers_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import smj
    from vision.factory import face_net

    given: list[face_net.FaceNetRecipe] = []

    def fake_train(data: str, out: str, recipe: face_net.FaceNetRecipe, **kwargs: object) -> Path:
        given.append(recipe)
        return Path(out) / "weights" / "best.pt"

    monkeypatch.setattr(face_net, "train_face_net", fake_train)
    args = ["train", "--task", "classify", "--data", str(tmp_path), "--out", str(tmp_path / "run")]
    assert smj.main([*args, "--low-res", "0.4"]) == 0
    assert smj.main(args) == 0
    assert [recipe.low_res_p for recipe in given] == [0.4, 0.0]
    assert smj.main([*args, "--distill", "0.5", "--model", str(tmp_path / "start.pt")]) == 0
    assert given[-1].distill == 0.5 and given[-2].distill == 0.0


def test_smj_train_refuses_a_distillation_with_nothing_to_keep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import smj

    args = ["train", "--task", "classify", "--data", str(tmp_path), "--out", str(tmp_path / "run")]
    assert smj.main([*args, "--distill", "0.5"]) == 2
    assert "the --model it keeps" in capsys.readouterr().err
    assert smj.main([*args, "--distill", "-1", "--model", "x.pt"]) == 2
    assert smj.main([*args[:2], "detect", *args[3:], "--distill", "0.5"]) == 2
    assert "--distill is for the pretrained classifiers" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
