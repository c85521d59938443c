// neuronsim list [KERNEL...]: registered kernels with their inputs, outputs and parameters.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tools/commands.h"

namespace neuronsim::tools {

namespace {

void printKernel(const kernels::KernelSpec& spec) {
  std::string in;
  std::vector<std::string_view> out;
  for (const auto& t : spec.inputs) {
    const auto shape = spec.defaultShapes.find(t.name);
    in += fmt::format("{}{}{}{}", in.empty() ? "" : ", ", t.name, t.optional ? " (optional)" : "",
                      shape == spec.defaultShapes.end()
                          ? ""
                          : fmt::format(" {}", kernels::shapeText(shape->second)));
  }
  for (const auto& t : spec.outputs) out.push_back(t.name);
  print("{}\n  {}\n  inputs:  {}\n  outputs: {}\n", spec.name, spec.description, in,
        fmt::format("{}", fmt::join(out, ", ")));
  for (const auto& p : spec.params)
    print("  --{} ({}{}, default {}): {}\n", kernels::flagName(p.name),
          p.schedule ? "schedule " : "", kernels::paramTypeName(p.type),
          p.defaultValue.empty() ? "unset" : p.defaultValue, p.meaning);
  print("\n");
}

}  // namespace

Command addListCommand(CLI::App& app) {
  CLI::App* list = addSubcommand(app, "list", "kernels, their inputs, outputs and parameters");
  auto names = std::make_shared<std::vector<std::string>>();
  addPositionals(list, "KERNEL", *names, "only these kernels (default: all)");
  return {list, [list, names] {
            checkExtras(list, "list");
            std::vector<const kernels::KernelSpec*> specs;
            for (const std::string& name : *names) specs.push_back(&kernels::findKernel(name));
            if (names->empty())
              for (const kernels::KernelSpec& spec : kernels::kernelRegistry())
                specs.push_back(&spec);
            for (const kernels::KernelSpec* spec : specs) printKernel(*spec);
            return 0;
          }};
}

}  // namespace neuronsim::tools
