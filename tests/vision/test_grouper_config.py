"""The grouper's settings stay in one place: frozen configs with a default for every field, composed by
``GrouperConfig``, and no numeric constant left at module level in the modules they configure."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from vision.grouping.grouper import GROUPER, GrouperConfig
from vision.grouping.search import SEARCH, SearchConfig

ROOT = Path(__file__).resolve().parents[2]
CONFIGURED = sorted(
    [
        ROOT / "vision" / "geometry" / "rows.py",
        *(ROOT / "vision" / "grouping").glob("*.py"),
    ]
)


def _parts(config: object) -> list[object]:
    """The config and, depth first, every config it holds."""
    held = [getattr(config, f.name) for f in dataclasses.fields(config)]  # type: ignore[arg-type]
    return [config, *(part for value in held if dataclasses.is_dataclass(value) for part in _parts(value))]


CONFIGS = [*_parts(GROUPER), SEARCH]


@pytest.mark.parametrize("default", CONFIGS, ids=lambda c: type(c).__name__)
def test_every_config_is_frozen_and_every_field_has_a_default(default: object) -> None:
    kind = type(default)
    assert dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    fields = dataclasses.fields(kind)
    assert fields
    for field in fields:
        assert field.default is not dataclasses.MISSING, f"{kind.__name__}.{field.name} has no default"
    assert kind() == default  # the module's default instance is every field at its default
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(default, fields[0].name, getattr(default, fields[0].name))


def test_the_grouper_config_holds_every_config_of_the_grouper() -> None:
    """Each ``*Config`` of ``vision.geometry.rows`` and ``vision.grouping`` is a part of ``GrouperConfig``
    (the search's, which calls the grouper, aside)."""
    found = set()
    for path in CONFIGURED:
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        found |= {
            value
            for name, value in vars(module).items()
            if name.endswith("Config") and isinstance(value, type) and value.__module__ == module.__name__
        }
    assert found - {SearchConfig} == {type(part) for part in _parts(GROUPER)}
    assert GrouperConfig() == GROUPER


def _numeric(node: ast.expr) -> bool:
    """A number, or arithmetic on numbers and ``math``."""
    match node:
        case ast.Constant(value=value):
            return isinstance(value, int | float | complex) and not isinstance(value, bool)
        case ast.UnaryOp(operand=operand):
            return _numeric(operand)
        case ast.BinOp(left=left, right=right):
            return _numeric(left) or _numeric(right)
        case ast.Tuple(elts=elts) | ast.List(elts=elts) | ast.Set(elts=elts):
            return any(_numeric(elt) for elt in elts)
        case (
            ast.Call(func=ast.Attribute(value=ast.Name(id="math"))) | ast.Attribute(value=ast.Name(id="math"))
        ):
            return True
    return False


@pytest.mark.parametrize("path", CONFIGURED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_numeric_constant_outside_the_configs(path: Path) -> None:
    """Thresholds are config fields, not UPPER_CASE module constants (default instances such as
    ``ROWS = RowsConfig()`` are fine)."""
    constants = []
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]*", t.id)]
        if names and _numeric(value):
            constants += [f"{name} (line {statement.lineno})" for name in names]
    assert not constants, f"{path.name}: move {', '.join(constants)} into its module's config"
