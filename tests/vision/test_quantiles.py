"""The partial-sort percentiles give NumPy's values (linear interpolation) on the arrays a photo gives."""

from __future__ import annotations

import numpy as np
import pytest

from vision.quantiles import column_percentile, median, percentile, percentiles


@pytest.mark.parametrize("size", [1, 2, 3, 8, 101, 3072])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_percentiles_and_medians_are_numpys(size: int, dtype: type) -> None:
    values = (np.random.default_rng(size).random(size) * 255).astype(dtype)
    qs = (0.0, 1.0, 20.0, 50.0, 97.0, 99.0, 100.0)
    np.testing.assert_allclose(percentiles(values, qs), np.percentile(values, qs), rtol=1e-6)
    assert percentile(values, 97.0) == pytest.approx(float(np.percentile(values, 97.0)), rel=1e-6)
    assert median(values) == pytest.approx(float(np.median(values)), rel=1e-6)
    assert median(values.tolist()) == pytest.approx(float(np.median(values)), rel=1e-6)


def test_the_ends_and_ties_are_exact() -> None:
    assert percentiles([3.0, 1.0, 2.0], (0.0, 100.0)) == [1.0, 3.0]
    assert median([5, 1, 3, 3]) == 3.0
    assert median([7]) == 7.0


@pytest.mark.parametrize("rows", [1, 2, 25])
def test_column_percentiles_are_numpys_along_the_first_axis(rows: int) -> None:
    band = np.random.default_rng(rows).integers(0, 256, (rows, 40)).astype(np.uint8)
    for q in (0.0, 50.0, 97.0, 100.0):
        np.testing.assert_allclose(column_percentile(band, q), np.percentile(band, q, axis=0))


def test_no_values_is_refused() -> None:
    with pytest.raises(ValueError, match="no values"):
        median([])
    with pytest.raises(ValueError, match="no values"):
        column_percentile(np.zeros((0, 3)), 50.0)
