// Program identity: comparison without notes, and a fingerprint for comparing across processes.
#include "kernels/harness/program_identity.h"

#include <fmt/format.h>

#include <cstdint>

#include "isa/assembly.h"

namespace neuronsim::kernels {

namespace {

void hashInto(uint64_t& hash, const std::string& text) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
}

}  // namespace

bool sameProgram(const isa::Program& a, const isa::Program& b) {
  if (a.tensors != b.tensors || a.semaphores != b.semaphores ||
      a.instructions.size() != b.instructions.size())
    return false;
  for (size_t i = 0; i < a.instructions.size(); ++i) {
    isa::Instruction x = a.instructions[i];
    x.note = b.instructions[i].note;
    if (!(x == b.instructions[i])) return false;
  }
  return true;
}

std::string programFingerprint(const isa::Program& program) {
  uint64_t hash = 0xCBF29CE484222325ull;
  isa::Program declarations;
  declarations.tensors = program.tensors;
  declarations.semaphores = program.semaphores;
  hashInto(hash, isa::printProgram(declarations));
  for (const isa::Instruction& inst : program.instructions) {
    if (inst.note.empty()) {
      hashInto(hash, isa::printInstruction(program, inst));
    } else {
      isa::Instruction bare = inst;
      bare.note = {};
      hashInto(hash, isa::printInstruction(program, bare));
    }
    hashInto(hash, "\n");
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace neuronsim::kernels
