#!/usr/bin/env bash
# From a fresh Debian 12 machine to ResNet18 and YOLOv5s on the engine:
#   1. installs the missing Debian packages (the list in scripts/common.sh);
#   2. configures the `solutions` preset and builds the `kuiper` CLI;
#   3. generates the models with seeded weights (tools/make_models.py, ~20 s once)
#      and trains the shape classifier and detector (tools/train_shapes.py, a few minutes, once);
#   4. runs `kuiper classify` and `kuiper detect` on final_project/data/shapes.png
#      with the trained models (the annotated image goes to build/demo/detect.png);
#   5. scores both trained models on held-out images, from PyTorch's outputs and
#      from the engine's (tools/eval_shapes.py);
#   6. for the seeded models, the max abs diff against PyTorch's output on the same
#      input (YOLOv5s: PyTorch's float64 output, see models/README.md) and the
#      engine's latency next to PyTorch's (tools/bench_vs_torch.py).
# Options: --no-install (skip apt), --threads N (default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# PACKAGES and install_missing.
source scripts/common.sh

install=1 threads=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-install) install=0 ;;
    --threads) threads=${2:?--threads needs a number}; shift ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "scripts/demo.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n== %s\n' "$*"; }
KUIPER=build/solutions/bin/kuiper
IMAGE=final_project/data/shapes.png
MODELS=build/models
export KUIPER_MODELS=$PWD/$MODELS

if [[ $install -eq 1 ]]; then
  step "Debian packages"
  install_missing
fi

step "Build (preset solutions, target kuiper_cli)"
cmake --preset solutions >/dev/null
cmake --build --preset solutions -j2 --target kuiper_cli

step "Models: /usr/bin/python3 tools/make_models.py (seeded weights, not pretrained)"
/usr/bin/python3 tools/make_models.py --out "$MODELS"

step "Models: /usr/bin/python3 tools/train_shapes.py (trained here on generated shapes, once)"
/usr/bin/python3 tools/train_shapes.py --out "$MODELS" --threads "$threads"

# Without --model, classify and detect use the trained shape models.
step "kuiper classify $IMAGE"
"$KUIPER" classify "$IMAGE"

mkdir -p build/demo
step "kuiper detect $IMAGE --out build/demo/detect.png"
"$KUIPER" detect "$IMAGE" --out build/demo/detect.png

step "Held-out accuracy, from PyTorch's outputs and from the engine's (tools/eval_shapes.py)"
status=0
/usr/bin/python3 tools/eval_shapes.py --kuiper "$KUIPER" --models "$MODELS" \
  --threads "$threads" || status=1

step "Engine vs PyTorch on the seeded models' reference inputs (kuiper run --expect)"
# YOLOv5s is held to PyTorch's float64 output: two float32 runs of it can
# differ by more than the tolerance (models/README.md, "How close is close").
for run in resnet18:: resnet18:_b4:_b4 yolov5s::_f64; do
  IFS=: read -r name input_suffix output_suffix <<<"$run"
  label=$name${input_suffix:+ ($input_suffix)}
  [[ $output_suffix == _f64 ]] && label+=" against PyTorch in float64"
  echo "-- $label"
  output=$("$KUIPER" run "$name" "$MODELS/$name/$name.input$input_suffix.npy" \
    --expect "$MODELS/$name/$name.output$output_suffix.npy" 2>&1) || status=1
  grep -E 'forward|max abs diff|error' <<<"$output"
done

step "Latency, $threads threads: engine vs PyTorch (tools/bench_vs_torch.py --batches 1)"
/usr/bin/python3 tools/bench_vs_torch.py --kuiper "$KUIPER" --threads "$threads" --batches 1 \
  --runs 5

if [[ $status -ne 0 ]]; then
  echo "demo: the engine differs from PyTorch beyond tolerance (see above)" >&2
fi
exit "$status"
