"""A stand-in reader for tests of the reading stage (``vision.reading.Reader``): a subclass says what it
finds in a view of a photo (``answer``); the stand-in takes the views the stage gives it and decides none."""

from __future__ import annotations

import numpy as np

from vision.detect.looks import SecondLook
from vision.detect.rows import RowCache
from vision.detect.view import AS_IS, Located, View, Views
from vision.detections import Detections
from vision.images import Photo


class StandIn:
    """One view of any photo, unless a subclass names ``second`` looks (taken at photos whose long side is
    at most ``close_up``)."""

    second: tuple[SecondLook, ...] = ()
    close_up = 10**9

    def views(self, long_side: int) -> Views:
        return Views(second=self.second if long_side <= self.close_up else ())

    def locate(
        self,
        photo: Photo | np.ndarray,
        view: View = AS_IS,
        *,
        conf: float = 0.25,
        box_conf: float | None = None,
    ) -> Located:
        return Located.nothing(photo, view)

    def read(
        self,
        located: Located,
        *,
        conf: float = 0.25,
        tile_set: object = None,
        rows: RowCache | None = None,
    ) -> Detections:
        return self.answer(located, conf)

    def detect(
        self, photo: Photo | np.ndarray, view: View = AS_IS, *, conf: float = 0.25, **_: object
    ) -> Detections:
        return self.read(self.locate(photo, view), conf=conf)

    def answer(self, located: Located, conf: float) -> Detections:
        """What the stand-in finds in ``located.view`` of a photo of ``located.size`` at ``conf``."""
        raise NotImplementedError
