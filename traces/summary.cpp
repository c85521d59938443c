// Summary metrics of one run (neuron-profile style) and their text rendering.
#include "traces/summary.h"

#include <cstdio>

namespace neuronsim::traces {

namespace {

/// Fewest instructions whose simulation rate summaryText prints: below, the simulator's fixed
/// setup (SystemC elaboration, engine threads) dominates the host time and the rate means nothing.
constexpr double kMinRateInstructions = 100000;

double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

/// How many bf16 flops one raw flop of `dtype` counts as (neuron-profile's adjusted flops).
double bf16Factor(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4.0;
  if (dtype.rfind("fp8", 0) == 0) return 0.5;
  return 1.0;
}

double number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string("?");
}

}  // namespace

nlohmann::json summaryJson(const RunInfo& info, const RunTotals& totals) {
  const double total = totals.total.ns();
  nlohmann::json s;
  s["kernel"] = info.kernel;
  s["machine"] = info.machine;
  s["dtype"] = info.dtype;
  s["total_ns"] = total;
  s["instructions"] = totals.instructions;

  nlohmann::json engines = nlohmann::json::object();
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const EngineTotals& t = totals.engines[static_cast<size_t>(e)];
    engines[std::string(isa::engineName(static_cast<isa::Engine>(e)))] = {
        {"busy_ns", t.busy.ns()},
        {"active_ns", t.active.ns()},
        {"active_percent", 100.0 * ratio(t.active.ns(), total)},
        {"instructions", t.instructions}};
  }
  s["engines"] = engines;

  s["dma"] = {{"bytes", totals.dmaBytes},
              {"transfers", totals.dmaTransfers},
              {"active_ns", totals.dmaActive.ns()},
              {"active_percent", 100.0 * ratio(totals.dmaActive.ns(), total)},
              {"achieved_gbps", ratio(static_cast<double>(totals.dmaBytes), total)},
              {"average_bytes", ratio(static_cast<double>(totals.dmaBytes),
                                      static_cast<double>(totals.dmaTransfers))}};

  const double flops = static_cast<double>(totals.flops);
  const double factor = bf16Factor(info.dtype);
  s["flops"] = totals.flops;
  s["adjusted_flops"] = flops * factor;
  s["transpose_flops"] = totals.transposeFlops;
  s["peak_flops_per_ns"] = info.peakFlopsPerNs;
  s["mfu_percent"] = 100.0 * ratio(flops * factor, info.peakFlopsPerNs * factor * total);
  s["hbm_bytes"] = totals.hbmBytes;
  s["hbm_bytes_per_ns"] = info.hbmBytesPerNs;
  s["min_hbm_bytes"] = info.minHbmBytes;
  s["mbu_percent"] =
      100.0 * ratio(static_cast<double>(totals.hbmBytes), info.hbmBytesPerNs * total);
  // A kernel that skips work its flops formula counts (taps that read only padding) needs less.
  const double mustFlops = info.mustFlops >= 0 && info.mustFlops < flops ? info.mustFlops : flops;
  const double computeNs = ratio(mustFlops, info.peakFlopsPerNs);
  const double memoryNs = ratio(static_cast<double>(info.minHbmBytes), info.hbmBytesPerNs);
  const double roofline = computeNs > memoryNs ? computeNs : memoryNs;
  s["roofline_ns"] = roofline;
  s["roofline_bound"] = roofline <= 0 ? "none" : computeNs >= memoryNs ? "compute" : "memory";
  s["roofline_percent"] = 100.0 * ratio(roofline, total);
  s["sbuf_read_bytes"] = totals.sbufReadBytes;
  s["sbuf_write_bytes"] = totals.sbufWriteBytes;
  s["host_seconds"] = totals.hostSeconds;
  s["sim_instructions_per_second"] =
      ratio(static_cast<double>(totals.instructions), totals.hostSeconds);
  return s;
}

std::string summaryText(const nlohmann::json& summary) {
  std::string out;
  char line[256];
  auto add = [&](int n) {
    if (n > 0)
      out.append(line,
                 static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
  };
  const double total = number(summary, "total_ns");
  add(std::snprintf(line, sizeof line, "%s on %s (%s): %.3f us, %.0f instructions\n",
                    text(summary, "kernel").c_str(), text(summary, "machine").c_str(),
                    text(summary, "dtype").c_str(), total / 1000.0,
                    number(summary, "instructions")));
  if (auto engines = summary.find("engines"); engines != summary.end() && engines->is_object()) {
    add(std::snprintf(line, sizeof line, "  %-8s %12s %8s %12s\n", "engine", "busy us", "active",
                      "instructions"));
    for (int i = 0; i < isa::kNumEngines; ++i) {
      const std::string name(isa::engineName(static_cast<isa::Engine>(i)));
      auto e = engines->find(name);
      if (e == engines->end()) continue;
      add(std::snprintf(line, sizeof line, "  %-8s %12.3f %7.1f%% %12.0f\n", name.c_str(),
                        number(*e, "busy_ns") / 1000.0, number(*e, "active_percent"),
                        number(*e, "instructions")));
    }
  }
  if (auto dma = summary.find("dma"); dma != summary.end() && dma->is_object()) {
    add(std::snprintf(
        line, sizeof line,
        "  dma: %.0f bytes in %.0f transfers (avg %.0f B), active %.1f%%, %.2f GB/s\n",
        number(*dma, "bytes"), number(*dma, "transfers"), number(*dma, "average_bytes"),
        number(*dma, "active_percent"), number(*dma, "achieved_gbps")));
  }
  add(std::snprintf(
      line, sizeof line, "  flops %.4g (transpose %.4g), MFU %.2f%%, HBM %.0f bytes, MBU %.2f%%\n",
      number(summary, "flops"), number(summary, "transpose_flops"), number(summary, "mfu_percent"),
      number(summary, "hbm_bytes"), number(summary, "mbu_percent")));
  add(std::snprintf(line, sizeof line,
                    "  roofline %.3f us (%s bound), achieved %.1f%% of roofline\n",
                    number(summary, "roofline_ns") / 1000.0,
                    text(summary, "roofline_bound").c_str(), number(summary, "roofline_percent")));
  add(std::snprintf(line, sizeof line, "  sbuf read %.0f B, write %.0f B\n",
                    number(summary, "sbuf_read_bytes"), number(summary, "sbuf_write_bytes")));
  add(std::snprintf(line, sizeof line, "  host time:"));
  if (summary.contains("build_seconds"))
    add(std::snprintf(line, sizeof line, " build %.3f s,", number(summary, "build_seconds")));
  add(std::snprintf(line, sizeof line, " simulation %.3f s", number(summary, "host_seconds")));
  if (number(summary, "instructions") >= kMinRateInstructions)
    add(std::snprintf(line, sizeof line, " (%.2fM simulated instructions/s)",
                      number(summary, "sim_instructions_per_second") / 1e6));
  out += '\n';
  return out;
}

}  // namespace neuronsim::traces
