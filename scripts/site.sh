#!/usr/bin/env bash
# Builds the course website into build/site/ from the handouts (docs/site.md):
#   build/site/index.html   picks a language
#   build/site/en/, zh/     every handout as a page (Sphinx + MyST, theme alabaster), with
#                           a language switch, the labs in order with their time estimates
#                           in the navigation, folded hints, inline figures and search
#   build/site/api/         the API reference of kuiper/include/kuiper (Doxygen)
# The Sphinx sources are generated under build/site-src/ (scripts/site/prepare.py); nothing
# is loaded from another host, so the site also works from file://.
# Options: --no-install (skip apt), --repo-url URL (links to repository files that are not
# pages go to URL/blob/HEAD/<path>; without it they are plain text).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
# The site's own Debian packages (scripts/site_test.py adds the browser's).
SITE_PACKAGES=(python3-sphinx python3-myst-parser python3-jieba doxygen)

install=1 repo_url=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-install) install=0 ;;
    --repo-url) repo_url=$2; shift ;;
    -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "scripts/site.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
PACKAGES=("${SITE_PACKAGES[@]}")
if [[ $install -eq 1 ]]; then
  install_missing
else  # say which package is missing, not which command failed halfway
  missing=$(missing_packages | tr '\n' ' ')
  if [[ -n $missing ]]; then
    echo "scripts/site.sh: not installed, and --no-install was given: ${missing}(apt-get" \
      "install ${SITE_PACKAGES[*]}, or run without --no-install)" >&2
    exit 1
  fi
fi

SECONDS=0
site=build/site work=build/site-src
rm -rf "$site" "$work"
mkdir -p "$site" "$work"

# The API reference first: its tag file tells the pages where each class lives.
cat >"$work/Doxyfile" <<EOF
PROJECT_NAME           = "KuiperCourse engine"
INPUT                  = kuiper/include/kuiper
RECURSIVE              = YES
FILE_PATTERNS          = *.hpp
STRIP_FROM_PATH        = kuiper/include
STRIP_FROM_INC_PATH    = kuiper/include
EXTRACT_ALL            = YES
OUTPUT_DIRECTORY       = $work/doxygen
HTML_OUTPUT            = $PWD/$site/api
GENERATE_LATEX         = NO
GENERATE_TAGFILE       = $work/kuiper.tag
HTML_TIMESTAMP         = NO
QUIET                  = YES
WARNINGS               = NO
WARN_IF_UNDOCUMENTED   = NO
SEARCHENGINE           = YES
USE_MATHJAX            = NO
EOF
doxygen "$work/Doxyfile" >"$work/doxygen.log" 2>&1 || { tail -n 20 "$work/doxygen.log"; exit 1; }

/usr/bin/python3 scripts/site/prepare.py . "$work" ${repo_url:+--repo-url "$repo_url"}

# Both languages at once (one core each).
pids=()
for lang in en zh; do
  KUIPER_SITE_LANG=$lang KUIPER_API_TAGFILE=$PWD/$work/kuiper.tag \
    /usr/bin/python3 -m sphinx -b html -q -c scripts/site -d "$work/doctrees-$lang" \
    "$work/$lang" "$site/$lang" >"$work/sphinx-$lang.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  wait "${pids[$i]}" || { status=1; cat "$work/sphinx-$([[ $i -eq 0 ]] && echo en || echo zh).log"; }
done
[[ $status -eq 0 ]] || exit 1
for lang in en zh; do
  if [[ -s $work/sphinx-$lang.log ]]; then
    echo "sphinx ($lang) warnings:"; cat "$work/sphinx-$lang.log"
  fi
done
rm -f "$site"/{en,zh}/.buildinfo

cat >"$site/index.html" <<'EOF'
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=en/index.html">
<title>KuiperCourse</title><link rel="icon" href="en/_static/favicon.svg"></head>
<body><p><a href="en/index.html">KuiperCourse (English)</a> · <a href="zh/index.html">KuiperCourse（中文）</a></p></body></html>
EOF
echo "site: build/site ($(du -sh "$site" | cut -f1)) in ${SECONDS} s"
