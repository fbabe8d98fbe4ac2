"""Synthetic training scenes: photo-like pictures of a Sichuan mahjong winning hand with exact labels.

Public surface: ``render_scene`` (one scene as a ``Scene``: RGB image, labelled ``SceneBox``es, the true
``Hand``, ``win_apart``), ``SceneOptions``, ``write_dataset`` (a YOLO folder plus ``scenes.jsonl``) and
``cli.register_synth`` (``smj dataset synth``). They are imported on first use, so that registering the
command (``datasets.synth.cli``) stays light.

Modules, in the order a scene is made: ``hands`` (random winning hands), ``look`` (a tile set's look:
sizes, colours, faces from ``faces``/``ink``/``fonts`` or from ``art`` folders), ``layout`` (the player's
hand and melds), ``aim``/``camera`` (the hand-held camera), ``clutter``/``props`` (discards, other
players' tiles, walls, strays, distractors), ``table`` (table tops and shadows), ``tile_body`` (2.5-D
tiles drawn with an id buffer), ``boxes`` (labels from the id buffer), ``photo`` (camera effects),
``scene`` (all of it), ``writer`` (the output folder).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets.synth.boxes import SceneBox
    from datasets.synth.scene import Scene, SceneOptions, render_scene
    from datasets.synth.writer import write_dataset

__all__ = ["Scene", "SceneBox", "SceneOptions", "render_scene", "write_dataset"]
_HOMES = {
    "SceneBox": "boxes",
    "Scene": "scene",
    "SceneOptions": "scene",
    "render_scene": "scene",
    "write_dataset": "writer",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"datasets.synth.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'datasets.synth' has no attribute {name!r}")
