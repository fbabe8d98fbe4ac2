"""A progress bar for work that runs longer than a few seconds: tqdm on stderr when stderr is a terminal, and
nothing at all when it is not (a log file, a pipe, a test) or when the command was given ``--quiet``."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def shown(enabled: bool = True) -> bool:
    """Whether a bar would be drawn: asked for, and stderr a terminal."""
    return enabled and sys.stderr.isatty()


def progress(
    items: Iterable[T],
    *,
    total: int | None = None,
    unit: str = "it",
    desc: str | None = None,
    enabled: bool = True,
) -> Iterator[T]:
    """``items``, drawing a bar as they are taken when ``shown(enabled)``; ``items`` as they are otherwise."""
    if not shown(enabled):
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(
        items, total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False
    )


def bar(*, total: int, unit: str = "it", desc: str | None = None, enabled: bool = True) -> Any:
    """A bar to advance by hand (``update(n)``, ``set_postfix_str(text)``, ``close()``), or None when not
    ``shown(enabled)``."""
    if not shown(enabled):
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False)
