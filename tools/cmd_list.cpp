// neuronsim list: every registered kernel with its inputs, outputs and parameters.
#include <cstdio>
#include <string>

#include "isa/error.h"
#include "kernels/registry.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int listCommand(int argc, char** argv) {
  const Args args(argc, argv, 2, {"help"});
  if (args.flag("help")) {
    std::printf(
        "usage: neuronsim list\n\nPrints every kernel, its inputs, outputs and parameters.\n");
    return 0;
  }
  args.allowOnly("list", {"help"});
  if (!args.positional().empty())
    throw Error("list: unexpected argument '" + args.positional()[0] + "'");
  for (const kernels::KernelSpec& spec : kernels::kernelRegistry()) {
    std::printf("%s\n  %s\n", spec.name.c_str(), spec.description.c_str());
    std::string in, out;
    for (const auto& t : spec.inputs) {
      if (!in.empty()) in += ", ";
      in += t.name;
      if (t.optional) in += " (optional)";
      auto shape = spec.defaultShapes.find(t.name);
      if (shape != spec.defaultShapes.end()) {
        in += ' ';
        in += kernels::shapeText(shape->second);
      }
    }
    for (const auto& t : spec.outputs) {
      if (!out.empty()) out += ", ";
      out += t.name;
    }
    std::printf("  inputs:  %s\n  outputs: %s\n", in.c_str(), out.c_str());
    for (const auto& p : spec.params) {
      std::printf("  --%s (%s, default %s): %s\n", kernels::flagName(p.name).c_str(),
                  std::string(kernels::paramTypeName(p.type)).c_str(),
                  p.defaultValue.empty() ? "unset" : p.defaultValue.c_str(), p.meaning.c_str());
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace neuronsim::tools
