// Text assembly parser: declarations and instruction lines back into a Program.
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "isa/assembly.h"
#include "isa/assembly_reader.h"
#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::isa {

namespace {

using namespace asmtext;

constexpr int kNumAluOps = static_cast<int>(AluOp::IsGe) + 1;
constexpr int kNumActFns = static_cast<int>(ActFn::Reciprocal) + 1;
constexpr int kNumSpaces = static_cast<int>(Space::Psum) + 1;

/// The enum value whose printed name is `name`, among the first `count` values.
template <typename E>
std::optional<E> fromName(std::string_view name, std::string_view (*nameOf)(E), int count) {
  for (int i = 0; i < count; ++i)
    if (nameOf(static_cast<E>(i)) == name) return static_cast<E>(i);
  return std::nullopt;
}

template <typename E>
E enumValue(std::string_view name, std::string_view (*nameOf)(E), int count,
            std::string_view what) {
  if (auto e = fromName(name, nameOf, count)) return *e;
  fail(fmt::format("unknown {} {}", what, quoted(name)));
}

std::vector<Dim> parseDims(Reader& r) {
  std::vector<Dim> dims;
  r.expect('[');
  if (r.accept(']')) return dims;
  do {
    Dim d;
    r.expect('[');
    d.step = r.integer();
    r.expect(',');
    d.num = r.integer();
    r.expect(']');
    dims.push_back(d);
  } while (r.accept(','));
  r.expect(']');
  return dims;
}

/// The index of a declared name, or a raw integer index.
int32_t parseRef(Reader& r, const std::vector<std::string>& names, std::string_view kind) {
  if (r.next('-') || r.next('+')) {
    const int64_t index = r.integer();
    return narrow32(index, std::to_string(index), kind);
  }
  const std::string_view w = r.word();
  if (w.empty()) r.problem(fmt::format("expected a {} name", kind));
  if (!isName(w)) return narrow32(parseInteger(w, kind), w, kind);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == w) return static_cast<int32_t>(i);
  r.problem(fmt::format("unknown {} {}", kind, quoted(w)));
}

/// State shared by the lines of one program.
struct Context {
  Program program;
  std::vector<std::string> tensorNames;
};

AccessPattern parseAp(Reader& r, const Context& ctx) {
  AccessPattern ap;
  const std::string_view space = r.word();
  if (auto s = fromName(space, spaceName, kNumSpaces)) {
    ap.space = *s;
  } else {
    r.problem(fmt::format("unknown memory space {} (hbm, sbuf or psum)", quoted(space)));
  }
  r.expect(':');
  const std::string_view dtype = r.word();
  if (auto d = dtypeFromName(dtype)) {
    ap.dtype = *d;
  } else {
    r.problem(fmt::format("unknown dtype {}", quoted(dtype)));
  }
  if (r.accept(':')) ap.tensor = parseRef(r, ctx.tensorNames, "tensor");
  r.expect('[');
  const int64_t start = r.integer();
  r.expect(':');
  const int64_t end = r.integer();
  if (r.accept(':')) ap.partitionStep = r.integer();
  r.expect(']');
  if (start < INT32_MIN || start > INT32_MAX || end < INT32_MIN || end > INT32_MAX ||
      end - start < INT32_MIN || end - start > INT32_MAX)
    r.problem("partition range does not fit in 32 bits");
  ap.partitionStart = static_cast<int32_t>(start);
  ap.partitionCount = static_cast<int32_t>(end - start);
  r.expect('@');
  ap.offset = r.integer();
  ap.dims = parseDims(r);
  return ap;
}

AccessPattern parseOneAp(std::string_view text, const Context& ctx, std::string_view what) {
  Reader r(text, what);
  AccessPattern ap = parseAp(r, ctx);
  if (!r.done()) r.problem("unexpected text after the access pattern");
  return ap;
}

/// `IMM`, or `AP` (whose unused immediate is `unusedImm`), or `AP|IMM`.
ScalarOperand parseScalar(std::string_view text, const Context& ctx, std::string_view what,
                          float unusedImm) {
  if (text.find(':') == std::string_view::npos)
    return ScalarOperand{parseFloat(text, what), std::nullopt};
  const size_t bar = text.find('|');
  if (bar == std::string_view::npos) return ScalarOperand{unusedImm, parseOneAp(text, ctx, what)};
  return ScalarOperand{parseFloat(text.substr(bar + 1), what),
                       parseOneAp(text.substr(0, bar), ctx, what)};
}

bool parseBool(std::string_view text, std::string_view what) {
  if (text == "true") return true;
  if (text == "false") return false;
  fail(fmt::format("bad {} {} (expected true or false)", what, quoted(text)));
}

/// Field parsers: `v` is the text after `key=` ("true" for a bare flag).
using V = std::string_view;
using C = const Context&;

AluOp aluValue(V v) {
  return enumValue(v, aluOpName, kNumAluOps, "ALU op");
}

void setQueue(Instruction& i, V v, C) {
  i.dmaQueue = narrow32(parseInteger(v, "queue"), v, "queue");
}
void setDst(Instruction& i, V v, C c) {
  i.dst = parseOneAp(v, c, "dst");
}
void addSrcs(Instruction& i, V v, C c) {
  Reader r(v, "srcs");
  do {
    i.srcs.push_back(parseAp(r, c));
  } while (r.accept(','));
  if (!r.done()) r.problem("expected ',' between access patterns");
}
void setOp0(Instruction& i, V v, C) {
  i.op0 = aluValue(v);
}
void setOp1(Instruction& i, V v, C) {
  i.op1 = aluValue(v);
}
void setOperand0(Instruction& i, V v, C c) {
  i.operand0 = parseScalar(v, c, "operand0", 0.0f);
}
void setOperand1(Instruction& i, V v, C c) {
  i.operand1 = parseScalar(v, c, "operand1", 0.0f);
}
void setReverse0(Instruction& i, V v, C) {
  i.reverse0 = parseBool(v, "reverse0");
}
void setReverse1(Instruction& i, V v, C) {
  i.reverse1 = parseBool(v, "reverse1");
}
void setAct(Instruction& i, V v, C) {
  i.act = enumValue(v, actFnName, kNumActFns, "activation function");
}
void setScale(Instruction& i, V v, C c) {
  i.scale = parseScalar(v, c, "scale", 1.0f);
}
void setBias(Instruction& i, V v, C c) {
  i.bias = parseOneAp(v, c, "bias");
}
void setReduceDst(Instruction& i, V v, C c) {
  i.reduceDst = parseOneAp(v, c, "reduce_dst");
}
void setReduceAxes(Instruction& i, V v, C) {
  i.reduceAxes = narrow32(parseInteger(v, "reduce_axes"), v, "reduce_axes");
}
void setNegate(Instruction& i, V v, C) {
  i.negate = parseBool(v, "negate");
}
void setAccumulate(Instruction& i, V v, C) {
  i.accumulate = parseBool(v, "accumulate");
}
void setValue(Instruction& i, V v, C) {
  i.value = parseFloat(v, "value");
}
void setCmp(Instruction& i, V v, C) {
  i.cmp = aluValue(v);
}
void setPattern(Instruction& i, V v, C) {
  Reader r(v, "pattern");
  i.affine.pattern = parseDims(r);
  if (!r.done()) r.problem("unexpected text after the pattern");
}
void setOffset(Instruction& i, V v, C) {
  i.affine.offset = parseInteger(v, "offset");
}
void setChannelMultiplier(Instruction& i, V v, C) {
  i.affine.channelMultiplier = parseInteger(v, "channel_multiplier");
}
void addWaits(Instruction& i, V v, C c) {
  Reader r(v, "wait");
  do {
    SemWait w;
    w.sem = parseRef(r, c.program.semaphores, "semaphore");
    r.expect('>');
    r.expect('=');
    w.value = r.integer();
    i.waits.push_back(w);
  } while (r.accept(','));
  if (!r.done()) r.problem("expected SEMAPHORE>=VALUE[,...]");
}
void addSignals(Instruction& i, V v, C c) {
  Reader r(v, "signal");
  do {
    SemSignal s;
    s.sem = parseRef(r, c.program.semaphores, "semaphore");
    if (!r.next('+') && !r.next('-')) r.problem("expected +DELTA after the semaphore");
    s.delta = r.integer();
    if (r.accept('@')) {
      const std::string_view at = r.word();
      if (at == "read") {
        s.at = SignalAt::Read;
      } else if (at == "complete") {
        s.at = SignalAt::Complete;
      } else {
        r.problem(fmt::format("unknown signal point {} (read or complete)", quoted(at)));
      }
    }
    i.signals.push_back(s);
  } while (r.accept(','));
  if (!r.done()) r.problem("expected SEMAPHORE+DELTA[@read|@complete][,...]");
}

/// One `key=value` field of an instruction line. Flags may also be written as a bare key.
struct FieldRule {
  std::string_view key;
  void (*parse)(Instruction&, V, C);
  bool repeatable = false;
  bool flag = false;
};

// clang-format off
const FieldRule kFieldRules[] = {
    {.key = "queue",              .parse = setQueue},
    {.key = "dst",                .parse = setDst},
    {.key = "srcs",               .parse = addSrcs, .repeatable = true},
    {.key = "op0",                .parse = setOp0},
    {.key = "op",                 .parse = setOp0},
    {.key = "operand0",           .parse = setOperand0},
    {.key = "reverse0",           .parse = setReverse0, .flag = true},
    {.key = "op1",                .parse = setOp1},
    {.key = "operand1",           .parse = setOperand1},
    {.key = "reverse1",           .parse = setReverse1, .flag = true},
    {.key = "act",                .parse = setAct},
    {.key = "scale",              .parse = setScale},
    {.key = "bias",               .parse = setBias},
    {.key = "reduce_dst",         .parse = setReduceDst},
    {.key = "reduce_axes",        .parse = setReduceAxes},
    {.key = "negate",             .parse = setNegate, .flag = true},
    {.key = "accumulate",         .parse = setAccumulate, .flag = true},
    {.key = "value",              .parse = setValue},
    {.key = "cmp",                .parse = setCmp},
    {.key = "pattern",            .parse = setPattern},
    {.key = "offset",             .parse = setOffset},
    {.key = "channel_multiplier", .parse = setChannelMultiplier},
    {.key = "wait",               .parse = addWaits, .repeatable = true},
    {.key = "signal",             .parse = addSignals, .repeatable = true},
};
// clang-format on

void checkNewName(std::string_view name, const std::vector<std::string>& existing,
                  std::string_view kind) {
  if (!isName(name))
    fail(fmt::format("bad {} name {} (letters, digits and '_', not starting with a digit)", kind,
                     quoted(name)));
  for (const std::string& e : existing)
    if (e == name) fail(fmt::format("{} {} declared twice", kind, quoted(name)));
}

void parseTensorDecl(const std::vector<std::string_view>& tokens, Context& ctx) {
  if (tokens.size() != 5) fail("expected 'tensor NAME [D0,D1,...] DTYPE input|output|internal'");
  TensorDecl t;
  checkNewName(tokens[1], ctx.tensorNames, "tensor");
  t.name = std::string(tokens[1]);
  Reader r(tokens[2], "shape");
  r.expect('[');
  if (!r.accept(']')) {
    do {
      t.shape.push_back(r.integer());
    } while (r.accept(','));
    r.expect(']');
  }
  if (!r.done()) r.problem("unexpected text after the shape");
  try {
    checkedElements(t.shape, fmt::format("tensor {}", quoted(t.name)));
  } catch (const Error& e) {
    fail(e.what());
  }
  if (auto d = dtypeFromName(tokens[3])) {
    t.dtype = *d;
  } else {
    fail(fmt::format("unknown dtype {}", quoted(tokens[3])));
  }
  if (tokens[4] == "input") {
    t.kind = TensorKind::Input;
  } else if (tokens[4] == "output") {
    t.kind = TensorKind::Output;
  } else if (tokens[4] == "internal") {
    t.kind = TensorKind::Internal;
  } else {
    fail(fmt::format("unknown tensor kind {} (input, output or internal)", quoted(tokens[4])));
  }
  ctx.tensorNames.push_back(t.name);
  ctx.program.tensors.push_back(std::move(t));
}

void parseInstruction(const std::vector<std::string_view>& tokens, std::string note, Context& ctx) {
  Instruction inst;
  inst.engine = enumValue(tokens[0], engineName, kNumEngines, "engine or keyword");
  if (tokens.size() < 2) fail(fmt::format("expected an opcode after {}", quoted(tokens[0])));
  inst.opcode = enumValue(tokens[1], opcodeName, kNumOpcodes, "opcode");
  std::vector<std::string_view> seen;
  for (size_t t = 2; t < tokens.size(); ++t) {
    const std::string_view token = tokens[t];
    const size_t eq = token.find('=');
    const std::string_view key = token.substr(0, eq);
    const FieldRule* rule = nullptr;
    for (const FieldRule& f : kFieldRules)
      if (f.key == key) rule = &f;
    if (!rule) fail(fmt::format("unknown field {}", quoted(key)));
    if (!rule->repeatable) {
      for (std::string_view s : seen)
        if (s == key) fail(fmt::format("field {} given twice", quoted(key)));
      seen.push_back(key);
    }
    if (eq == std::string_view::npos) {
      if (!rule->flag) fail(fmt::format("field {} needs a value ({}=...)", quoted(key), key));
      rule->parse(inst, "true", ctx);
    } else {
      rule->parse(inst, token.substr(eq + 1), ctx);
    }
  }
  inst.note = std::move(note);
  ctx.program.instructions.push_back(std::move(inst));
}

void parseLine(std::string_view line, Context& ctx) {
  std::string note;
  const size_t hash = line.find('#');
  if (hash != std::string_view::npos) {
    std::string_view text = line.substr(hash + 1);
    if (!text.empty() && text[0] == ' ') text.remove_prefix(1);
    note = unescapeNote(text);
    line = line.substr(0, hash);
  }
  const std::vector<std::string_view> tokens = tokenize(line);
  if (tokens.empty()) return;
  if (tokens[0] == "semaphore") {
    if (tokens.size() < 2) fail("expected 'semaphore NAME...'");
    for (size_t i = 1; i < tokens.size(); ++i) {
      checkNewName(tokens[i], ctx.program.semaphores, "semaphore");
      ctx.program.semaphores.emplace_back(tokens[i]);
    }
    return;
  }
  // `tensor NAME [shape] ...` declares; `tensor OPCODE field=...` is a Tensor-engine instruction.
  if (tokens[0] == "tensor" && tokens.size() >= 3 && !tokens[2].empty() && tokens[2][0] == '[') {
    parseTensorDecl(tokens, ctx);
    return;
  }
  parseInstruction(tokens, std::move(note), ctx);
}

}  // namespace

Program parseProgram(const std::string& text, const std::string& source,
                     std::vector<int64_t>* instructionLines) {
  Context ctx;
  size_t lineNumber = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++lineNumber;
    try {
      parseLine(line, ctx);
    } catch (const LineError& e) {
      throw Error(fmt::format("{}:{}: {}", source, lineNumber, e.message));
    }
    if (instructionLines)
      instructionLines->resize(ctx.program.instructions.size(), static_cast<int64_t>(lineNumber));
    pos = end + 1;
  }
  return std::move(ctx.program);
}

}  // namespace neuronsim::isa
