// The registry table: one line per kernel.
#include "kernels/registry.h"

#include <fmt/format.h>

#include "isa/error.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/matmul/matmul_kernel.h"
#include "kernels/pooling/pooling_kernels.h"
#include "kernels/tutorials/tutorial_kernel.h"

namespace neuronsim::kernels {

const std::vector<KernelSpec>& kernelRegistry() {
  static const std::vector<KernelSpec> table = {
      matmulSpec(),
      avgPooling3dBackwardSpec(),
      maxPooling3dBackwardSpec(),
      avgPooling3dSpec(),
      maxPooling3dSpec(),
      conv3dSpec(),
      conv3dTransposeSpec(),
      conv3dBwdSpec(),
      matmulTutorialSpec(),
  };
  return table;
}

const KernelSpec& findKernel(const std::string& name) {
  std::vector<std::string_view> known;
  for (const KernelSpec& spec : kernelRegistry()) {
    if (spec.name == name) return spec;
    known.push_back(spec.name);
  }
  throw Error(fmt::format("unknown kernel '{}' (known: {})", name, fmt::join(known, ", ")));
}

const HbmView& KernelArgs::in(const std::string& name) const {
  auto it = inputs.find(name);
  if (it == inputs.end()) throw Error(fmt::format("kernel input '{}' is not given", name));
  return it->second;
}

const HbmView& KernelArgs::out(const std::string& name) const {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw Error(fmt::format("kernel output '{}' is not produced", name));
  return it->second;
}

}  // namespace neuronsim::kernels
