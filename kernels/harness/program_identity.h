#pragma once
// When two builds are the same program: the same tensors, semaphores and instructions, notes aside.

#include <string>

#include "isa/program.h"

namespace neuronsim::kernels {

/// The same tensors, semaphores and instructions; notes (free text) may differ.
bool sameProgram(const isa::Program& a, const isa::Program& b);

/// 16 hex digits of a 64-bit FNV-1a hash of the program's text assembly without notes: equal for
/// programs sameProgram() calls the same, and (but for a 2^-64 chance) only for them.
std::string programFingerprint(const isa::Program& program);

}  // namespace neuronsim::kernels
