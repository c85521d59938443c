// Text assembly printer: declarations, then one line per instruction (syntax in docs/assembly.md).
#include "isa/assembly.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <string_view>

#include "isa/shape_text.h"

namespace neuronsim::isa {

namespace {

/// Shortest text that parses back to exactly `v` (max_digits10 = 9 significant digits).
std::string formatFloat(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string formatHex(int64_t v) {
  return v < 0 ? fmt::format("{}", v) : fmt::format("{:#x}", v);
}

std::string formatDims(const std::vector<Dim>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    fmt::format_to(std::back_inserter(out), "{}[{},{}]", i ? "," : "", dims[i].step, dims[i].num);
  out += "]";
  return out;
}

/// A tensor or semaphore reference: its declared name, or its raw index when out of range.
std::string formatRef(const std::vector<std::string>& names, int64_t index) {
  if (index >= 0 && index < static_cast<int64_t>(names.size())) return names[index];
  return fmt::format("{}", index);
}

std::vector<std::string> tensorNames(const Program& program) {
  std::vector<std::string> names;
  for (const TensorDecl& t : program.tensors) names.push_back(t.name);
  return names;
}

/// space:dtype[:tensor][start:end[:partitionStep]]@offset[[step,num],...]
std::string formatAp(const Program& program, const AccessPattern& ap) {
  std::string out = fmt::format("{}:{}", spaceName(ap.space), dtypeName(ap.dtype));
  auto to = std::back_inserter(out);
  if (ap.tensor != -1) fmt::format_to(to, ":{}", formatRef(tensorNames(program), ap.tensor));
  fmt::format_to(to, "[{}:{}", ap.partitionStart,
                 static_cast<int64_t>(ap.partitionStart) + ap.partitionCount);
  if (ap.partitionStep != 0) fmt::format_to(to, ":{}", ap.partitionStep);
  fmt::format_to(to, "]@{}{}",
                 ap.space == Space::Hbm ? fmt::format("{}", ap.offset) : formatHex(ap.offset),
                 formatDims(ap.dims));
  return out;
}

/// An immediate, or an access pattern; with an access pattern the unused immediate follows
/// `|` only when it differs from the field's default `unusedImm` (so the program round-trips).
std::string formatScalar(const Program& program, const ScalarOperand& s, float unusedImm) {
  if (!s.vec) return formatFloat(s.imm);
  if (s.imm != unusedImm || std::signbit(s.imm) != std::signbit(unusedImm))
    return fmt::format("{}|{}", formatAp(program, *s.vec), formatFloat(s.imm));
  return formatAp(program, *s.vec);
}

/// Equal to `def` including the sign of zero (so -0.0 is printed, not dropped).
bool sameScalar(const ScalarOperand& s, const ScalarOperand& def) {
  return s == def && std::signbit(s.imm) == std::signbit(def.imm);
}

std::string escapeNote(const std::string& note) {
  std::string out;
  for (char c : note) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view kindName(TensorKind kind) {
  switch (kind) {
    case TensorKind::Input:
      return "input";
    case TensorKind::Output:
      return "output";
    case TensorKind::Internal:
      return "internal";
  }
  return "?";
}

}  // namespace

std::string printInstruction(const Program& program, const Instruction& inst) {
  const Instruction def;
  std::string out = fmt::format("{} {}", engineName(inst.engine), opcodeName(inst.opcode));
  auto field = [&out](std::string_view key, const auto& value) {
    fmt::format_to(std::back_inserter(out), " {}={}", key, value);
  };
  auto flag = [&out](std::string_view key, bool on) {
    if (on) fmt::format_to(std::back_inserter(out), " {}", key);
  };
  if (inst.dmaQueue != def.dmaQueue) field("queue", inst.dmaQueue);
  field("dst", formatAp(program, inst.dst));
  if (!inst.srcs.empty()) {
    std::string list;
    for (size_t i = 0; i < inst.srcs.size(); ++i) {
      if (i) list += ",";
      list += formatAp(program, inst.srcs[i]);
    }
    field("srcs", list);
  }
  if (inst.op0 != def.op0) field("op0", aluOpName(inst.op0));
  if (!sameScalar(inst.operand0, def.operand0))
    field("operand0", formatScalar(program, inst.operand0, def.operand0.imm));
  flag("reverse0", inst.reverse0);
  if (inst.op1 != def.op1) field("op1", aluOpName(inst.op1));
  if (!sameScalar(inst.operand1, def.operand1))
    field("operand1", formatScalar(program, inst.operand1, def.operand1.imm));
  flag("reverse1", inst.reverse1);
  if (inst.act != def.act) field("act", actFnName(inst.act));
  if (!sameScalar(inst.scale, def.scale))
    field("scale", formatScalar(program, inst.scale, def.scale.imm));
  if (inst.bias) field("bias", formatAp(program, *inst.bias));
  if (inst.reduceDst) field("reduce_dst", formatAp(program, *inst.reduceDst));
  if (inst.reduceAxes != def.reduceAxes) field("reduce_axes", inst.reduceAxes);
  flag("negate", inst.negate);
  flag("accumulate", inst.accumulate);
  if (inst.value != def.value || std::signbit(inst.value)) field("value", formatFloat(inst.value));
  if (inst.cmp != def.cmp) field("cmp", aluOpName(inst.cmp));
  if (inst.affine.pattern != def.affine.pattern) field("pattern", formatDims(inst.affine.pattern));
  if (inst.affine.offset != def.affine.offset) field("offset", inst.affine.offset);
  if (inst.affine.channelMultiplier != def.affine.channelMultiplier)
    field("channel_multiplier", inst.affine.channelMultiplier);
  if (!inst.waits.empty()) {
    std::string list;
    for (size_t i = 0; i < inst.waits.size(); ++i)
      fmt::format_to(std::back_inserter(list), "{}{}>={}", i ? "," : "",
                     formatRef(program.semaphores, inst.waits[i].sem), inst.waits[i].value);
    field("wait", list);
  }
  if (!inst.signals.empty()) {
    std::string list;
    for (size_t i = 0; i < inst.signals.size(); ++i) {
      const SemSignal& s = inst.signals[i];
      fmt::format_to(std::back_inserter(list), "{}{}{:+}{}", i ? "," : "",
                     formatRef(program.semaphores, s.sem), s.delta,
                     s.at == SignalAt::Read ? "@read" : "@complete");
    }
    field("signal", list);
  }
  if (!inst.note.empty()) fmt::format_to(std::back_inserter(out), "  # {}", escapeNote(inst.note));
  return out;
}

std::string printProgram(const Program& program) {
  std::string out;
  auto to = std::back_inserter(out);
  for (const TensorDecl& t : program.tensors)
    fmt::format_to(to, "tensor {} {} {} {}\n", t.name, shapeString(t.shape), dtypeName(t.dtype),
                   kindName(t.kind));
  for (const std::string& s : program.semaphores) fmt::format_to(to, "semaphore {}\n", s);
  if (!program.tensors.empty() || !program.semaphores.empty()) out += "\n";
  for (const Instruction& inst : program.instructions) {
    out += printInstruction(program, inst);
    out += "\n";
  }
  return out;
}

}  // namespace neuronsim::isa
