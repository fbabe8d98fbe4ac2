#!/usr/bin/env bash
# Builds .gpu/, what a bare CUDA machine with Python, PyTorch, OpenCV and Pillow (no fonts, no cairo, no
# network) needs to render the localiser's training windows and train it from yolo26n.yaml (models/README.md,
# "How to make them"). The device tool carries it: run(command="bash .gpu/run.sh SECONDS", carry=[".gpu"]).
#   tools/gpu/prepare.sh [TILEART] [REAL_DATASET]   (defaults ../shared/data/tileart, work/real)
# It holds: the ultralytics wheels; every art set but the held-out one, with the PNGs cairosvg renders of
# their SVGs at the sizes the renderer asks (served by a stand-in cairosvg); the CJK fonts the renderer uses
# here, cut to the characters a face prints, and a stand-in fc-list naming them; the real dataset's train and
# val photos (about 20 MB: the device tool takes 64 MiB with the repository).
set -euo pipefail
cd "$(dirname "$0")/../.."
ART=${1:-../shared/data/tileart}
REAL=${2:-work/real}
B=.gpu
rm -rf "$B"
mkdir -p "$B/whl" "$B/svgcache" "$B/fonts" "$B/art" "$B/real/images" "$B/real/labels" "$B/bin"
cp -r tools/gpu/stubs tools/gpu/run.sh "$B/"
wheels=()
for name in ultralytics ultralytics-thop ultralytics-platform; do
    wheels+=("$name==$(.venv/bin/pip show "$name" | sed -n 's/^Version: //p')")
done
.venv/bin/pip download -q --no-deps --only-binary=:all: -d "$B/whl" "${wheels[@]}"
for split in train val; do
    cp -r "$REAL/images/$split" "$B/real/images/"
    cp -r "$REAL/labels/$split" "$B/real/labels/"
done
sed -e 's#^path: .*#path: .#' -e '/^test:/d' "$REAL/data.yaml" >"$B/real/data.yaml"
.venv/bin/python - "$ART" "$B" <<'PY'
import importlib.util, shutil, subprocess, sys
from pathlib import Path

import cairosvg

from datasets.synth import art
from datasets.synth.fonts import FACE_CHARACTERS, cjk_fonts, latin_font
from datasets.synth.look import TEX_H, TEX_W

source, bundle = Path(sys.argv[1]), Path(sys.argv[2])
spec = importlib.util.spec_from_file_location("stand_in", bundle / "stubs" / "cairosvg" / "__init__.py")
stand_in = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stand_in)  # the copy in the bundle: it names the PNGs as it will look them up
render = cairosvg.svg2png


def recorded(bytestring=None, output_width=None, output_height=None, **kwargs):
    png = render(bytestring=bytestring, output_width=output_width, output_height=output_height, **kwargs)
    stand_in.cached(bytestring, output_width, output_height).write_bytes(png)
    return png


cairosvg.svg2png = recorded
for found in art.discover([source], held_out=False):
    art.load(found, TEX_W, TEX_H)  # every SVG the renderer reads, at the size it asks
    top = Path(found.path) if Path(found.path).is_dir() else Path(found.path).parent
    target = bundle / "art" / top.name
    if not target.exists():
        shutil.copytree(top, target)
install, listed = [], []
fonts = [(f"cjk{i}", path, FACE_CHARACTERS) for i, path in enumerate(cjk_fonts())]
for name, path, text in [*fonts, ("latin", latin_font(), "0123456789")]:
    if path is None:
        continue
    out = bundle / "fonts" / f"{name}.ttf"
    subprocess.run(
        [".venv/bin/pyftsubset", path, f"--text={text}", f"--output-file={out}", "--font-number=0", "--hinting"],
        check=True,
        capture_output=True,
    )
    install.append(f'[ -e {path} ] || install -D "$(dirname "$0")/{out.name}" {path}')
    if name != "latin":
        listed.append(path)  # fc-list names them all; datasets.synth.fonts keeps its preferred ones first
(bundle / "fonts" / "install.sh").write_text("set -e\n" + "\n".join(install) + "\n")
(bundle / "bin" / "fc-list").write_text("#!/bin/sh\n" + "".join(f'echo "{p}: "\n' for p in listed))
(bundle / "bin" / "fc-list").chmod(0o755)
PY
du -sh "$B"
