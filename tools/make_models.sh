#!/usr/bin/env bash
# The one recipe of the shipped models: every command, in order, that makes models/tiles.onnx (the localiser) and
# models/tile_faces.onnx (the classifier), and then the card (models/README.md) from their manifest.
# The card and the README point here; their figures are the card's generated table.
#
#   tools/make_models.sh            # from the checkout's root; work/ and runs/ (ignored by git) hold what it makes
#
# ART: the shared tile artwork; TILEART: the same without the held-out set (synth leaves samoheen_hongkong out unless
# asked, so the folder itself will do); DEVICE: the localiser's training device (0: a GPU; the shipped one trained
# on one H200 for 0.111 hours, --hours 0.111; on two CPU cores DEVICE=cpu and the same run takes days).
set -euo pipefail
cd "$(dirname "$0")/.."
ART=${ART:-../shared/data/tileart}
TILEART=${TILEART:-$ART}
DEVICE=${DEVICE:-0}
export YOLO_OFFLINE=1
smj() { .venv/bin/smj "$@"; }

smj dataset import --format yolo ../shared/data/real/chinese_mj_v4_train --out work/real --split-ratios 0.8,0.1,0.1 --lenient
# the localiser: from yolo26n.yaml on 12,100 windows (36% real) at the scales the detector's looks see tiles,
# every art set but the held-out one (TILEART: a copy of "$ART" without samoheen_hongkong, or the
# folder itself: synth leaves the held-out set out unless asked); its synthetic labels box all of a tile that shows
# (--label-boxes outline), as the windows it trained on did: it draws tiles so
smj dataset synth --out work/synA --n 3000 --seed 8100 --size 640x480 --label-boxes outline --art "$TILEART"
smj dataset synth --out work/synB --n 800 --seed 8200 --size 2016x1512 --fill 0.25-0.4 --label-boxes outline --art "$TILEART"
smj dataset synth --out work/synC --n 800 --seed 8300 --size 2016x1512 --fill 0.25-0.4 --packed --label-boxes outline --art "$TILEART"
smj dataset windows work/real --out work/w_real_a --scale 0.5-1.0 --per-image 5 --seed 1
smj dataset windows work/real --out work/w_real_b --scale 1.0-2.5 --per-image 3 --seed 2   # close-ups of large tiles
smj dataset windows work/real --out work/w_real_c --scale 0.45-0.7 --per-image 4 --seed 3  # the photo whole, as at 448 px
smj dataset windows work/synA --out work/w_synA --scale 0.55-1.0 --seed 4
smj dataset windows work/synB --out work/w_synB --scale 0.35-0.7 --per-image 2 --seed 5
smj dataset windows work/synB --out work/w_synB_whole --scale 0.17-0.22 --seed 6  # a large photo's first look
smj dataset windows work/synC --out work/w_synC --scale 0.35-0.7 --per-image 3 --seed 7
smj train --model yolo26n.yaml --data work/w_real_a,work/w_real_b,work/w_real_c,work/w_synA,work/w_synB,work/w_synB_whole,work/w_synC \
    --out runs/loc_gpu --imgsz 384 --batch 128 --hours 0.111 --close-mosaic 6 --workers 14 --cache ram --device "$DEVICE"
smj ship runs/loc_gpu/weights/last.pt --imgsz 384       # its last epoch (SGD lr0 0.01, cosine to 5%)
# the classifier: real crops and rendered ones, 2 epochs from ImageNet (AdamW, lr0 0.001, cosine to 5%, label smoothing 0.1)
smj dataset crops work/real:3 --rendered 60000 --art "$ART" --out work/crops96 --size 96 --seed 26
smj train --task classify --backbone efficientnet-lite0 --data work/crops96 --out runs/faces26 --epochs 2 --imgsz 96
# then 1 epoch with crops of synthetic scenes (melds lying flat, discards, small tiles), lr0 0.0005
smj dataset synth --out work/synth_train --n 1500 --seed 1000 --size 640x480 --art "$ART"
smj dataset synth --out work/synth_small --n 300 --seed 3000 --size 2016x1512 --fill 0.25-0.4 --art "$ART"
smj dataset crops work/synth_train:1:30 work/synth_small:1:40 --out work/crops96s --size 96 --seed 27
smj dataset crops-mix work/crops96s 'work/crops96:1:1:!rendered' work/crops96:0.35:1:rendered --val work/crops96 --out work/crops96mix
smj train --task classify --backbone efficientnet-lite0 --data work/crops96mix --out runs/faces27 --epochs 1 --imgsz 96 --lr0 0.0005 --model runs/faces26/weights/best.pt
# and 1 epoch with the real crops three times over, more fives (60% of them red) and more 万, lr0 0.0003
smj dataset crops --rendered 6000 --rendered-classes m5,p5,s5 --red-fives 0.6 --art "$ART" --out work/crops96x5 --size 96 --seed 28
smj dataset crops --rendered 6000 --rendered-classes m1,m2,m3,m4,m5,m6,m7,m8,m9,p6,p7,s6,s9 --art "$ART" --out work/crops96xm --size 96 --seed 29
smj dataset crops-mix 'work/crops96:1:3:!rendered' work/crops96:0.4:1:rendered work/crops96s:0.5 work/crops96x5 work/crops96xm --val work/crops96 --out work/crops96mix2 --seed 28
smj train --task classify --backbone efficientnet-lite0 --data work/crops96mix2 --out runs/faces28 --epochs 1 --imgsz 96 --lr0 0.0003 --model runs/faces27/weights/best.pt
# and 1 epoch with 24,000 more rendered crops, their faces printed in every installed CJK font (setup.sh's), lr0 0.0003
smj dataset crops --rendered 24000 --art "$ART" --out work/crops96f --size 96 --seed 30
smj dataset crops-mix 'work/crops96:1:3:!rendered' work/crops96:0.4:1:rendered work/crops96s:0.5 work/crops96x5 work/crops96xm work/crops96f --val work/crops96 --out work/crops96mix4 --seed 30
smj train --task classify --backbone efficientnet-lite0 --data work/crops96mix4 --out runs/faces30 --epochs 1 --imgsz 96 --lr0 0.0003 --model runs/faces28/weights/best.pt
# two more fine-tunes of faces30 (red fives, small 万 faces; the crops of new synthetic scenes), averaged with it
smj dataset crops work/real:3 --rendered 12000 --art "$ART" --out work/crops96r --size 96 --seed 32
smj dataset synth --out work/synth_train32 --n 400 --seed 1032 --size 640x480 --art "$ART"
smj dataset crops work/synth_train32:1:40 --out work/crops96s32 --size 96 --seed 32
smj dataset crops --rendered 6000 --rendered-classes m5,m6,m7,p5,p7,s5 --red-fives 0.8 --art "$ART" --out work/crops96x5b --size 96 --seed 33
smj dataset crops --rendered 4000 --rendered-classes m5 --red-fives 1 --art "$ART" --out work/crops96m5 --size 96 --seed 35
smj dataset crops-mix 'work/crops96r:1:1:!rendered' work/crops96r:0.5:1:rendered work/crops96x5b work/crops96m5 work/crops96s32:0.5 --val work/crops96r --out work/crops96mix33 --seed 33
smj train --task classify --backbone efficientnet-lite0 --data work/crops96mix33 --out runs/faces33 --epochs 1 --imgsz 96 --lr0 0.0001 --model runs/faces30/weights/best.pt
smj dataset synth --out work/synth_packed36 --n 120 --seed 1036 --size 2016x1512 --fill 0.25-0.4 --packed --art "$ART"
smj dataset crops work/synth_packed36:1:60 --out work/crops96p36 --size 96 --seed 36
smj dataset synth --out work/synth37 --n 1000 --seed 3700 --size 640x480 --art "$ART" --workers 2
smj dataset synth --out work/synth38 --n 150 --seed 3800 --size 2016x1512 --fill 0.25-0.4 --packed --art "$ART" --workers 2
smj dataset crops work/synth37:1:40 work/synth38:1:60 --out work/crops96s37 --size 96 --seed 37
smj dataset crops --rendered 10000 --rendered-classes m1,m2,m3,m4,m5,m6,m7,m8,m9 --red-fives 0.3 --art "$ART" --out work/crops96m37 --size 96 --seed 37
smj dataset crops-mix 'work/crops96r:1:1:!rendered' work/crops96r:0.4:1:rendered work/crops96s32:0.5 work/crops96p36 work/crops96x5b:0.5 work/crops96s37 work/crops96m37 --val work/crops96r --out work/crops96mix37 --seed 37
smj train --task classify --backbone efficientnet-lite0 --data work/crops96mix37 --out runs/faces37 --epochs 2 --imgsz 96 --lr0 0.0002 --model runs/faces30/weights/best.pt
smj ship --classifier runs/faces30/weights/best.pt,runs/faces33/weights/best.pt,runs/faces37/weights/best.pt --float   # their average; ONNX in float32 with its features output
# then 1 epoch from that soup teaching `none` what the localiser boxes that is no tile: crops of its false alarms
# on tables of keyboards, dominoes, dice, cards and printed pages and on close-ups of big loose tiles, with the
# real crops, crops of hands with tiles loose around them (red fives, piles) and rendered crops (lr0 0.0001)
smj dataset synth --out work/l48/loose --n 900 --seed 8700 --size 640x480 --kind loose --art "$ART"
smj dataset synth --out work/l48/closeup --n 400 --seed 8800 --size 640x480 --kind closeup --art "$ART"
smj dataset synth --out work/l48/empty --n 300 --seed 8900 --size 640x480 --kind empty
smj dataset synth --out work/c48/empty2 --n 400 --seed 8950 --size 640x480 --kind empty
smj dataset crops work/l48/empty:1 work/c48/empty2:1 work/l48/closeup:1:6 --false-alarms 6 --out work/c48/crops_fa --size 96 --seed 48
smj dataset crops work/real:2 work/l48/loose:1:6 --rendered 8000 --red-fives 0.4 --art "$ART" --out work/c48/crops_r --size 96 --seed 49
smj dataset crops-mix work/c48/crops_fa work/c48/crops_r --val work/c48/crops_r --out work/c48/mix --seed 48
smj train --task classify --backbone efficientnet-lite0 --data work/c48/mix --out runs/faces48 --epochs 1 --imgsz 96 --lr0 0.0001 --model models/tile_faces.pt
smj ship --classifier runs/faces48/weights/best.pt --float
smj card                                               # the card's table, from manifest.json
