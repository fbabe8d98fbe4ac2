"""The grouper on the synthetic renderer's scenes: the true boxes of 3-D rendered hands, read back.

The scenes' labelled boxes stand in for a perfect detector (they are tight boxes of each tile's visible
outline, top and sides included). A concealed kong the renderer shows all face up reads as an exposed
kong, as it must: the photo cannot tell them apart.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from scoring.hand import Hand, Meld, MeldKind
from vision.detections import BACK, Detections
from vision.grouping.grouper import group_detections

synth = pytest.importorskip("datasets.synth")

SCENES = 20
SEED = 11


def visible_hand(scene: synth.Scene) -> Counter[Meld]:  # type: ignore[name-defined]
    """The true melds, a concealed kong with no back showing read as exposed."""
    with_backs = {b.group for b in scene.boxes if b.role == "meld" and b.class_id == BACK}
    return Counter(
        Meld(MeldKind.KONG_EXPOSED, meld.tile)
        if meld.kind is MeldKind.KONG_CONCEALED and index not in with_backs
        else meld
        for index, meld in enumerate(scene.hand.melds)
    )


def read_scenes(clutter: bool) -> tuple[int, int, list[str]]:
    """(exact hands, scenes, what went wrong where)."""
    options = synth.SceneOptions(clutter=clutter, props=False, photo=False, honour_p=0.0)
    exact, wrong = 0, []
    for index in range(SCENES):
        scene = synth.render_scene(SEED, index, size=(960, 720), options=options)
        detections = Detections(
            np.array([b.box for b in scene.boxes], np.float32),
            np.array([b.class_id for b in scene.boxes], np.int64),
            np.ones(len(scene.boxes), np.float32),
            (scene.width, scene.height),
        )
        hand: Hand | None = group_detections(detections).hand
        if (
            hand is not None
            and Counter(hand.concealed) == Counter(scene.hand.concealed)
            and Counter(hand.melds) == visible_hand(scene)
            and (hand.win_tile == scene.hand.win_tile or not scene.win_apart)
        ):
            exact += 1
        else:
            wrong.append(f"scene {index}: {scene.hand.to_json()} read as {hand.to_json() if hand else None}")
    return exact, SCENES, wrong


@pytest.mark.slow
def test_clean_scenes_read_exactly() -> None:
    exact, total, wrong = read_scenes(clutter=False)
    print(f"exact-hand rate on clean synthetic scenes: {exact}/{total}")
    assert exact >= total - 1, "\n".join(wrong)


@pytest.mark.slow
def test_cluttered_scenes_mostly_read() -> None:
    """Discards, other players' rows and melds, walls, strays: most hands still read exactly."""
    exact, total, wrong = read_scenes(clutter=True)
    print(f"exact-hand rate on cluttered synthetic scenes: {exact}/{total}")
    assert exact >= 0.7 * total, "\n".join(wrong)
