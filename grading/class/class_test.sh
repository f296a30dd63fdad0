#!/usr/bin/env bash
# scripts/test.sh's class check: grades a synthetic class (grading/class/make_class.py;
# --small: the hostile suite and a few others) with tools/labs grade-class, reusing the
# grading tree that gradescope_test.py built, and compares the grades with the expected ones.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
scratch=${KUIPER_GRADING_SCRATCH:-/tmp/kuiper-grading}
tree=$scratch/gradescope/source
[[ -f $tree/build/grading/grading-plan.json ]] ||
  { echo "no grading tree in $tree: run grading/class/gradescope_test.py first"; exit 1; }
rm -rf build/class "$scratch/class"
python3 grading/class/make_class.py build/class "$@" --tree "$tree"
# 5 s a test: the hostile infinite loop and fork bomb cost three tests each, not a minute.
tools/labs grade-class build/class/submissions --out build/class/grades.csv --tree "$tree" \
  --work "$scratch/class" --test-seconds 5
python3 grading/class/check_class.py build/class/expected.json build/class/grades.csv --tree "$tree"
