// Kernel specs (library and Python), one run through the harness, its result and its trace.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/file_write.h"
#include "isa/npy.h"
#include "isa/spelling.h"
#include "kernels/harness/occupancy.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "kernels/harness/schedule_effect.h"
#include "kernels/harness/trace_machine.h"
#include "python/src/bindings.h"
#include "python/src/host_arrays.h"
#include "python/src/python_kernel.h"
#include "python/src/run_summary.h"
#include "sim/machine_config.h"
#include "traces/chrome_trace.h"
#include "traces/csv.h"
#include "traces/report.h"
#include "traces/summary.h"
#include "traces/trace_model.h"
#include "traces/viewer/viewer.h"

namespace py = pybind11;

namespace neuronsim::python {

namespace {

using kernels::KernelSpec;
using SpecPtr = std::shared_ptr<KernelSpec>;

/// What a timed run recorded, kept for saving, reporting and viewing.
class RunTrace {
 public:
  RunTrace(std::shared_ptr<const isa::Program> program, traces::EventLog log,
           std::vector<kernels::AllocationRecord> allocations, nlohmann::json summary,
           traces::MachineFacts machine)
      : program_(std::move(program)),
        log_(std::move(log)),
        summary_(std::move(summary)),
        machine_(std::move(machine)) {
    kernels::appendOccupancyCounters(log_, allocations);
  }
  /// The Chrome/Perfetto trace, as `neuronsim run --trace` writes it.
  void save(const std::string& path) const {
    traces::writeChromeTrace(path, *program_, log_, summary_, machine_);
  }
  /// `neuronsim report`'s text.
  std::string report(int top) const { return traces::reportText(model(), top); }
  /// `neuronsim view`'s HTML page.
  void view(const std::string& path, const std::string& title) const {
    traces::writeViewer(path, model(), title);
  }
  void csv(const std::string& path) const { traces::writeInstructionCsv(path, *program_, log_); }

 private:
  traces::TraceModel model() const {
    traces::TraceModel m = traces::traceModel(*program_, log_, machine_);
    m.summary = summary_;
    return m;
  }
  std::shared_ptr<const isa::Program> program_;
  traces::EventLog log_;
  nlohmann::json summary_;
  traces::MachineFacts machine_;
};

/// Everything neuronsim.run returns, before the Python layer dresses it.
struct RunOutput {
  py::dict outputs;
  py::dict inputs;  ///< as the kernel saw them (rounded to its dtype, generated ones included)
  py::object summary = py::none();
  std::vector<std::string> races;
  std::vector<std::string> uninitializedReads;
  std::vector<std::string> unwrittenOutputs;   ///< kernels::unwrittenOutputs
  std::vector<std::string> ineffectiveParams;  ///< kernels::ineffectiveText of each
  std::optional<double> checkError;
  double tolerance = 0;
  std::shared_ptr<RunTrace> trace;
  std::shared_ptr<const isa::Program> program;
};

isa::Dtype kernelDtype(const std::string& text) {
  if (text == "fp32") return isa::Dtype::Fp32;
  if (text == "bf16") return isa::Dtype::Bf16;
  throw Error(fmt::format("dtype takes fp32 or bf16, not '{}'", text));
}

kernels::RunMode runMode(const std::string& text) {
  if (text == "timed") return kernels::RunMode::Timed;
  if (text == "timing_only") return kernels::RunMode::TimingOnly;
  if (text == "interpret") return kernels::RunMode::Interpret;
  throw Error(fmt::format("mode takes timed, timing_only or interpret, not '{}'", text));
}

py::object pythonJson(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

/// A str or os.PathLike as text.
std::string pathText(const py::object& path) {
  return py::str(py::module_::import("os").attr("fspath")(path));
}

/// The checked request of one run: everything known before any tensor data exists.
struct RunRequest {
  isa::Dtype dtype;
  kernels::RunMode mode;
  kernels::ParamValues params;
  sim::MachineConfig machine;
  kernels::InputRequest inputs;
  kernels::ShapeMap inputShapes;
};

RunRequest checkRequest(const SpecPtr& spec, const py::dict& tensors,
                        const kernels::ShapeMap& shapes,
                        const std::vector<std::pair<std::string, std::string>>& paramTexts,
                        const std::string& dtypeText, const std::string& machineName,
                        const std::vector<std::string>& sets, const std::string& modeText,
                        uint64_t seed, bool check) {
  const isa::Dtype dtype = kernelDtype(dtypeText);
  const kernels::RunMode mode = runMode(modeText);
  if (check && mode == kernels::RunMode::TimingOnly)
    throw Error("timing_only computes no outputs to check");
  if (check && !spec->reference)
    throw Error(fmt::format("{} has no reference to check against", spec->name));
  RunRequest r{
      dtype, mode, kernels::parseParams(*spec, paramTexts), sim::loadMachine(machineName, sets),
      {},    {}};
  r.inputs.seed = seed;
  r.inputs.pythonNames = true;
  r.inputs.shapes.assign(shapes.begin(), shapes.end());
  for (const auto& [name, array] : tensors)
    r.inputs.arrays[name.cast<std::string>()] =
        hostTensorFrom(array, fmt::format("{}: {}", spec->name, name.cast<std::string>()));
  r.inputShapes = kernels::resolveInputShapes(*spec, r.inputs, r.params);
  return r;
}

/// --dry-run: checks the request and builds the program (nothing is simulated); returns the
/// names of the outputs the kernel declares.
std::vector<std::string> dryRun(const SpecPtr& spec, const py::dict& tensors,
                                const kernels::ShapeMap& shapes,
                                const std::vector<std::pair<std::string, std::string>>& paramTexts,
                                const std::string& dtypeText, const std::string& machineName,
                                const std::vector<std::string>& sets, const std::string& modeText,
                                uint64_t seed, bool check) {
  const RunRequest r = checkRequest(spec, tensors, shapes, paramTexts, dtypeText, machineName, sets,
                                    modeText, seed, check);
  const kernels::KernelShapes checked = kernels::checkShapes(*spec, r.inputShapes, r.params);
  const isa::Program program =
      kernels::buildKernel(*spec, r.params, checked, r.dtype, r.machine.geometry);
  std::vector<std::string> names;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind == isa::TensorKind::Output) names.push_back(t.name);
  return names;
}

RunOutput runSpec(const SpecPtr& spec, const py::dict& tensors, const kernels::ShapeMap& shapes,
                  const std::vector<std::pair<std::string, std::string>>& paramTexts,
                  const std::string& dtypeText, const std::string& machineName,
                  const std::vector<std::string>& sets, const std::string& modeText, bool trace,
                  uint64_t seed, bool check, bool strict, bool detectRaces) {
  RunRequest r = checkRequest(spec, tensors, shapes, paramTexts, dtypeText, machineName, sets,
                              modeText, seed, check);
  const isa::Dtype dtype = r.dtype;
  const kernels::RunMode mode = r.mode;
  const kernels::ParamValues& params = r.params;
  const sim::MachineConfig& machine = r.machine;
  RunOutput out;
  const kernels::KernelShapes checked = kernels::checkShapes(*spec, r.inputShapes, params);
  kernels::KernelRun run = kernels::buildRun(*spec, params, checked, dtype, machine.geometry);
  for (const kernels::IneffectiveParam& param : kernels::ineffectiveScheduleParams(
           *spec, paramTexts, checked, dtype, machine.geometry, run.program, strict))
    out.ineffectiveParams.push_back(kernels::ineffectiveText(param, true));
  const kernels::HostTensors inputs =
      kernels::loadInputs(*spec, std::move(r.inputs), r.inputShapes, dtype, params);

  traces::EventLog log;
  kernels::RunOptions options;
  options.dtype = dtype;
  options.mode = mode;
  options.detectRaces = detectRaces;
  if (trace && mode != kernels::RunMode::Interpret) options.sink = &log;
  kernels::simulateRun(run, inputs, machine, options);

  out.outputs = numpyDict(run.outputs);
  out.inputs = numpyDict(inputs);
  out.races = run.sim.races;
  out.unwrittenOutputs = kernels::unwrittenOutputs(run.program);
  for (const auto& read : run.uninitializedReads) {
    out.uninitializedReads.push_back(fmt::format("instruction {} reads never-written memory ({})",
                                                 read.instruction, read.operand));
    log.uninitializedRead({read.instruction, read.operand});
  }
  out.tolerance = kernels::tolerance(dtype);
  if (check)
    out.checkError = kernels::maxNormalizedError(run.outputs, spec->reference(inputs, params));
  nlohmann::json summary;
  if (mode != kernels::RunMode::Interpret) {
    summary = runSummary(*spec, machine, dtype, run, params);
    summary["seed"] = seed;
    if (out.checkError) summary["check_error"] = *out.checkError;
    out.summary = pythonJson(summary);
  }
  auto program = std::make_shared<const isa::Program>(std::move(run.program));
  if (options.sink)
    out.trace = std::make_shared<RunTrace>(program, std::move(log), run.allocations, summary,
                                           kernels::traceMachine(machine));
  out.program = program;
  return out;
}

std::vector<py::tuple> tensorList(const std::vector<kernels::TensorSpec>& tensors) {
  std::vector<py::tuple> out;
  for (const auto& t : tensors) out.push_back(py::make_tuple(t.name, t.meaning, t.optional));
  return out;
}

}  // namespace

void bindRun(py::module_& m) {
  py::class_<KernelSpec, SpecPtr>(m, "KernelSpec",
                                  "a kernel: tensors, parameters, build and reference")
      .def_readonly("name", &KernelSpec::name)
      .def_readonly("description", &KernelSpec::description)
      .def_property_readonly("inputs", [](const KernelSpec& s) { return tensorList(s.inputs); })
      .def_property_readonly("outputs", [](const KernelSpec& s) { return tensorList(s.outputs); })
      .def_property_readonly(
          "params",
          [](const KernelSpec& s) {
            std::vector<py::tuple> out;
            for (const auto& p : s.params)
              out.push_back(py::make_tuple(p.name, std::string(kernels::paramTypeName(p.type)),
                                           p.defaultValue, p.meaning, p.choices));
            return out;
          })
      .def_readonly("default_shapes", &KernelSpec::defaultShapes)
      .def_property_readonly("has_reference",
                             [](const KernelSpec& s) { return static_cast<bool>(s.reference); });

  m.def("library_kernels", [] {
    std::vector<std::string> names;
    for (const KernelSpec& s : kernels::kernelRegistry()) names.push_back(s.name);
    return names;
  });
  m.def("library_kernel", [](const std::string& name) {
    return std::make_shared<KernelSpec>(kernels::findKernel(name));
  });
  m.def(
      "python_kernel",
      [](std::string name, std::string description,
         const std::vector<std::pair<std::string, bool>>& inputs,
         const std::vector<std::tuple<std::string, std::string, std::string>>& params,
         kernels::ShapeMap defaultShapes, py::function build, py::object reference) {
        PythonKernelDef def{
            std::move(name),  std::move(description), {}, {}, std::move(defaultShapes),
            std::move(build), std::move(reference)};
        for (const auto& [input, optional] : inputs) def.inputs.push_back({input, "", optional});
        for (const auto& [param, type, defaultValue] : params) {
          kernels::ParamSpec p{param, kernels::ParamType::String, defaultValue, "", {}};
          if (type == "int") p.type = kernels::ParamType::Int;
          if (type == "bool") p.type = kernels::ParamType::Bool;
          if (type == "int3") p.type = kernels::ParamType::Int3;
          if (type == "int6") p.type = kernels::ParamType::Int6;
          def.params.push_back(std::move(p));
        }
        return makePythonKernel(std::move(def));
      },
      py::arg("name"), py::arg("description"), py::arg("inputs"), py::arg("params"),
      py::arg("default_shapes"), py::arg("build"), py::arg("reference"));

  py::class_<RunTrace, std::shared_ptr<RunTrace>>(m, "Trace", "what a timed run recorded")
      .def(
          "save", [](const RunTrace& t, const py::object& path) { t.save(pathText(path)); },
          py::arg("path"), "writes the Chrome/Perfetto trace (neuronsim run --trace)")
      .def("report", &RunTrace::report, py::arg("top") = 5, "the text of neuronsim report")
      .def(
          "view",
          [](const RunTrace& t, const py::object& path, const std::string& title) {
            t.view(pathText(path), title);
          },
          py::arg("path"), py::arg("title") = "neuronsim",
          "writes the HTML timeline (neuronsim view)")
      .def(
          "csv", [](const RunTrace& t, const py::object& path) { t.csv(pathText(path)); },
          py::arg("path"), "writes the instruction table (neuronsim run --csv)");

  py::class_<RunOutput>(m, "RunOutput")
      .def_readonly("outputs", &RunOutput::outputs)
      .def_readonly("inputs", &RunOutput::inputs)
      .def_readonly("summary", &RunOutput::summary)
      .def_readonly("races", &RunOutput::races)
      .def_readonly("uninitialized_reads", &RunOutput::uninitializedReads)
      .def_readonly("unwritten_outputs", &RunOutput::unwrittenOutputs)
      .def_readonly("ineffective_params", &RunOutput::ineffectiveParams)
      .def_readonly("check_error", &RunOutput::checkError)
      .def_readonly("tolerance", &RunOutput::tolerance)
      .def_readonly("trace", &RunOutput::trace)
      .def_property_readonly("notes",
                             [](const RunOutput& r) {
                               std::vector<std::string> notes;
                               for (const auto& inst : r.program->instructions)
                                 notes.push_back(inst.note);
                               return notes;
                             })
      .def("asm", [](const RunOutput& r) { return isa::printProgram(*r.program); });

  m.def(
      "summary_text",
      [](const py::object& summary) {
        const std::string text = py::str(py::module_::import("json").attr("dumps")(summary));
        return traces::summaryText(nlohmann::json::parse(text));
      },
      "the summary block neuronsim run prints");
  m.def("run", &runSpec, py::arg("spec"), py::arg("tensors"), py::arg("shapes"), py::arg("params"),
        py::arg("dtype"), py::arg("machine"), py::arg("sets"), py::arg("mode"), py::arg("trace"),
        py::arg("seed"), py::arg("check"), py::arg("strict"), py::arg("detect_races"));
  m.def("dry_run", &dryRun, py::arg("spec"), py::arg("tensors"), py::arg("shapes"),
        py::arg("params"), py::arg("dtype"), py::arg("machine"), py::arg("sets"), py::arg("mode"),
        py::arg("seed"), py::arg("check"),
        "checks a run and builds its program without simulating; the output names");

  m.def("did_you_mean", &isa::didYouMean, py::arg("word"), py::arg("candidates"),
        "' (did you mean NAME?)' for the closest candidate within 2 edits, else ''");
  m.def(
      "read_npy",
      [](const std::string& path) {
        isa::NpyArray array = isa::readNpy(path);
        return numpyFrom({std::move(array.shape), std::move(array.values)});
      },
      py::arg("path"),
      "a .npy file as float32, with the checks and messages of neuronsim run --input");

  py::class_<isa::OutputSet>(m, "OutputSet",
                             "the files of one command, checked first and committed together")
      .def(py::init<>())
      .def("add_directory", &isa::OutputSet::addDirectory, py::arg("option"), py::arg("dir"))
      .def("add", &isa::OutputSet::add, py::arg("option"), py::arg("path"))
      .def("stage", &isa::OutputSet::stage, py::arg("path"),
           "a temporary file to write path's content to")
      .def("commit", &isa::OutputSet::commit);
}

}  // namespace neuronsim::python
