# On the device machine, from the repository root: install what its image lacks, render the scenes and cut
# the windows of models/README.md's "How to make them", train the localiser until about SECONDS after the
# start (from MODEL: yolo26n.yaml, or our own .pt to fine-tune; at LR0), and leave its weights and log in $OUT.
#   [MODEL=models/tiles.pt LR0=0.005] [EVERY_TILE=1] bash .gpu/run.sh SECONDS [SCALE]   (SCALE: a share of the scenes;
#   EVERY_TILE=1 adds the scenes of loose tiles, close-ups of big ones, tables of tile-like things and tables by a
#   bookshelf: what the localiser must box, and what it must not)
set -uo pipefail
BUDGET=$1
K=${2:-1}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/.gpu/stubs:$PWD YOLO_OFFLINE=1 PYTHONUNBUFFERED=1 PATH=$PWD/.gpu/bin:$PATH
sh .gpu/fonts/install.sh || exit 1
n() { python3 -c "print(max(2, round($1 * $K)))"; }
D=/tmp/data
A=.gpu/art
S="python3 smj.py dataset synth --art $A --quiet --label-boxes ${LABELS:-outline}"
$S --out $D/synA --n "$(n 3000)" --seed 8100 --size 640x480 --workers 6 &
$S --out $D/synB --n "$(n 800)" --seed 8200 --size 2016x1512 --fill 0.25-0.4 --workers 5 &
$S --out $D/synC --n "$(n 800)" --seed 8300 --size 2016x1512 --fill 0.25-0.4 --packed --workers 5 &
wait
if [ "${EVERY_TILE:-0}" = 1 ]; then  # the every-tile scenes too: loose tiles, frame-filling close-ups, tables of no tile
    $S --out $D/loose --n "$(n 900)" --seed 8700 --size 640x480 --kind loose --workers 4 &
    $S --out $D/closeup --n "$(n 400)" --seed 8800 --size 640x480 --kind closeup --workers 4 &
    $S --out $D/empty --n "$(n 300)" --seed 8900 --size 640x480 --kind empty --workers 4 &
    $S --out $D/shelf --n "$(n 300)" --seed 8960 --size 640x480 --kind shelf --workers 4 &
    wait
fi
W="python3 smj.py dataset windows"
$W .gpu/real --out $D/w_real_a --scale 0.5-1.0 --per-image 5 --seed 1 &
$W .gpu/real --out $D/w_real_b --scale 1.0-2.5 --per-image 3 --seed 2 &
$W .gpu/real --out $D/w_real_c --scale 0.45-0.7 --per-image 4 --seed 3 &
$W $D/synA --out $D/w_synA --scale 0.55-1.0 --seed 4 &
$W $D/synB --out $D/w_synB --scale 0.35-0.7 --per-image 2 --seed 5 &
$W $D/synB --out $D/w_synB_whole --scale 0.17-0.22 --seed 6 &
$W $D/synC --out $D/w_synC --scale 0.35-0.7 --per-image 3 --seed 7 &
PARTS="w_real_a w_real_b w_real_c w_synA w_synB w_synB_whole w_synC"
if [ "${EVERY_TILE:-0}" = 1 ]; then
    $W $D/loose --out $D/w_loose --scale 0.55-1.0 --per-image 2 --seed 8 &
    $W $D/closeup --out $D/w_closeup --scale 0.5-0.7 --seed 9 &
    $W $D/empty --out $D/w_empty --scale 0.55-1.0 --per-image 2 --seed 10 &
    $W $D/shelf --out $D/w_shelf --scale 0.55-1.0 --per-image 2 --seed 11 &
    PARTS="$PARTS w_loose w_closeup w_empty w_shelf"
fi
wait
echo "data ready at $(($(date +%s) - t0)) s"
HOURS=$(python3 -c "print(max(0.002, ($BUDGET - ($(date +%s) - $t0) - 45) / 3600))")
DATA=$(printf "$D/%s," $PARTS)
RUN=/tmp/runs/loc
(while sleep 20; do cp $RUN/weights/last.pt $RUN/results.csv "$OUT/" 2>/dev/null; done) &
saver=$!
python3 smj.py train --model "${MODEL:-yolo26n.yaml}" --lr0 "${LR0:-0.01}" --data "${DATA%,}" --out $RUN --imgsz 384 --batch "${BATCH:-128}" \
    --close-mosaic 6 --workers "${WORKERS:-14}" --cache ram --device "${DEVICE:-0}" --hours "$HOURS" 2>&1 |
    tr "\r" "\n" | grep -av "it/s\|s/it\|━\|──" | tee "$OUT/train.log" | tail -30
kill $saver
cp $RUN/weights/best.pt $RUN/weights/last.pt $RUN/results.csv $RUN/args.yaml $RUN/recipe.yaml "$OUT/" 2>/dev/null
ls -la "$OUT"
echo "done at $(($(date +%s) - t0)) s"
