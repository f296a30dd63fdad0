#!/usr/bin/env bash
# The project's one test command. Installs the missing Debian packages, builds the
# `solutions`, `student` and `asan` presets, then checks (the lab mechanism: README.md, docs/instructors.md):
#   - every test passes in the solutions build;
#   - the student build's core tests pass, every lab label fails with NotImplemented, and so
#     does every end-to-end test (ResNet18, YOLOv5s in label final);
#   - tools/labs check (skeletons equal their solutions outside the fences);
#   - scripts/lint_comments.py (no dates, machines, issue/stop numbers or timings in comments);
#   - the handouts: each README.md has a README.zh-CN.md with the same headings, code blocks
#     and figures, every lab handout has the ten sections of one shape and none of the
#     Chinese renderings docs/glossary.md rules out (scripts/check_handouts.py), and every
#     figure they show exists;
#   - the student walk (scripts/student_walk.py, in a clone of the student release under
#     build/walk): filling one lab from solutions/ flips exactly that lab, and a lab that does not
#     compile leaves the other grades of `tools/labs grade` unchanged;
#   - the solutions under AddressSanitizer + UndefinedBehaviorSanitizer (preset asan, built
#     -O1 -g1 so that reports still name file and line; each test program runs once, all its
#     tests in one process): every test but the Python-only label tools passes and no
#     sanitizer reports anything;
#   - the course website (scripts/site.sh, scripts/site_test.py; docs/site.md).
# Compiles through ccache when installed (scripts/common.sh use_ccache; cache in
# build/ccache): the student build and the walk reuse the solutions build's objects.
# The last line is "N passed, M failed"; the exit status is 0 iff M == 0.
# Labels `layers` and `final` need every lab: they must pass in the solutions build; in the
# student build only the end-to-end tests are checked (they must fail).
# The course product (an instructor's tree, the one with solutions/):
#   - the rubric (grading/rubric.toml) covers every lab and hidden test once, 100 points a
#     lab, nothing for a test that passes on the skeleton (tools/labs rubric-check);
#   - the student release (tools/labs release): no solution line in it, the check fails when
#     one is pasted in, and the release's own scripts/test.sh passes there;
#   - the Gradescope autograder in a Gradescope-shaped folder: the solutions, the skeletons
#     and a tree with course 6 broken get their points in a valid results.json;
#   - a small synthetic class through tools/labs grade-class, hostile submissions included,
#     gets the expected grades (grading/class/; the full class: scripts/test.sh --class).
# In a student release (no solutions/) it checks what a student's tree can: the student
# build, core tests passing, every lab failing with NotImplemented, and the handouts.
# Options: --no-install (skip apt), --quick (skip apt, and configure when a build exists),
# --build-labs (install and build the student labs only: the GitHub Classroom workflow),
# --class (also grade the full synthetic class).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# PACKAGES (the Debian packages the project needs) and install_missing.
source scripts/common.sh
install=1 quick=0 build_labs=0 full_class=0
release=0
[[ -d solutions ]] || release=1  # a student release
for arg in "$@"; do
  case "$arg" in
    --no-install) install=0 ;;
    --quick) install=0 quick=1 ;;
    --build-labs) build_labs=1 ;;
    --class) full_class=1 ;;
    -h|--help) sed -n '2,37s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "scripts/test.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

LOGS=build/test-logs
mkdir -p "$LOGS"
passed=0 failed=0

# record NAME STATUS: counts one check and prints PASS/FAIL NAME.
record() {
  if [[ $2 -eq 0 ]]; then echo "PASS $1"; passed=$((passed + 1))
  else echo "FAIL $1"; failed=$((failed + 1)); fi
}

# logged LOG CMD...: runs CMD with its output in $LOGS/LOG.log; shows the tail on failure.
logged() {
  local log="$LOGS/$1.log" status=0
  shift
  "$@" >"$log" 2>&1 || status=$?
  if [[ $status -ne 0 ]]; then tail -n 30 "$log"; echo "(full output: $log)"; fi
  return "$status"
}

build() {  # build PRESET
  if [[ $quick -eq 0 || ! -f build/$1/CMakeCache.txt ]]; then
    logged "configure-$1" cmake --preset "$1" \
      ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} || return
  fi
  logged "build-$1" cmake --build --preset "$1" -j2
}

# run_ctest LOG ARGS...: ctest with ARGS, prints its summary line, returns its status.
run_ctest() {
  local log="$LOGS/$1.log" status=0
  shift
  ctest "$@" -j2 >"$log" 2>&1 || status=$?
  grep -E '% tests passed|No tests were found' "$log" | sed "s/^/  ctest $* : /" || true
  return "$status"
}

# show_failures LOG: the failed tests listed at the end of a ctest log, and where the log is.
show_failures() {
  sed -n '/The following tests FAILED/,/Errors while running/p' "$1" | head -n 20
  echo "(full output: $1)"
}

if [[ $install -eq 1 ]]; then
  status=0; install_missing || status=$?; record "install Debian packages" $status
fi

use_ccache
SECONDS=0
if [[ $build_labs -eq 1 ]]; then  # GitHub Classroom: the labs' test programs, then grade
  [[ $install -eq 0 ]] || install_missing
  cmake --preset student >/dev/null
  targets=$(python3 -c 'import json; print(" ".join(l["target"] for l in json.load(open("build/student/labs.json"))))')
  cmake --build --preset student -j2 --target $targets -- -k 0 || true  # a broken lab fails alone
  exit 0
fi
declare -A built
presets="solutions student"
[[ $release -eq 0 ]] || presets="student"
built[solutions]=1
for preset in $presets; do
  status=0; build $preset || status=$?; record "configure and build preset $preset" $status
  built[$preset]=$status
done

if [[ $release -eq 1 ]]; then
  :  # a student release has no solutions build
elif [[ ${built[solutions]} -eq 0 ]]; then
  status=0; run_ctest solutions --preset solutions || status=$?
  [[ $status -eq 0 ]] || show_failures "$LOGS/solutions.log"
  record "solutions build: every test passes" $status
else
  echo "  (solutions tests not run: the build failed)"
fi

if [[ ${built[student]} -eq 0 ]]; then
  status=0; run_ctest student-core --preset student -L '^core$' || status=$?
  [[ $status -eq 0 ]] || show_failures "$LOGS/student-core.log"
  record "student build: core tests pass" $status

  labels=$(ctest --preset student --print-labels 2>/dev/null | sed -n '/All Labels:/,$p' |
    tail -n +2 | awk '$1 ~ /^course[0-9]+$/ {print $1}' | sort -V || true)
  status=0; [[ -n $labels ]] || status=1
  record "student build: lab labels found ($(echo $labels))" $status
  for label in $labels; do
    status=0
    if run_ctest "student-$label" --preset student -L "^$label\$" --output-on-failure; then
      status=1; echo "  every $label test passes in the student build: is a TODO solved in $label?"
    elif ! grep -q NotImplemented "$LOGS/student-$label.log"; then
      status=1; echo "  no NotImplemented in the $label failures:"
      show_failures "$LOGS/student-$label.log"
    fi
    record "student build: $label fails with NotImplemented" $status
  done

  # The ResNet18/YOLOv5s tests need every lab: in the student build each one fails (at graph
  # load, in the first unsolved TODO).
  e2e_log="$LOGS/student-end-to-end.log" status=0
  if run_ctest student-end-to-end --preset student -L '^final$' -R '^final\.(ResNet18|YOLOv5s)\.' \
    --output-on-failure; then
    status=1; echo "  the end-to-end tests pass in the student build (or none was found)"
  elif ! grep -qE '^0% tests passed' "$e2e_log"; then
    status=1; echo "  an end-to-end test passes in the student build: is every lab solved?"
  elif ! grep -q NotImplemented "$e2e_log"; then
    status=1; echo "  no NotImplemented in the end-to-end failures:"
    show_failures "$e2e_log"
  fi
  record "student build: end-to-end tests (final) fail with NotImplemented" $status
else
  echo "  (student tests not run: the build failed)"
fi

if [[ $release -eq 0 ]]; then
  status=0; tools/labs check || status=$?
  record "tools/labs check" $status
  # The maintainers' comment rule (scripts/lint_comments.py); a student's own comments are theirs.
  status=0; python3 scripts/lint_comments.py || status=$?
  record "comments: no dates, machines, issue/stop numbers or timings" $status
  status=0; scripts/operators_doc.sh || status=$?
  record "docs/operators.md is what kuiper ops --markdown prints" $status
fi

status=0; python3 scripts/check_handouts.py || status=$?
record "handouts: Chinese and English versions have the same structure" $status
status=0; python3 scripts/check_handouts.py --figures || status=$?
record "handouts: every figure they show exists" $status

if [[ $release -eq 1 ]]; then
  echo "(scripts/test.sh took $((SECONDS / 60)) min $((SECONDS % 60)) s after the packages)"
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
fi

# The course product: rubric, release, autograder, a class (grading/, docs/instructors.md).
if [[ ${built[solutions]} -eq 0 && ${built[student]} -eq 0 ]]; then
  status=0; logged rubric-check tools/labs rubric-check --build build/solutions \
    --skeleton-build build/student || status=$?
  record "rubric: every lab and hidden test in one behaviour, 100 points a lab" $status
fi
status=0; logged release bash grading/class/release_test.sh || status=$?
record "student release: no solution in it, and its own test command passes" $status
release_walk=()  # the walk below starts from the release when there is one
[[ $status -ne 0 || ! -d build/release/tree ]] || release_walk=(--release build/release/tree)
status=0; logged gradescope /usr/bin/python3 grading/class/gradescope_test.py || status=$?
record "Gradescope autograder: results.json for solutions, skeletons, course 6 broken" $status
class_args=(--small)
[[ $full_class -eq 0 ]] || class_args=()
status=0; logged class bash grading/class/class_test.sh "${class_args[@]}" || status=$?
grep -E '^(graded|class check)' "$LOGS/class.log" | sed 's/^/  /' || true
record "grade-class: a synthetic class, hostile submissions included, gets its grades" $status

# After the student build, so that its objects are in the cache for the walk's copy.
status=0; python3 scripts/student_walk.py "${release_walk[@]}" || status=$?
record "student walk: one lab at a time flips alone; a broken lab fails alone" $status

status=0; build asan || status=$?; record "configure and build preset asan" $status
built[asan]=$status

# A sanitizer report ends the program with exit code 86 (ASAN_OPTIONS/UBSAN_OPTIONS in the
# asan test preset), so a test that sees it fails; the grep names the report.
if [[ ${built[asan]} -eq 0 ]]; then
  # Label tools is Python alone (no program of this build): the solutions run covers it.
  status=0; run_ctest asan --preset asan -LE '^tools$' || status=$?
  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOGS/asan.log"; then
    status=1; grep -m 5 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOGS/asan.log"
  fi
  [[ $status -eq 0 ]] || show_failures "$LOGS/asan.log"
  record "asan build: every test passes, no sanitizer report" $status
else
  echo "  (asan tests not run: the build failed)"
fi

# The course website (docs/site.md): both languages built from the handouts, then checked in
# headless Chromium (links, images, hints, language switch, search, no other host).
site_opts=(); [[ $install -eq 1 ]] || site_opts=(--no-install)
status=0
logged site scripts/site.sh "${site_opts[@]}" &&
  logged site-test /usr/bin/python3 scripts/site_test.py "${site_opts[@]}" || status=$?
record "site: built in both languages and checked in Chromium (build/site)" $status

echo "(scripts/test.sh took $((SECONDS / 60)) min $((SECONDS % 60)) s after the packages)"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
