// Program and tensor declaration helpers.
#include "isa/program.h"

namespace neuronsim::isa {

int64_t TensorDecl::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int32_t Program::tensorIndex(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

}  // namespace neuronsim::isa
