// Machine facts to and from the trace's JSON.
#include "traces/machine_facts.h"

namespace neuronsim::traces {

double MachineFacts::number(const std::string& key, double fallback) const {
  auto it = params.find(key);
  return it != params.end() && it->is_number() ? it->get<double>() : fallback;
}

bool MachineFacts::flag(const std::string& key, bool fallback) const {
  auto it = params.find(key);
  return it != params.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

nlohmann::json machineFactsJson(const MachineFacts& machine) {
  nlohmann::json latency = nlohmann::json::object();
  for (int e = 0; e < isa::kNumEngines; ++e)
    latency[std::string(isa::engineName(static_cast<isa::Engine>(e)))] =
        machine.pipelineLatencyNs[static_cast<size_t>(e)];
  return {{"name", machine.name},
          {"params", machine.params},
          {"pipeline_latency_ns", latency},
          {"semaphore_handoff_ns", machine.semaphoreHandoffNs}};
}

MachineFacts machineFactsFrom(const nlohmann::json& section) {
  MachineFacts machine;
  if (!section.is_object()) return machine;
  if (auto n = section.find("name"); n != section.end() && n->is_string())
    machine.name = n->get<std::string>();
  if (auto p = section.find("params"); p != section.end() && p->is_object()) machine.params = *p;
  if (auto l = section.find("pipeline_latency_ns"); l != section.end() && l->is_object())
    for (int e = 0; e < isa::kNumEngines; ++e)
      if (auto v = l->find(std::string(isa::engineName(static_cast<isa::Engine>(e))));
          v != l->end() && v->is_number())
        machine.pipelineLatencyNs[static_cast<size_t>(e)] = v->get<double>();
  if (auto h = section.find("semaphore_handoff_ns"); h != section.end() && h->is_number())
    machine.semaphoreHandoffNs = h->get<double>();
  return machine;
}

}  // namespace neuronsim::traces
