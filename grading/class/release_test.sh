#!/usr/bin/env bash
# scripts/test.sh's release check: writes the student release to build/release/tree, proves
# that the no-solution check passes there and fails when one solution line is pasted into a
# release file, then runs the release's own test command (its README's) in it.
# Shares the instructor build's compiler cache and generated models, so that only the link
# steps and the tests cost time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
out=build/release
rm -rf "$out"
mkdir -p "$out"
tools/labs release "$out/tree"

# The check must catch a pasted solution line: copy the release, paste one, expect a failure.
line=$(python3 - <<'PY'
import sys
sys.path.insert(0, "grading")
import instructor
lines = instructor.solution_lines()
print(max(lines, key=len))
PY
)
cp -a "$out/tree" "$out/pasted"
printf '%s\n' "$line" >> "$out/pasted/course1_tensor/README.md"
if tools/labs release-check "$out/pasted" > "$out/pasted.log"; then
  echo "release-check passed a release with a solution line pasted into it:"; cat "$out/pasted.log"
  exit 1
fi
echo "release-check catches a pasted solution line: $(tail -n 1 "$out/pasted.log")"
rm -rf "$out/pasted"

# The release's own test command, as its README gives it.
# The README's test command: a line that is `scripts/test.sh` with no options.
command=$(grep -m1 -E '^scripts/test\.sh *(#.*)?$' "$out/tree/README.md" | sed 's/ *#.*//; s/ *$//')
[[ -n $command ]] || { echo "the release README names no scripts/test.sh command"; exit 1; }
if [[ -d build/models ]]; then  # the trained and generated models: made once, not again
  mkdir -p "$out/tree/build"
  cp -a build/models "$out/tree/build/models"
fi
cd "$out/tree"
export CCACHE_BASEDIR=$PWD
echo "in the release: $command --no-install"
bash $command --no-install
