#!/usr/bin/env bash
# Shared by run.sh and test.sh: install the Debian packages that are missing, then configure and build
# Release into build/. Sourced, so the caller gets $ROOT and $BUILD.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"

# Everything the build and the tests need, from Debian 12 only.
PACKAGES=(
  cmake g++ make pkg-config    # toolchain
  libeigen3-dev                # linear algebra in the engine
  libopenblas-pthread-dev      # OpenBLAS: Eigen's matrix products run on its kernels
  nlohmann-json3-dev           # scenario files and the JSON trace
  libpcre2-dev                 # PCRE2: tokenizers' split patterns (\p{L}, (?!\S)) run as written, on real Unicode
  libutf8proc-dev              # utf8proc: Unicode normalisation (NFC) as tokenizers ask for it
  libimgui-dev libstb-dev      # Dear ImGui 1.86 with its GLFW and OpenGL 3 backends; stb writes PNG
  libglfw3-dev libgl-dev       # the window and its OpenGL context
  fonts-dejavu-core            # DejaVu Sans: crisp text with the math glyphs
  fonts-wqy-microhei           # WenQuanYi Micro Hei: tokens in Chinese, Japanese kana and Korean (5 MB; Noto CJK is 300)
  doctest-dev                  # unit tests
  python3-numpy                # the independent NumPy cross-check
  python3-torch libopenblas0-pthread  # the PyTorch cross-checks of training (autograd, AdamW), on OpenBLAS
  xvfb xauth xdotool           # the window tests run on a virtual display and type keys into it
  clang libclang-rt-14-dev     # the sanitizer build and libFuzzer (scripts/test.sh, scripts/fuzz.sh)
)

source "$ROOT/scripts/packages.sh"
install_packages "${PACKAGES[@]}"

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
