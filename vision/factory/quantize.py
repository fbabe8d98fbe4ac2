"""The tile classifier shipped in 8-bit integers: ONNX Runtime's static quantization of its ONNX export.

Reading the faces is most of a photo's detection time (a few dozen crops, some read twice), and on
this CPU (AVX-512 VNNI) the INT8 network reads them about 1.4x faster at the same accuracy (measured
in ``models/README.md``). Static quantization fixes each activation's range from calibration crops,
so the crops must look like the ones it will read: by default those the classifier was trained on.
The localiser stays in floating point: its box regression loses too much in INT8.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from vision.contract import CROP_SUFFIXES, crops_to_blob

CALIBRATION_CROPS = 256  # crops sampled from the calibration folder (min-max ranges stop moving well before)
# left in floating point: the class layer, and the features' normalisation (``face_net.add_features_output``)
HEAD_OPERATORS = {"Gemm", "Softmax", "Flatten", "ReduceL2", "Max", "Div"}


def calibration_crops(folder: Path, size: int, count: int = CALIBRATION_CROPS, seed: int = 0) -> np.ndarray:
    """(N, size, size, 3) uint8 RGB crops sampled from a crop dataset (``smj dataset crops`` output:
    SPLIT/CLASS/*.png, any depth); raises ValueError when there is none."""
    found = folder.rglob("*") if folder.is_dir() else iter(())
    paths = sorted(p for p in found if p.suffix.lower() in CROP_SUFFIXES)
    if not paths:
        raise ValueError(
            f"{folder}: no crop images to calibrate the INT8 classifier on"
            " (give the crop dataset it was trained on)"
        )
    chosen = random.Random(seed).sample(paths, min(count, len(paths)))
    bilinear = Image.Resampling.BILINEAR
    return np.stack([np.asarray(Image.open(p).convert("RGB").resize((size, size), bilinear)) for p in chosen])


def quantize_classifier(onnx_path: Path, crops: np.ndarray, *, batch: int = 32) -> Path:
    """Rewrite ``onnx_path`` (an fp32 classifier export, dynamic batch) as a static INT8 model (QDQ,
    per-channel signed weights, unsigned activations) calibrated on ``crops``; its metadata is kept.

    The head (the final linear layer and softmax, and the features' normalisation) stays in floating
    point: the probabilities of the less likely faces rank the alternatives a hand is re-read with, and in
    8 bits they round to 0.
    """
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    graph = onnx.load(str(onnx_path)).graph
    input_name = graph.input[0].name
    head = [node.name for node in graph.node if node.op_type in HEAD_OPERATORS]
    blobs = [crops_to_blob(crops[i : i + batch]) for i in range(0, len(crops), batch)]

    class Crops(CalibrationDataReader):
        def __init__(self) -> None:
            self._feeds = iter({input_name: blob} for blob in blobs)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._feeds, None)

    with tempfile.TemporaryDirectory() as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(onnx_path), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared),
            str(onnx_path),
            Crops(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            # 7-bit weights: without VNNI (AVX2 alone) ONNX Runtime's u8 x s8 products saturate in 16 bits,
            # and a full-range model read the example photos' crops as the float weights do only 83% of
            # the time there (98% with it); VNNI machines read both alike
            reduce_range=True,
            nodes_to_exclude=head,
        )
    return onnx_path
