#!/usr/bin/env bash
# docs/operators.md is generated from the registrations themselves, by
# `kuiper ops --markdown` (every PNNX layer type; every ONNX op with its
# constraints), so it cannot drift from the code:
#   scripts/operators_doc.sh [KUIPER]          exit 1 if the checked-in file differs
#   scripts/operators_doc.sh --write [KUIPER]  regenerate it
# KUIPER defaults to the solutions build's CLI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

write=0
if [[ "${1:-}" == "--write" ]]; then write=1; shift; fi
kuiper="${1:-build/solutions/bin/kuiper}"
[[ -x $kuiper ]] || { echo "$kuiper is missing: build the solutions preset's kuiper_cli" >&2; exit 1; }

generated="$("$kuiper" ops --markdown)"
if [[ $write -eq 1 ]]; then
  printf '%s\n' "$generated" > docs/operators.md
  echo "wrote docs/operators.md"
  exit 0
fi
if ! diff -u docs/operators.md <(printf '%s\n' "$generated"); then
  echo "docs/operators.md is stale: run scripts/operators_doc.sh --write" >&2
  exit 1
fi
