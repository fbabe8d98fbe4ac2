"""Loading an ultralytics ONNX export with ONNX Runtime: the one way both models of the detector do it."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class OnnxModel:
    session: Any  # onnxruntime.InferenceSession
    names: list[str]  # class names in the model's own order
    imgsz: int  # the input size it was exported at
    metadata: dict[str, str]

    @property
    def input(self) -> Any:  # onnxruntime.NodeArg: name and shape (ints, or names for dynamic axes)
        return self.session.get_inputs()[0]


TASKS = {
    "detect": "a tile localiser (models/tiles.onnx)",
    "classify": "a tile classifier (models/tile_faces.onnx)",
}


def load_onnx(weights: Path, threads: int | None, error: type[Exception], task: str) -> OnnxModel:
    """Open ``weights`` on the CPU as a model of ultralytics' ``task`` ("detect" or "classify"); anything
    unusable, a model of the other task included, raises ``error`` with a message naming the file."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        session = ort.InferenceSession(str(weights), options, providers=["CPUExecutionProvider"])
    except Exception as failure:  # onnxruntime raises its own untyped errors
        raise error(f"{weights}: not a loadable ONNX model ({failure})") from None
    metadata = dict(session.get_modelmeta().custom_metadata_map)
    found = metadata.get("task", task)
    if found != task:
        kind = TASKS.get(found, f"a {found!r} model")
        raise error(f"{weights}: {kind}, where {TASKS[task]} is needed")
    text = metadata.get("names", "")
    if not text:
        raise error(
            f"{weights}: the ONNX model has no class names in its metadata; export it with 'smj ship'"
        )
    names = ast.literal_eval(text)  # ultralytics stores them as a Python dict literal
    imgsz = int(json.loads(metadata["imgsz"])[0]) if metadata.get("imgsz") else 640
    return OnnxModel(session, [names[i] for i in sorted(names)], imgsz, metadata)
