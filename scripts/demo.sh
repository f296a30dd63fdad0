#!/usr/bin/env bash
# From a fresh Debian 12 machine to ResNet18 and YOLOv5s on the engine:
#   1. installs the missing Debian packages (the list in scripts/common.sh);
#   2. configures the `solutions` preset and builds the `kuiper` CLI;
#   3. generates the models with seeded weights (tools/make_models.py, ~20 s once);
#   4. runs `kuiper classify` and `kuiper detect` on final_project/data/shapes.png
#      (the annotated image goes to build/demo/detect.jpg);
#   5. for each model, the max abs diff against PyTorch's output on the same input
#      (YOLOv5s: PyTorch's float64 output, see models/README.md) and the engine's
#      latency next to PyTorch's (tools/bench_vs_torch.py).
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

step "kuiper classify $IMAGE"
"$KUIPER" classify "$IMAGE"

mkdir -p build/demo
# Seeded (not trained) weights fire everywhere on a flat image: show the best 10.
step "kuiper detect $IMAGE --max-det 10"
"$KUIPER" detect "$IMAGE" --max-det 10 --out build/demo/detect.jpg

step "Engine vs PyTorch on the reference inputs (kuiper run --expect)"
status=0
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
  echo "demo: an engine output differs from PyTorch's beyond tolerance (see above)" >&2
fi
exit "$status"
