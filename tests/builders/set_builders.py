"""A set the shipped classifier misreads, rendered: procedural style ``STYLE`` with its 4 筒 printed with a
small red flower between the four pips, as some sets print it (``SceneOptions.flower_four``: the classifier
reads it as a 5 筒 in every copy). ``render`` writes a scene of the set as a JPEG and returns its true
hand's JSON (``{}`` for a photo of the layout)."""

from __future__ import annotations

from pathlib import Path

import cv2

from scoring.tiles import CLASS_NAMES

STYLE = 5  # procedural faces the classifier reads right, but for the 4 筒 drawn here
P4 = CLASS_NAMES.index("p4")
LAYOUT_SEED, HAND_SEED, HAND_INDEX = 2, 2, 3  # a layout photo that reads, a hand holding a 4 筒


def render(path: Path, seed: int, index: int, **options: object) -> dict[str, object]:
    from datasets.synth.scene import SceneOptions, render_scene

    size = (1024, 768)
    options = {"size": size, "style": STYLE, "art_p": 0, "flower_four": True, **options}
    scene = render_scene(seed, index, size, options=SceneOptions(**options))  # type: ignore[arg-type]
    cv2.imwrite(str(path), cv2.cvtColor(scene.image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return {} if scene.hand is None else scene.hand.to_json()


def layout_and_hand(folder: Path) -> tuple[Path, Path, dict[str, object]]:
    """The set's layout photo, a hand of it holding a 4 筒, and that hand's truth."""
    layout, hand = folder / "layout.jpg", folder / "hand.jpg"
    render(layout, LAYOUT_SEED, 0, calibration=True)
    truth = render(hand, HAND_SEED, HAND_INDEX, honour_p=0.0, winning_p=1.0)
    return layout, hand, truth
