"""Serving a photo's tiles: where they lie (the localiser and its looks, rows, packed-row fitting, turning
level) and what each face is (the classifier, a taught set)."""
