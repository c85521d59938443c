// neuronsim diff A.json B.json: total, per-engine and per-opcode time and count side by side.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "isa/error.h"
#include "tools/commands.h"
#include "traces/diff.h"

namespace neuronsim::tools {

Command addDiffCommand(CLI::App& app) {
  CLI::App* sub = addSubcommand(app, "diff", "what changed between two runs (B against A)");
  auto traces = std::make_shared<std::vector<std::string>>();
  addPositionals(sub, "TRACES", *traces,
                 "A.json B.json: two traces written by run --trace or asm --trace");
  return {sub, [sub, traces] {
            checkExtras(sub, "diff");
            if (traces->size() != 2)
              throw Error(fmt::format(
                  "diff: expected two traces A.json B.json, got {} (try neuronsim diff --help)",
                  traces->size()));
            const auto& a = (*traces)[0];
            const auto& b = (*traces)[1];
            const auto before = neuronsim::traces::loadTraceModel(a);  // A's errors first
            const auto diff =
                neuronsim::traces::diffTraces(before, neuronsim::traces::loadTraceModel(b));
            std::fputs(neuronsim::traces::diffText(diff, a, b).c_str(), stdout);
            return 0;
          }};
}

}  // namespace neuronsim::tools
