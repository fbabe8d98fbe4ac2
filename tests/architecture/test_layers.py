"""Layers run one way: ``scoring`` (standard library only), then ``vision``, then ``datasets``, then the
``store``, then the use cases both faces share (``usecases``), then ``api`` and the command line
(``smj.py``). Every import of every module is read with ``ast``, those inside functions (loaded when a
command runs) and under ``TYPE_CHECKING`` included."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"scoring": 0, "vision": 1, "datasets": 2, "store": 3, "usecases": 4, "api": 5, "smj": 5}
PACKAGES = ("scoring", "vision", "datasets", "store", "usecases", "api")
# the grouper reads the detector's boxes: nothing the detector is built from imports it
GROUPER = ("vision.grouping.grouper", "vision.grouping")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path
    for package in PACKAGES
    for path in sorted((ROOT / package).rglob("*.py"))
    if ".venv" not in path.parts
}
MODULES["smj"] = ROOT / "smj.py"


@cache
def imports_of(name: str) -> tuple[str, ...]:
    """The modules ``name`` imports, absolute; ``from package import module`` names the module."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append(module)
            found.extend(f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES)
    return tuple(found)


def project_imports(name: str) -> Iterator[str]:
    for imported in imports_of(name):
        if imported.partition(".")[0] in LAYERS:
            yield imported


def layer(name: str) -> int:
    return LAYERS[name.partition(".")[0]]


def test_every_package_has_modules_to_check() -> None:
    for package in PACKAGES:
        assert sum(name.startswith(package) for name in MODULES) >= 3, package


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_imports_nothing_from_a_layer_above_its_own(name: str) -> None:
    above = [imported for imported in project_imports(name) if layer(imported) > layer(name)]
    assert not above, f"{name} (layer {layer(name)}) imports {above} from above"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.partition(".")[0] == "scoring"))
def test_the_scoring_core_imports_the_standard_library_only(name: str) -> None:
    outside = [
        imported
        for imported in imports_of(name)
        if imported.partition(".")[0] not in (*sys.stdlib_module_names, "scoring", "__future__")
    ]
    assert not outside, f"{name} imports {outside}"


def test_the_detector_is_built_from_nothing_that_imports_the_grouper() -> None:
    """Photo geometry (turning a slantwise photo, fitting a row's boxes) finds rows with
    ``vision.geometry.rows``, which the grouper shares; it never reaches into the grouper."""
    seen = _reached("vision.detect.detector")
    assert {
        "vision.detect.deskew",
        "vision.detect.rowfit",
        "vision.geometry.rows",
        "vision.detect.looks",
    } <= seen
    reaching = sorted(name for name in seen if name.startswith(GROUPER))
    assert not reaching, f"the detector depends on the grouper through {reaching}"


def test_the_detector_decides_no_view_and_the_reading_stage_owns_the_looks() -> None:
    """Turning a photo level (``vision.detect.deskew.turn_level``) is the reading stage's decision: the
    detector takes the view it is given (``vision.detect.view``); the stage drives the detector and the
    search, and the pipeline reads photos through it."""
    assert "vision.detect.deskew" not in imports_of("vision.detect.detector")
    assert "vision.detect.view" in imports_of("vision.detect.detector")
    assert {"vision.detect.deskew", "vision.grouping.search"} <= set(imports_of("vision.reading"))
    assert "vision.reading" in imports_of("vision.pipeline")
    assert "vision.grouping.search" not in _reached("vision.detect.detector")


def test_imports_are_read_as_the_modules_they_name() -> None:
    """The reader itself: relative imports and ``from package import module`` resolve."""
    assert "vision.detect.looks" in imports_of("vision.detect.detector")  # from vision.detect import looks
    assert "vision.geometry.rows" in imports_of("vision.grouping.grouper")
    assert "scoring.settlement.events" in imports_of("scoring.settlement")
    assert layer("smj") > layer("datasets.cli") > layer("vision.cli") > layer("scoring.cli")


def _reached(start: str) -> set[str]:
    seen: set[str] = set()
    pending = [start]
    while pending:
        name = pending.pop()
        if name in seen or name not in MODULES:
            continue
        seen.add(name)
        pending.extend(project_imports(name))
    return seen


SERVING = ("vision.pipeline", "api.app", "vision.detect.detector", "vision.grouping.grouper")


@pytest.mark.parametrize("start", SERVING)
def test_serving_never_reaches_into_the_model_factory(start: str) -> None:
    """What reads a photo (the pipeline, the service) is built from ``vision.detect``, ``vision.grouping`` and
    the model-free ``vision.contract``: nothing of ``vision.factory`` (training, .pt checkpoints, torch)."""
    reaching = sorted(name for name in _reached(start) if name.startswith("vision.factory"))
    assert not reaching, f"{start} depends on the model factory through {reaching}"


def test_the_classifier_contract_is_free_of_any_model() -> None:
    """Class list, crop size and margins, blob layout, crop files: one module that imports no model code, so
    serving and the factory share it without importing each other."""
    assert set(project_imports("vision.contract")) <= {"vision.detections"}
    assert "vision.contract" in imports_of("vision.detect.classifier")
    assert "vision.contract" in imports_of("vision.factory.face_net")


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.partition(".")[0] == "store"))
def test_the_store_keeps_rows_and_imports_only_the_contract_of_vision(name: str) -> None:
    """The store takes and gives values; reading photos and running the classifier happen in the use cases
    (``usecases``), outside its transactions: of ``vision`` it knows the classes only."""
    seen = [imported for imported in project_imports(name) if imported.partition(".")[0] == "vision"]
    assert all(imported == "vision.contract" for imported in seen), f"{name} imports {seen}"


def test_every_layer_s_refusals_share_one_root_and_one_table() -> None:
    """One error tree: each layer's refusal is a ``scoring.errors.SmjError`` with a ``code`` and a
    ``message``; the API answers them with one handler, its status by one table (``api.errors.STATUS``)."""
    from api.app import create_app
    from api.errors import STATUS, ApiError
    from datasets.labels import DatasetError
    from scoring.errors import InvalidHandError, SmjError, UnknownPresetError
    from scoring.settlement import RoundError
    from scoring.tiles import TileParseError
    from scoring.typed import TypedHandError
    from store.sets import SetError
    from store.tables import StaleWrite, TableError
    from vision.detect.tileset import LayoutError
    from vision.images import ImageError

    refusals = (
        InvalidHandError, UnknownPresetError, RoundError, TileParseError, TypedHandError, LayoutError,
        ImageError, DatasetError, SetError, TableError, StaleWrite, ApiError,
    )  # fmt: skip
    assert all(issubclass(refusal, SmjError) for refusal in refusals)
    handled = set(create_app().exception_handlers)
    assert SmjError in handled and not handled & set(refusals)  # one handler, not one a class
    assert all(400 <= status < 600 for status in STATUS.values())


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("vision.grouping")))
def test_grouping_reaches_no_detect_module(name: str) -> None:
    """Grouping and finding tiles share their geometry (``vision.geometry``: boxes, rows); grouping imports
    nothing of how tiles are found (``vision.detect``)."""
    reaching = [i for i in project_imports(name) if i == "vision.detect" or i.startswith("vision.detect.")]
    assert not reaching, f"{name} imports {reaching}"
