"""The geometry of tiles in a photo, shared by finding them (``vision.detect``) and grouping them
(``vision.grouping``): boxes (overlap, duplicates, row directions) and rows (one row algorithm)."""
