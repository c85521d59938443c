#pragma once
// Text assembly: one instruction per line; print then parse gives the identical program.

#include <string>

#include "isa/program.h"

namespace neuronsim::isa {

std::string printProgram(const Program& program);
std::string printInstruction(const Program& program, const Instruction& inst);
/// Throws neuronsim::Error "<source>:<line>: <what is wrong>" on bad text.
Program parseProgram(const std::string& text, const std::string& source = "<text>");

}  // namespace neuronsim::isa
