# Shared by scripts/test.sh and scripts/demo.sh (source it; it runs nothing).

# Debian 12 packages the project needs; append here.
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libarmadillo-dev libopenblas-dev libgoogle-glog-dev libgtest-dev libgmock-dev
  libbenchmark-dev libdnnl-dev libzip-dev libcli11-dev libfmt-dev libopencv-dev
  python3-torch python3-torchvision python3-numpy python3-opencv clang-format
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  graphviz ccache
)

# use_ccache: compile through ccache when it is installed. Paths are hashed relative
# to the repository root (CCACHE_BASEDIR) and the build directory is not hashed
# (CCACHE_NOHASHDIR), so the presets and the student walk's copy of the tree
# (build/walk) share objects: the core compiles once for solutions, student and walk.
# The cache lives in build/ccache unless the user has chosen one (CCACHE_DIR or
# cache_dir in their ccache.conf).
use_ccache() {
  command -v ccache >/dev/null || return 0
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=$PWD
  export CCACHE_NOHASHDIR=1
  if [[ -z ${CCACHE_DIR:-} ]] && ccache -p 2>/dev/null | grep -q '^(default) cache_dir = '; then
    export CCACHE_DIR=$PWD/build/ccache
  fi
}

# missing_packages: prints the PACKAGES that are not installed, one per line.
missing_packages() {
  local pkg
  for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || echo "$pkg"
  done
}

# install_missing: apt-get installs the PACKAGES that are not installed yet
# (through sudo when not root). Returns apt-get's status.
install_missing() {
  local missing=() sudo=()
  mapfile -t missing < <(missing_packages)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  echo "Installing missing packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -q &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${missing[@]}"
}
