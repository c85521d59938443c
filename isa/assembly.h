#pragma once
// Text assembly: one instruction per line; print then parse gives the identical program.

#include <cstdint>
#include <string>
#include <vector>

#include "isa/program.h"

namespace neuronsim::isa {

std::string printProgram(const Program& program);
std::string printInstruction(const Program& program, const Instruction& inst);
/// Throws neuronsim::Error "<source>:<line>: <what is wrong>" on bad text. `instructionLines`,
/// when given, receives each instruction's 1-based line in `text`.
Program parseProgram(const std::string& text, const std::string& source = "<text>",
                     std::vector<int64_t>* instructionLines = nullptr);

}  // namespace neuronsim::isa
