"""What a reader of photos is asked to do and what it gives back, free of any model: the ``View`` it is told
to take of a photo, the ``Views`` it can take of a photo of a size, and the tiles it ``Located`` there
before their faces are read. The reading stage (``vision.reading``) decides the views; a detector takes
the one it is given and never decides it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.detect.deskew import Turn
from vision.detect.looks import SecondLook
from vision.geometry.rows import RowCache
from vision.images import Photo


@dataclass(frozen=True)
class View:
    """One view of a photo: as it is, turned (``turn``, found from the tiles of a view as it is:
    ``deskew.turn_level``), or ``enlarged`` (a close-up looked at whole and larger)."""

    turn: Turn | None = None
    enlarged: bool = False

    def __post_init__(self) -> None:
        if self.turn is not None and self.enlarged:
            raise ValueError("a view is turned or enlarged, not both")


AS_IS = View()


@dataclass(frozen=True)
class Views:
    """The views a reader can take of a photo, as its view as it is decides: ``level`` (a whole table
    whose rows run slantwise is read turned level, at the scale of its view as it is), and the second
    looks at a close-up that reads as no win, in the order worth taking them."""

    level: bool = False
    second: tuple[SecondLook, ...] = ()


ONE_VIEW = Views()  # a reader of one input shape, or a stand-in: the photo as it is, once


@dataclass(frozen=True, eq=False)
class Located:
    """The localiser's tiles in one view of a photo (``Detector.locate``): ``pixels`` the view's (the photo,
    or turned), ``boxes``, ``scores`` and ``classes`` the localiser's own in those pixels; ``size`` the
    photo's (width, height); ``close_up``: the photo was looked at whole in one look; ``rows``: the rows of
    its boxes, found once for every use (turning the photo level, fitting the rows' boxes)."""

    view: View
    pixels: np.ndarray
    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray
    size: tuple[int, int]
    close_up: bool
    rows: RowCache = field(default_factory=RowCache)

    @classmethod
    def nothing(cls, photo: Photo | np.ndarray, view: View = AS_IS) -> Located:
        """No tile in ``view`` of the photo: what a reader that names its tiles otherwise (a stand-in with
        fixed detections) hands to its own ``read``."""
        pixels = photo.pixels if isinstance(photo, Photo) else photo
        height, width = pixels.shape[:2]
        empty = np.zeros((0, 4), np.float32)
        return cls(view, pixels, empty, np.zeros(0, np.float32), np.zeros(0, np.int64), (width, height), True)
