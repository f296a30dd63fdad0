#!/usr/bin/env bash
# Formats the project's C++ files with clang-format (.clang-format at the root).
#   scripts/format.sh          format in place
#   scripts/format.sh --check  list the files that need formatting; exit 1 if any
#                              (and run scripts/lint_comments.py: no dates, machines,
#                              issue/stop numbers or timings in comments)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

dirs=()
for d in kuiper onnx course* solutions final_project bench fuzz tools; do [[ -d $d ]] && dirs+=("$d"); done
[[ ${#dirs[@]} -gt 0 ]] || { echo "no C++ directories found"; exit 0; }
mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
  -o -name '*.cc' \) -not -path '*/build/*' | sort)

if [[ $check -eq 0 ]]; then
  clang-format -i "${files[@]}"
  echo "formatted ${#files[@]} files"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "needs formatting: $f"; bad=$((bad + 1))
  fi
done
echo "$bad of ${#files[@]} files need formatting"
lint=0
python3 scripts/lint_comments.py || lint=1
[[ $bad -eq 0 && $lint -eq 0 ]]
