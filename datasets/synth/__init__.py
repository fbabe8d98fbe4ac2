"""Synthetic training scenes: photo-like pictures of a Sichuan mahjong winning hand with exact labels.

Public surface: ``render_scene`` (one scene as a ``Scene``: image, labelled boxes, the true ``Hand``),
``SceneOptions``, ``SceneBox``, ``write_dataset`` (a YOLO folder plus ``scenes.jsonl``) and the CLI's
``register_synth``. Modules: ``faces`` (procedural face ink), ``art`` (``--art`` folders), ``tile_body``
(2.5-D tile bodies), ``layout``/``clutter`` (where tiles lie), ``scene`` (one scene), ``photo`` (camera
effects), ``writer`` (the output folder).
"""

from datasets.synth.scene import Scene, SceneBox, SceneOptions, render_scene
from datasets.synth.writer import write_dataset

__all__ = ["Scene", "SceneBox", "SceneOptions", "render_scene", "write_dataset"]
