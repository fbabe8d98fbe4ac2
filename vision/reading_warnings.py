"""What a reading warns the player of, added where the reading is made (``vision.reading.read_photo``): tiles
blurred for their size (``with_sharpness``), and tiles whose two likeliest faces are close
(``with_close_faces``), each naming where the tile lies."""

from __future__ import annotations

import numpy as np

from vision.detect.sharpness import BLURRED, photo_sharpness
from vision.detections import Detections
from vision.grouping.grouper import Grouping
from vision.grouping.result import GroupingWarning, GroupRole, WarningCode, warning_name
from vision.images import Photo

# a placed tile whose second likeliest face is at least this likely against its first is named in a
# ``close_faces`` warning (confidences are the square root of the box's times the face's probability: the
# ratio of two faces' confidences squared is that of their probabilities)
CLOSE_FACES = 0.5


def with_sharpness(photo: Photo, detections: Detections, grouping: Grouping) -> Grouping:
    """The grouping with a ``blurred_photo`` warning when the tiles of the hand and its melds are too
    blurred for their size to trust every face (``vision.detect.sharpness``)."""
    placed = grouping.placed
    if not placed:
        return grouping
    sharpness = photo_sharpness(photo.pixels, detections.boxes[np.asarray(placed)] / photo.scale)
    if sharpness is None or sharpness >= BLURRED:
        return grouping
    warning = GroupingWarning(
        WarningCode.BLURRED_PHOTO,
        f"the tiles look blurred for their size (sharpness {sharpness:.2f}, below {BLURRED}): some faces "
        "may be misread; a steadier or closer photo reads more surely",
        (),
        (),
    )
    return grouping.warned(warning)


def with_close_faces(detections: Detections, grouping: Grouping) -> Grouping:
    """The grouping with a ``close_faces`` warning for each tile of the hand or a meld whose two likeliest
    faces are close (the second at least ``CLOSE_FACES`` as likely as the first), naming the tile, its
    place and both faces: the reading may be right, and the search may have found a win with it, but the
    player should look at that tile."""
    if detections.alternatives is None or detections.alternative_confidences is None:
        return grouping
    for where, index in _places(grouping):
        first = float(detections.confidences[index])
        second = float(detections.alternative_confidences[index, 0])
        if first <= 0 or (second / first) ** 2 < CLOSE_FACES:
            continue
        read = warning_name(int(detections.class_ids[index]))
        other = warning_name(int(detections.alternatives[index, 0]))
        share = (second / first) ** 2
        warning = GroupingWarning(
            WarningCode.CLOSE_FACES,
            f"{where} reads as {read}, but it may be {other} (its face {share:.0%} as likely): check it",
            (index,),
            (read, other),
        )
        grouping = grouping.warned(warning)
    return grouping


def _places(grouping: Grouping) -> list[tuple[str, int]]:
    """Each placed tile's detection index with where it lies, in words: "the winning tile", "tile 3 of the
    hand" (counted in reading order), "a tile of meld 2"."""
    places: list[tuple[str, int]] = []
    melds = 0
    for group in grouping.groups:
        if group.role is GroupRole.MELD:
            melds += 1
        for position, index in enumerate(group.indices, start=1):
            if index == grouping.win_index:
                places.append(("the winning tile", index))
            elif group.role is GroupRole.HAND:
                places.append((f"tile {position} of the hand", index))
            elif group.role is GroupRole.MELD:
                places.append((f"a tile of meld {melds}", index))
    return places
