"""Loading an ultralytics ONNX export with ONNX Runtime: the one way both models of the detector do it, with
the session settings of ``models/manifest.json`` (``Runtime``)."""

from __future__ import annotations

import ast
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GRAPH_LEVELS = ("disable", "basic", "extended", "all")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Runtime:
    """ONNX Runtime's session settings for both models: the ``runtime`` object of the manifest beside the
    weights (``models/manifest.json``), measured for the machine the models ship to
    (``benchmarks/bench_runtime.py``)."""

    intra_op_threads: int = 0  # threads one model call uses; 0: ONNX Runtime's choice, one per core
    graph_optimization: str = "all"  # one of GRAPH_LEVELS: how far ONNX Runtime rewrites the graph on load
    cpu_mem_arena: bool = True  # reuse a grown arena across calls (False: allocate each call's tensors anew)
    # the intra-op threads spin, waiting for work, after each call (ONNX Runtime's default); False: they
    # sleep, leaving the cores to the work between model calls (crops, rows, grouping) and to other workers
    spinning: bool = True

    def __post_init__(self) -> None:
        if self.intra_op_threads < 0:
            raise ValueError(f"runtime: intra_op_threads {self.intra_op_threads} is negative")
        if self.graph_optimization not in GRAPH_LEVELS:
            raise ValueError(f"runtime: graph_optimization must be one of {GRAPH_LEVELS}")

    @classmethod
    def beside(cls, weights: Path) -> Runtime:
        """The settings of the manifest in the weights' folder (the defaults where it has none); settings
        of unknown names or values raise ``ValueError`` naming the manifest."""
        manifest = weights.parent / "manifest.json"
        try:
            settings = json.loads(manifest.read_text(encoding="utf-8")).get("runtime", {})
        except (OSError, ValueError):
            return cls()
        try:
            return cls(**settings)
        except (TypeError, ValueError) as failure:
            raise ValueError(f"{manifest}: unusable runtime settings ({failure})") from None

    def per_worker(self, workers: int, cores: int) -> int:
        """Threads one model call takes in each of ``workers`` processes sharing ``cores``: the manifest's
        threads (or one per core) divided among them, at least one, so N busy workers keep the cores busy
        without running N times as many threads as there are cores."""
        if workers < 1 or cores < 1:
            raise ValueError(f"per_worker: workers ({workers}) and cores ({cores}) must be at least 1")
        return max(1, (self.intra_op_threads or cores) // workers)

    def options(self, threads: int | None = None) -> Any:
        """``onnxruntime.SessionOptions`` with these settings; ``threads`` overrides ``intra_op_threads``."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads or self.intra_op_threads:
            options.intra_op_num_threads = threads or self.intra_op_threads
        levels = ort.GraphOptimizationLevel
        options.graph_optimization_level = {
            "disable": levels.ORT_DISABLE_ALL,
            "basic": levels.ORT_ENABLE_BASIC,
            "extended": levels.ORT_ENABLE_EXTENDED,
            "all": levels.ORT_ENABLE_ALL,
        }[self.graph_optimization]
        options.enable_cpu_mem_arena = self.cpu_mem_arena
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        return options


@dataclass(frozen=True)
class OnnxModel:
    session: Any  # onnxruntime.InferenceSession
    names: list[str]  # class names in the model's own order
    imgsz: int  # the input size it was exported at
    metadata: dict[str, str]
    runtime: Runtime  # the session settings it was opened with

    @property
    def input(self) -> Any:  # onnxruntime.NodeArg: name and shape (ints, or names for dynamic axes)
        return self.session.get_inputs()[0]


TASKS = {
    "detect": "a tile localiser (models/tiles.onnx)",
    "classify": "a tile classifier (models/tile_faces.onnx)",
}


def load_onnx(
    weights: Path, threads: int | None, error: type[Exception], task: str, runtime: Runtime | None = None
) -> OnnxModel:
    """Open ``weights`` on the CPU as a model of ultralytics' ``task`` ("detect" or "classify") with
    ``runtime``'s settings (by default the manifest's beside it; ``threads`` overrides its threads);
    anything unusable, a model of the other task included, raises ``error`` with a message naming the file.
    Only ``.onnx`` files are opened: a ``.pt`` checkpoint is the model factory's (``vision.factory``)."""
    import onnxruntime as ort

    if weights.suffix != ".onnx":
        raise error(
            f"{weights}: serving opens .onnx weights; a .pt checkpoint is the model factory's "
            "(smj ship makes the .onnx)"
        )
    try:
        runtime = runtime or Runtime.beside(weights)
    except ValueError as failure:
        raise error(str(failure)) from None
    options = runtime.options(threads)
    try:
        session = ort.InferenceSession(str(weights), options, providers=["CPUExecutionProvider"])
    except Exception as failure:  # onnxruntime raises its own untyped errors
        # the library's own text goes to the log, not to whoever reads the message (a client of /healthz)
        log.warning("%s: ONNX Runtime could not load it: %s", weights, failure)
        raise error(
            f"{weights.name}: not a loadable ONNX model (the file is damaged, or not a model of this project)"
        ) from None
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
    return OnnxModel(session, [names[i] for i in sorted(names)], imgsz, metadata, runtime)
