// The sequential reference interpreter.
#include "isa/interpreter.h"

#include "isa/semantics.h"

namespace neuronsim::isa {

void interpret(const Program& program, MemoryState& memory) {
  for (size_t i = 0; i < program.instructions.size(); ++i)
    execute(program.instructions[i], static_cast<int64_t>(i), memory);
}

}  // namespace neuronsim::isa
