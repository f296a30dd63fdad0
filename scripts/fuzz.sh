#!/usr/bin/env bash
# Fuzzes the readers of outside input with libFuzzer (AddressSanitizer and
# UndefinedBehaviorSanitizer on):
#   scripts/fuzz.sh [TARGET|all] [SECONDS]
# TARGET is pnnx_param, pnnx_bin, expression, npy or onnx; all (the default)
# runs them one after another, SECONDS each (default 60). Builds the `fuzz`
# preset (clang-14, build/fuzz) first. Each target works on its own copy of the
# committed seeds, build/fuzz/corpus-work/<target>/, so the committed corpus never
# grows by itself; crashes, leaks, timeouts and out-of-memory inputs go to
# build/fuzz/artifacts/<target>/. Ends with one line per target: executions,
# exec/s, coverage (cov: edges, ft: features), corpus size and findings; exits 1
# if any target found something. Options: --no-install (skip apt), --no-build
# (run the programs already in build/fuzz/bin).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# PACKAGES and install_missing.
source scripts/common.sh

install=1 build=1 args=()
for arg in "$@"; do
  case "$arg" in
    --no-install) install=0 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) args+=("$arg") ;;
  esac
done
target=${args[0]:-all} seconds=${args[1]:-60}

# The longest input each reader is fed: room for every seed (the largest,
# resnet18.pnnx.param, is 8960 bytes), small enough to stay fast. Checked below:
# libFuzzer would silently cut a longer seed short.
declare -A MAX_LEN=([pnnx_param]=16384 [pnnx_bin]=4096 [expression]=2048 [npy]=4096 [onnx]=8192)
if [[ $target == all ]]; then
  targets=(pnnx_param pnnx_bin expression npy onnx)
elif [[ -n ${MAX_LEN[$target]:-} ]]; then
  targets=("$target")
else
  echo "scripts/fuzz.sh: unknown target '$target' (pnnx_param pnnx_bin expression npy onnx all)" >&2
  exit 2
fi
[[ $seconds =~ ^[0-9]+$ ]] || { echo "scripts/fuzz.sh: SECONDS must be a number" >&2; exit 2; }

for t in "${targets[@]}"; do
  too_long=$(find fuzz/corpus/"$t" -type f -size +"${MAX_LEN[$t]}"c)
  if [[ -n $too_long ]]; then
    echo "scripts/fuzz.sh: seeds longer than -max_len=${MAX_LEN[$t]}: $too_long" >&2
    exit 2
  fi
done

PACKAGES+=(clang-14 libclang-rt-14-dev libomp-14-dev)
if [[ $build -eq 1 ]]; then
  [[ $install -eq 1 ]] && install_missing
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j2 --target "${targets[@]/#/fuzz_}"
fi

summary=() found=0
for t in "${targets[@]}"; do
  work=build/fuzz/corpus-work/$t artifacts=build/fuzz/artifacts/$t log=build/fuzz/fuzz-$t.log
  mkdir -p "$work" "$artifacts"
  stamp=build/fuzz/.fuzz-$t.start  # findings are the artifacts newer than this
  touch "$stamp"
  echo "== fuzzing $t for ${seconds}s (log: $log)"
  status=0
  # New inputs go to the first directory only; the committed ones are read.
  OMP_NUM_THREADS=1 UBSAN_OPTIONS=print_stacktrace=1 \
    build/fuzz/bin/fuzz_"$t" -max_total_time="$seconds" -max_len="${MAX_LEN[$t]}" \
    -rss_limit_mb=2048 -timeout=10 -dict=fuzz/dict/"$t".dict -print_final_stats=1 \
    -artifact_prefix="$artifacts"/ "$work" fuzz/corpus/"$t" \
    $([[ -d fuzz/regressions/$t ]] && echo fuzz/regressions/"$t") >"$log" 2>&1 || status=$?
  # The last status line, e.g. "#123456 DONE cov: 812 ft: 2301 corp: 140/9Kb ... exec/s: 2057".
  stats=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -1 || true)
  execs=$(grep -oP 'stat::number_of_executed_units: \K[0-9]+' "$log" || echo "?")
  rate=$(grep -oP 'stat::average_exec_per_sec:\s*\K[0-9]+' "$log" || echo "?")
  cov=$(grep -oP 'cov: \K[0-9]+' <<<"$stats" || echo "?")
  ft=$(grep -oP 'ft: \K[0-9]+' <<<"$stats" || echo "?")
  corpus=$(grep -oP 'corp: \K[0-9]+/[0-9]+[a-zA-Z]*' <<<"$stats" || echo "?")
  findings=$(find "$artifacts" -type f -newer "$stamp" | wc -l)
  [[ $status -ne 0 || $findings -ne 0 ]] && found=1
  summary+=("$(printf '%-10s execs %-9s exec/s %-6s cov %-5s ft %-6s corpus %-5s findings %s' \
    "$t" "$execs" "$rate" "$cov" "$ft" "$corpus" "$findings")")
  [[ $status -ne 0 ]] && grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -3
done
printf '%s\n' "${summary[@]}"
exit "$found"
