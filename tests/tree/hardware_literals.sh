#!/usr/bin/env bash
# Fails when a literal 128 or 16 (the Trn partition / PE array / DMA queue and engine counts)
# appears in the code of sim/, isa/validation.* or kernels/ outside the allow-list below.
# Hardware numbers belong in sim/machines/*.json and reach code through MachineConfig and
# isa::Geometry (docs/timing-model.md, "Machine parameters"). Comments and string literals are
# not scanned. A hit that is not a hardware number gets an allow-list entry: the file, a piece
# of its (comment-free) line, and why.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
enter_git_checkout "${1:-.}" literal

# file | fragment of the code line | reason
allowed='
sim/machine_config.h|strideThresholdBytes = 16;|placeholder: loadMachine() sets every field from the preset
sim/machine_config.h|dmaEngines = 16;|placeholder: loadMachine() sets every field from the preset
sim/simulator.cpp|kObjectAhead = 32, kArraysAhead = 16|software prefetch distances, not hardware
sim/calibration/calibration.cpp|dmaSpanNs(m, Engine::GpSimd, 128, 128)|the published D1 measurement is a [128, 128] transfer
kernels/pooling/pooling_specs.cpp|kDefaultInput{2, 64, 16, 16, 16}|default problem shape
kernels/pooling/pooling_schedule.cpp|"key_ring", s.keyRing, 1, 16)|schedule knob range
kernels/pooling/pooling_schedule.cpp|.within(1, 16)|schedule knob range
kernels/pooling/max_pool_backward.cpp|kAutoKeyRings{16, 12, 8, 4, 2, 1}|key ring sizes tried (the key_ring knob range), not a hardware count
kernels/conv/conv_bwd_spec.cpp|kDefaultX{1, 64, 8, 16, 16}|default problem shape
kernels/conv/conv_specs.cpp|{"x_in", {1, 128, 8, 32, 32}}|default problem shape
kernels/conv/conv_specs.cpp|{"x_in", {1, 128, 8, 16, 16}}|default problem shape
kernels/conv/conv_plan.cpp|kPackedShortRowBytes = 128;|a measured staging threshold in bytes (rows of two 64 B descriptors), not a partition count
kernels/matmul/matmul_schedule.cpp|"out_buffers", 1, 16, 4)|schedule knob range
kernels/matmul/matmul_schedule.cpp|.within(1, 16)|schedule knob range
kernels/conv/conv_bwd_plan.cpp|kPackedWindowCap = 16 * 1024;|a measured tuning threshold (window bytes per partition), not a hardware size
kernels/conv/conv_transpose_phases.cpp|kGroupBytes = 16 * 1024;|a tuning cap (store group and x load bytes per partition), not a hardware size
kernels/conv/conv_bwd_plan.h|kDwLoadPieceBytes = 128 * 1024;|bytes per DMA of a cut dw load (tuning), not a hardware size
kernels/matmul/matmul_schedule.h|kMatmulPart = 128;|matmul tiles by 128 and declares it (minPartitions 128: refused on a smaller machine)
kernels/matmul/matmul_schedule.cpp|kThinBf16TailRows = 16|a measured tuning threshold for the transposed M tail (rows), not a hardware size
kernels/tutorials/tutorial_build.h|kTutorialTileM = 128;|the NKI tutorial TILE_M; the tutorials are refused below 128 (minPartitions)
kernels/tutorials/tutorial_build.h|kTutorialTileK = 128;|the NKI tutorial TILE_K; the tutorials are refused below 128 (minPartitions)
kernels/tutorials/tutorial_spec.cpp|intOr(kBlockParams[0], 16)|the tutorial meta-parameters (TILES_IN_BLOCK_M/N/K)
'

# Every code line (comments and string contents removed) with a standalone 128 or 16.
hits=$(git ls-files -z -- 'sim/*.cpp' 'sim/*.h' 'isa/validation.cpp' 'isa/validation.h' \
  'kernels/*.cpp' 'kernels/*.h' |
  xargs -0 perl -ne '
    my $code = $_;
    $code =~ s{"(?:\\.|[^"\\])*"}{""}g;   # string literals
    $code =~ s{'"'"'(?:\\.|[^'"'"'\\])*'"'"'}{0}g;  # char literals
    $code =~ s{//.*}{};                  # line comments
    if ($code =~ /(?<![\w.])(128|16)(?![\w.])/) { chomp $code; print "$ARGV|$code\n"; }
    close ARGV if eof;')

# A hit is allowed when an entry names its file and its line holds the entry's fragment; string
# literals were emptied, so fragments quote code only up to a string.
failed=0
while IFS= read -r hit; do
  [ -z "$hit" ] && continue
  file=${hit%%|*}
  code=${hit#*|}
  ok=0
  while IFS='|' read -r afile fragment reason; do
    [ -z "$afile" ] && continue
    [ "$afile" = "$file" ] || continue
    stripped=$(printf '%s' "$fragment" | perl -pe 's{"(?:\\.|[^"\\])*"}{""}g')
    case "$code" in *"$stripped"*) ok=1 ;; esac
    : "$reason"
  done <<<"$allowed"
  if [ "$ok" = 0 ]; then
    echo "$file: literal hardware number in: $(printf '%s' "$code" | sed 's/^ *//')"
    failed=1
  fi
done <<<"$hits"
if [ "$failed" = 1 ]; then
  echo "error: take the number from MachineConfig / isa::Geometry, or add an allow-list entry" \
    "with a reason to tests/tree/hardware_literals.sh"
  exit 1
fi
echo "hardware literals: none outside the allow-list"
