#!/usr/bin/env bash
# Every library kernel on machines of other geometries (partitions, PE array, DMA queues,
# SBUF/PSUM sizes): a run either succeeds or exits 2 with one "error:" line; never a crash, a
# hang or an assertion.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

kernels=$("$bin" list | grep -E '^[a-z_0-9]+$')
[ -n "$kernels" ] && ok || bad "neuronsim list gave no kernels"
geometries=(
  "partitions=64"
  "partitions=32"
  "partitions=256"
  "pe_rows=64"
  "pe_cols=32"
  "pe_rows=64 --set pe_cols=64"
  "max_moving_free=256"
  "dma_queues=4"
  "dma_queues=1"
  "sbuf_partition_bytes=65536"
  "psum_partition_bytes=8192 --set psum_banks=4"
)
for kernel in $kernels; do
  for geometry in "${geometries[@]}"; do
    # shellcheck disable=SC2086  # the geometry may hold several --set options
    err=$(timeout 120 "$bin" run "$kernel" --timing-only --set $geometry 2>&1 >/dev/null)
    rc=$?
    lines=$(printf '%s' "$err" | grep -c '')
    if [ "$rc" = 0 ]; then
      ok
    elif [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ "${err#error: }" != "$err" ]; then
      ok
    else
      bad "$kernel --set $geometry: exit $rc, want 0 or 2 with one error line, got: $err"
    fi
  done
done
finish machine_geometry
