"""Load a script of ``benchmarks/`` as a module, to call its functions in-process; the small synthetic
scene folders their tests measure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/{name}.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the script looks its module up there
    spec.loader.exec_module(module)
    return module


def write_scenes(folder: Path, count: int, seed: int = 11) -> Path:
    """``count`` synthetic 640x480 scenes (``smj dataset synth``'s layout) written to ``folder``."""
    from datasets.synth.scene import SceneOptions
    from datasets.synth.writer import write_dataset

    write_dataset(folder, count, seed=seed, options=SceneOptions(size=(640, 480)), progress=False)
    return folder
