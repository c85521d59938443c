#!/usr/bin/env bash
# Quick start, main job: set up, build, simulate a kernel on its default shape and print its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/neuronsim run avg_pooling_3d_backward --check
