#!/usr/bin/env bash
# Compiles tools/ncnn_bench.cpp against an installed CPU-only static ncnn.
#
#   tools/ncnn_bench.sh NCNN_PREFIX [OUT]     # OUT defaults to build/ncnn/ncnn_bench
#
# NCNN_PREFIX is where `cmake --install` put ncnn (include/ncnn, lib/libncnn.a). Not part
# of the project's CMake: ncnn is a peer to measure against, never a build dependency.
# How to build ncnn itself: the docstring of tools/ncnn_models.py.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${1:?usage: tools/ncnn_bench.sh NCNN_PREFIX [OUT]}"
out="${2:-$root/build/ncnn/ncnn_bench}"
lib="$prefix/lib/libncnn.a"
[[ -f "$lib" ]] || lib="$prefix/lib64/libncnn.a"
[[ -f "$lib" ]] || { echo "ncnn_bench.sh: no libncnn.a under $prefix/lib" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
# ncnn's static library uses OpenMP and pthreads; link them as its own build did.
g++ -O2 -std=c++17 -I"$prefix/include/ncnn" "$root/tools/ncnn_bench.cpp" "$lib" \
    -fopenmp -pthread -o "$out"
echo "$out"
