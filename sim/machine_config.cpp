// Machine presets: the built-in JSON files, parameter table, file loading and --set overrides.
#include "sim/machine_config.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <variant>

#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/size_limits.h"
#include "isa/spelling.h"

namespace neuronsim::sim {
namespace {

/// A built-in preset: its name and JSON text.
struct Preset {
  const char* name;
  const char* json;
};

constexpr Preset kPresets[] = {
#include "sim/machine_presets.inc"
};

using Field =
    std::variant<double MachineConfig::*, int64_t MachineConfig::*, int32_t MachineConfig::*,
                 bool MachineConfig::*, double isa::Geometry::*, int64_t isa::Geometry::*,
                 int32_t isa::Geometry::*, bool isa::Geometry::*>;

/// The field a parameter names, on the config or on its geometry (Config: maybe const).
template <typename Config, typename T>
auto& fieldOf(Config& config, T MachineConfig::*member) {
  return config.*member;
}
template <typename Config, typename T>
auto& fieldOf(Config& config, T isa::Geometry::*member) {
  return config.geometry.*member;
}

/// One machine parameter: its JSON key, the field it sets, and its allowed range (inclusive).
/// The ranges keep every run inside the simulated-time limit's scale: a clock of 1e-12 GHz or
/// a latency of 1e15 ns is a typo, not a machine.
struct Parameter {
  const char* key;
  Field field;
  double min;
  double max;
};

constexpr double kMaxCycles = 1e6;   ///< any fixed cost in cycles
constexpr double kMaxFixedNs = 1e6;  ///< any fixed latency: 1 ms
constexpr double kMaxFactor = 1000;  ///< any cost multiplier or speedup

const Parameter kParameters[] = {
    {"partitions", &isa::Geometry::partitions, 1, 1024},
    {"pe_rows", &isa::Geometry::peRows, 1, 1024},
    {"pe_cols", &isa::Geometry::peCols, 1, 1024},
    {"sbuf_partition_bytes", &isa::Geometry::sbufPartitionBytes, 1, 1 << 30},
    {"psum_partition_bytes", &isa::Geometry::psumPartitionBytes, 1, 1 << 30},
    {"psum_banks", &isa::Geometry::psumBanks, 1, 1024},
    {"max_moving_free", &isa::Geometry::maxMovingFree, 1, 65535},
    {"pe_ghz", &isa::Geometry::peGhz, 0.01, 100},
    {"hbm_gbps", &MachineConfig::hbmGBps, 0.01, 1e6},
    {"dve_ghz", &isa::Geometry::vectorGhz, 0.01, 100},
    {"act_ghz", &isa::Geometry::scalarGhz, 0.01, 100},
    {"pool_ghz", &isa::Geometry::gpsimdGhz, 0.01, 100},
    {"sync_ghz", &MachineConfig::syncGhz, 0.01, 100},
    {"mm_min_cycles", &isa::Geometry::matmulMinCycles, 0, kMaxCycles},
    {"ls_speedup", &isa::Geometry::lsSpeedup, 0.001, kMaxFactor},
    {"ls_speedup_fp32", &isa::Geometry::lsSpeedupFp32, 0.001, kMaxFactor},
    {"fp32_matmul_factor", &isa::Geometry::fp32MatmulFactor, 0.001, kMaxFactor},
    {"fp32_transpose_factor", &MachineConfig::fp32TransposeFactor, 0.001, kMaxFactor},
    {"pe_throttle", &MachineConfig::peThrottle, 0, 1},
    {"throttle_start_fraction", &MachineConfig::throttleStartFraction, 0.01, 1},
    {"throttle_ramp_ns", &MachineConfig::throttleRampNs, 0, kMaxFixedNs},
    {"throttle_window_ns", &MachineConfig::throttleWindowNs, 1, kMaxFixedNs},
    {"throttle_utilization", &MachineConfig::throttleUtilization, 0, 1},
    {"min_ii_cycles", &isa::Geometry::minIiCycles, 0, kMaxCycles},
    {"gpsimd_start_cycles", &isa::Geometry::gpsimdStartCycles, 0, kMaxCycles},
    {"access_overhead_cycles", &MachineConfig::accessOverheadCycles, 0, kMaxCycles},
    {"static_overhead_cycles", &MachineConfig::staticOverheadCycles, 0, kMaxCycles},
    {"stride_threshold_bytes", &MachineConfig::strideThresholdBytes, 0, 1 << 30},
    {"strided_slowdown", &MachineConfig::stridedSlowdown, 0.001, kMaxFactor},
    {"vector_perf_mode", &isa::Geometry::vectorPerfMode, 0, 1},
    {"access_conflicts", &isa::Geometry::accessConflicts, 0, 1},
    {"psum_bank_conflicts", &MachineConfig::psumBankConflicts, 0, 1},
    {"dma_engines", &isa::Geometry::dmaEngines, 1, 64},
    {"dma_queues", &isa::Geometry::dmaQueues, 1, isa::kMaxDmaQueues},
    {"dma_queue_inflight", &MachineConfig::dmaQueueInflight, 1, 1024},
    {"dma_engine_bytes_per_ns", &MachineConfig::dmaEngineBytesPerNs, 0.01, 1e6},
    {"dma_latency_ns", &MachineConfig::dmaLatencyNs, 0, kMaxFixedNs},
    {"dma_transfer_overhead_ns", &isa::Geometry::dmaTransferOverheadNs, 0, kMaxFixedNs},
    {"dma_min_descriptor_bytes", &MachineConfig::dmaMinDescriptorBytes, 0, 1 << 20},
    {"dma_trigger_ns", &isa::Geometry::dmaTriggerNs, 0, kMaxFixedNs},
    {"dma_swdge", &MachineConfig::dmaSwdge, 0, 1},
    {"dma_swdge_descriptor_cycles", &MachineConfig::dmaSwdgeDescriptorCycles, 0, kMaxCycles},
    {"dma_transpose_hbm_efficiency", &MachineConfig::dmaTransposeHbmEfficiency, 0.01, 1},
    {"dma_transpose_sbuf_efficiency", &MachineConfig::dmaTransposeSbufEfficiency, 0.01, 1},
    {"dma_strided_hbm_efficiency", &isa::Geometry::dmaStridedHbmEfficiency, 0.01, 1},
    {"semaphore_handoff_cycles", &MachineConfig::semaphoreHandoffCycles, 0, kMaxCycles},
};

const Parameter* findParameter(const std::string& key) {
  for (const Parameter& p : kParameters)
    if (key == p.key) return &p;
  return nullptr;
}

/// "unknown machine parameter 'KEY'", with the closest known key when one is close.
std::string unknownParameter(const std::string& key) {
  std::vector<std::string> keys;
  for (const Parameter& p : kParameters) keys.emplace_back(p.key);
  return fmt::format("unknown machine parameter '{}'{}", key, isa::didYouMean(key, keys));
}

/// A range bound as people write it (1e+06 -> 1e6, 0.01, 1073741824).
std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  std::string out = text;
  const size_t e = out.find("e+");
  if (e != std::string::npos) out.erase(e + 1, out[e + 2] == '0' ? 2 : 1);
  return out;
}

[[noreturn]] void badValue(const std::string& where, const std::string& key,
                           const std::string& value, const std::string& rule) {
  throw Error(fmt::format("{}: {} = {}: {}", where, key, value, rule));
}

/// Sets one parameter from a JSON value, checking type and range.
void setParameter(MachineConfig& config, const Parameter& param, const nlohmann::json& value,
                  const std::string& where) {
  const std::string key = param.key;
  const std::string shown = [&]() -> std::string {
    if (!value.is_number_float() || std::isfinite(value.get<double>())) return value.dump();
    return std::isnan(value.get<double>()) ? "nan" : value.get<double>() > 0 ? "inf" : "-inf";
  }();
  std::visit(
      [&](auto member) {
        auto checkNumber = [&](double v) {
          if (!value.is_number()) badValue(where, key, shown, "must be a number");
          if (!(v >= param.min && v <= param.max))
            badValue(where, key, shown,
                     fmt::format("must be within [{}, {}]", shortNumber(param.min),
                                 shortNumber(param.max)));
        };
        auto& field = fieldOf(config, member);
        using T = std::remove_reference_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (!value.is_boolean()) badValue(where, key, shown, "must be true or false");
          field = value.get<bool>();
        } else if constexpr (std::is_same_v<T, double>) {
          checkNumber(value.is_number() ? value.get<double>() : 0);
          field = value.get<double>();
        } else {
          if (!value.is_number_integer()) badValue(where, key, shown, "must be an integer");
          if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX)
            badValue(where, key, shown, "is too large");
          checkNumber(static_cast<double>(value.get<int64_t>()));
          const int64_t v = value.get<int64_t>();
          if constexpr (std::is_same_v<T, int32_t>) {
            if (v > INT32_MAX) badValue(where, key, shown, "is too large");
          }
          field = static_cast<T>(v);
        }
      },
      param.field);
}

/// Applies a preset document's "params" over `config`. Every entry needs value and source.
void applyDocument(MachineConfig& config, const nlohmann::json& doc, const std::string& where,
                   bool requireAll) {
  if (!doc.is_object()) throw Error(fmt::format("{}: a machine file must be a JSON object", where));
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) throw Error(fmt::format("{}: \"name\" must be a string", where));
    config.name = doc["name"].get<std::string>();
  }
  if (!doc.contains("params") || !doc["params"].is_object())
    throw Error(
        fmt::format("{}: not a machine file: it has no \"params\" object (a preset's "
                    "parameters, as in sim/machines/trn2.json)",
                    where));
  for (const auto& [key, entry] : doc["params"].items()) {
    const Parameter* param = findParameter(key);
    if (!param) throw Error(fmt::format("{}: {}", where, unknownParameter(key)));
    if (!entry.is_object() || !entry.contains("value"))
      throw Error(fmt::format("{}: {}: expected {{\"value\": ..., \"source\": ...}}", where, key));
    if (!entry.contains("source") || !entry["source"].is_string() ||
        entry["source"].get<std::string>().empty())
      throw Error(fmt::format(
          "{}: {}: every number needs a \"source\" (a reference key or 'assumption: why')", where,
          key));
    setParameter(config, *param, entry["value"], where);
  }
  if (requireAll) {
    for (const Parameter& p : kParameters)
      if (!doc["params"].contains(p.key))
        throw Error(fmt::format("{}: missing machine parameter '{}'", where, p.key));
  }
  for (const auto& [key, unused] : doc.items()) {
    (void)unused;
    if (key != "name" && key != "params" && key != "description" && key != "base")
      throw Error(fmt::format("{}: unknown top-level key '{}'", where, key));
  }
}

nlohmann::json parseJson(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    // The library's text after its "[json.exception.parse_error.101] " tag.
    const std::string what = e.what();
    const size_t tag = what.rfind("] ", what.find(' '));
    throw Error(fmt::format("{}: not valid JSON ({})", where,
                            tag == std::string::npos ? what : what.substr(tag + 2)));
  }
}

const Preset* findPreset(const std::string& name) {
  for (const Preset& p : kPresets)
    if (name == p.name) return &p;
  return nullptr;
}

MachineConfig loadPreset(const Preset& preset) {
  MachineConfig config;
  config.name = preset.name;
  const std::string where = fmt::format("machine {}", preset.name);
  applyDocument(config, parseJson(preset.json, where), where, true);
  return config;
}

/// Parses VALUE of --set KEY=VALUE as JSON (numbers, true/false).
nlohmann::json parseOverrideValue(const std::string& key, const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && ptr == text.data() + text.size()) return i;
  double d = 0;
  auto [ptr2, ec2] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec2 == std::errc() && ptr2 == text.data() + text.size()) return d;
  throw Error(fmt::format("--set {}={}: '{}' is not a number or true/false", key, text, text));
}

}  // namespace

std::vector<std::string> machinePresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

nlohmann::json machineParameterValues(const MachineConfig& machine) {
  nlohmann::json values = nlohmann::json::object();
  for (const Parameter& p : kParameters)
    std::visit([&](auto member) { values[p.key] = fieldOf(machine, member); }, p.field);
  return values;
}

MachineConfig loadMachine(const std::string& nameOrPath,
                          const std::vector<std::string>& overrides) {
  MachineConfig config;
  if (const Preset* preset = findPreset(nameOrPath)) {
    config = loadPreset(*preset);
  } else {
    std::ifstream in(nameOrPath);
    if (!in) {
      std::vector<std::string_view> names;
      for (const Preset& p : kPresets) names.push_back(p.name);
      throw Error(fmt::format("--machine {}: not a preset ({}) nor a readable JSON file",
                              nameOrPath, fmt::join(names, ", ")));
    }
    const nlohmann::json doc = parseJson(
        isa::readTextFile(nameOrPath, isa::kMaxMachineFileBytes, "machine file"), nameOrPath);
    std::string base = "trn2";
    if (doc.is_object() && doc.contains("base")) {
      if (!doc["base"].is_string() || !findPreset(doc["base"].get<std::string>()))
        throw Error(fmt::format("{}: \"base\" must name a preset (trn2, trn1)", nameOrPath));
      base = doc["base"].get<std::string>();
    }
    config = loadPreset(*findPreset(base));
    config.name = nameOrPath;
    applyDocument(config, doc, nameOrPath, false);
  }
  for (const std::string& item : overrides) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("--set {}: expected KEY=VALUE", item));
    const std::string key = item.substr(0, eq);
    const Parameter* param = findParameter(key);
    if (!param) throw Error(fmt::format("--set {}: {}", item, unknownParameter(key)));
    setParameter(config, *param, parseOverrideValue(key, item.substr(eq + 1)), "--set");
  }
  if (config.geometry.psumPartitionBytes % config.geometry.psumBanks != 0)
    throw Error(fmt::format("machine {}: psum_partition_bytes must divide into psum_banks banks",
                            config.name));
  if (config.psumBankConflicts && config.geometry.psumBanks > 64)
    throw Error(
        fmt::format("machine {}: psum_bank_conflicts tracks at most 64 PSUM banks, "
                    "psum_banks is {}",
                    config.name, config.geometry.psumBanks));
  isa::Geometry& g = config.geometry;
  g.hbmBytesPerPeCycle = config.hbmGBps / g.peGhz;
  g.dmaBytesPerPeCycle = g.dmaEngines * config.dmaEngineBytesPerNs / g.peGhz;
  return config;
}

}  // namespace neuronsim::sim
