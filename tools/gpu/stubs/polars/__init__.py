"""Stand-in for polars on the device machine: ultralytics reads its results.csv through it when it saves a
checkpoint, and does without when that fails."""


def read_csv(*args: object, **kwargs: object) -> None:
    raise RuntimeError("polars is not installed here")
