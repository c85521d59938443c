// conv3d_bwd registry entry: dy, x_in, filters -> any subset of dx, dw, db.
#include <fmt/format.h>

#include "isa/error.h"
#include "kernels/conv/conv_bwd_build.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/reference/conv_ref.h"

namespace neuronsim::kernels {

namespace {

const Shape kDefaultX{1, 64, 8, 16, 16};
const Shape kDefaultFilters{3, 3, 3, 64, 64};

/// The gradients asked for, in output order; throws when none is.
std::vector<std::string> requested(const ParamValues& params) {
  std::vector<std::string> names;
  for (const char* name : {"dx", "dw", "db"})
    if (params.getBool(fmt::format("compute_{}", name))) names.emplace_back(name);
  if (names.empty()) throw Error("conv3d_bwd: compute_dx, compute_dw and compute_db are all false");
  return names;
}

/// dw's schedule parameters (auto: the planner decides).
std::vector<ParamSpec> dwScheduleParams() {
  return {
      scheduleParam("dw_method", ParamType::Enum,
                    "how dw puts positions on partitions (rows: one x transpose per (kh, kw) "
                    "shift and depth; boxes: per tap and partition-sized box; auto: rows when it "
                    "fits)",
                    {}, {"rows", "boxes"}),
      scheduleParam("dw_acc_banks", ParamType::Int,
                    "PSUM banks for dw accumulators with dw_method rows, 1 up to the banks but 2 "
                    "(auto: all but the 2 transpose banks; depth-packed: the banks every shift "
                    "needs)",
                    {"2", "4", "6"})
          .within(
              1, [](const isa::Geometry& g) -> int64_t { return g.psumBanks - 2; },
              "the machine's PSUM banks but the 2 that hold transposes"),
      scheduleParam("dy_transpose", ParamType::Enum,
                    "how dw with dw_method rows gets dy as [positions, C_out] (pe: load chunks "
                    "and PE-transpose per box; dma: one DMA transpose from HBM per box and depth; "
                    "auto: dma when one such DMA moves >= 64 KiB)",
                    {}, {"pe", "dma"}),
      scheduleParam("dw_stationary", ParamType::Enum,
                    "the operand TensorE holds in dw with dw_method rows (x: xT [positions, "
                    "C_in] per tap; dy: dyT [positions, C_out] with all kd taps of a shift in one "
                    "moving; auto: dy when C_out fits the PE columns and it takes fewer PE "
                    "cycles)",
                    {}, {"x", "dy"}),
      scheduleParam("dw_depth_group", ParamType::Int,
                    "dy depths one dw matmul packs with x stationary (stationary xT holds group + "
                    "Kd - 1 depths of C_in, moving dyT group depths of C_out; needs D stride and "
                    "dilation 1 and C_in * (group + Kd - 1) <= 128; 1: off; auto: the group "
                    "taking the fewest PE cycles)",
                    {"1", "2", "4"})
          .within(1),
      scheduleParam("dw_overlap", ParamType::Enum,
                    "with dx, how dw (dw_method rows, depth-packed with shared kh taps) meets dx: "
                    "tail allocates dw's SBUF beside dx and emits its first loads a fifth of dx's "
                    "chunks (times fp32_matmul_factor for fp32, at least one) before dx's last, "
                    "then runs dw on the whole PSUM; spread emits dw's chunks between "
                    "dx's in the PSUM and SBUF dx leaves (dx_psum_buffers auto 2, dx evicts on "
                    "Scalar and dw on Vector); off: dx, then dw (auto: tail where dw's plan "
                    "beside dx keeps its chunks, else off)",
                    {}, {"spread", "tail", "off"}),
      scheduleParam("dw_x_groups", ParamType::Enum,
                    "depth-packed dw with shared kh taps loads x depths in blocks on partition "
                    "groups of 32 (C_in <= 64), so one PE transpose of all partitions gives "
                    "several depths' xT (auto: when it applies, except with dw_overlap spread; "
                    "on: wherever it applies; off: one depth per transpose)",
                    {}, {"on", "off"}),
      scheduleParam("dw_dy_groups", ParamType::Enum,
                    "depth-packed dw with shared kh taps and dy by PE loads dy depths in blocks "
                    "on partition groups of 32 (C_out <= 64), so one PE transpose of all "
                    "partitions gives several depths' dyT and db is summed on GpSimd (auto: when "
                    "it applies; off: one depth per transpose, db by TensorE)",
                    {}, {"off"}),
      scheduleParam("dw_row_reuse", ParamType::Enum,
                    "depth-packed dw with shared kh taps runs the matmuls of one xT row together "
                    "(its kh taps against dy boxes kh rows apart), so the row's stationary loads "
                    "once for Kh matmuls; dyT keeps (Kh - 1) x H dilation + 2 boxes (auto: when "
                    "the stationary's load outlasts a matmul, fp32 on trn2; on: wherever it "
                    "applies)",
                    {}, {"on", "off"}),
      scheduleParam("dw_depth_pairs", ParamType::Enum,
                    "dw with Kd 3 and C_in in (P/4, P/2] (too wide for depth packing): x depths "
                    "d + 1, d + 2 stationary against dy depths d, d + 1 give 4 live taps in one "
                    "matmul, the 2 edge taps run unpacked (auto: when it takes fewer PE cycles "
                    "than one matmul per tap and than dy stationary; on: wherever it applies)",
                    {}, {"on", "off"}),
      scheduleParam(
          "dw_row_pairs", ParamType::Enum,
          "depth-packed dw with shared kh taps, 4 depth slots and Kh 3 multiplies dy "
          "boxes in row pairs: x rows h + 1, h + 2 of the centre depths against each "
          "box and the edge depths against both boxes, 16 matmuls per box pair and "
          "depth pair instead of 18, every block added by selection matmuls at the "
          "store (auto: where it saves at least 16384 PE cycles, e.g. C 32 16x64x64 bf16; "
          "on: wherever it applies)",
          {}, {"on", "off"}),
      scheduleParam("dw_border_engine", ParamType::Enum,
                    "the engine zeroing the borders of dw's x windows (and placing staged x "
                    "rows) (auto: vector where dw shares kh taps in bf16 on a machine with "
                    "VectorE's performance mode, e.g. trn2; else gpsimd)",
                    {}, {"gpsimd", "vector"}),
      scheduleParam("dw_dy_loads", ParamType::Enum,
                    "grouped dy tiles (dw_dy_groups) of bands with equal rows load by one DMA per "
                    "partition group for all bands (merged) or one per band and group (bands) "
                    "(auto: merged where that DMA moves at most 128 KiB)",
                    {}, {"bands", "merged"}),
      scheduleParam("dw_lead", ParamType::Int,
                    "with dw_overlap spread, dw chunks emitted before dx's first chunk, >= 0 "
                    "(auto: 0); the rest are spread evenly over dx's chunks",
                    {"1", "2", "4"})
          .within(0),
  };
}

ShapeMap inferBwd(const ShapeMap& inputs, const ParamValues& params) {
  const ConvCore core = conv3dBwdCore(inputs, params);
  ShapeMap out;
  for (const std::string& name : requested(params)) {
    if (name == "dx") out["dx"] = inputs.at("x_in");
    if (name == "dw") out["dw"] = inputs.at("filters");
    if (name == "db") out["db"] = {core.cout};
  }
  return out;
}

/// dy's shape from x_in and filters (given or default) and the parameters; nothing when they do
/// not fit (inferShapes then names the culprit).
ShapeMap deriveBwd(const ShapeMap& given, const ParamValues& params) {
  ShapeMap shapes{{"x_in", given.count("x_in") ? given.at("x_in") : kDefaultX},
                  {"filters", given.count("filters") ? given.at("filters") : kDefaultFilters}};
  try {
    return {{"dy", conv3dBwdCore(shapes, params, false).outputShape()}};
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

ConvBwdOptions bwdOptions(const ParamValues& params) {
  ConvBwdOptions options;
  options.dwMethod = params.getString("dw_method");
  options.dwAccBanks = params.intOr("dw_acc_banks", 0);
  options.dyTranspose = params.getString("dy_transpose");
  options.dwStationary = params.getString("dw_stationary");
  options.dwDepthGroup = params.intOr("dw_depth_group", 0);
  options.dwOverlap = params.getString("dw_overlap");
  options.dwLead = params.intOr("dw_lead", -1);
  options.dwXGroups = params.getString("dw_x_groups");
  options.dwDyGroups = params.getString("dw_dy_groups");
  options.dwRowReuse = params.getString("dw_row_reuse");
  options.dwDepthPairs = params.getString("dw_depth_pairs");
  options.dwRowPairs = params.getString("dw_row_pairs");
  options.dwBorderEngine = params.getString("dw_border_engine");
  options.dwDyLoads = params.getString("dw_dy_loads");
  options.fuseDb = params.getBool("compute_db");
  return options;
}

KernelSpec conv3dBwdSpec() {
  KernelSpec spec;
  spec.name = "conv3d_bwd";
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description =
      "gradients of conv3d (no bias/activation) w.r.t. x_in, filters and bias: any subset of dx, "
      "dw, db";
  spec.inputs = {{"dy", "output gradient [B, C_out, D_out, H_out, W_out]", false},
                 {"x_in", "forward input [B, C_in, D, H, W]", false},
                 {"filters", "forward filters [Kd, Kh, Kw, C_in, C_out]", false}};
  spec.outputs = {{"dx", "input gradient [B, C_in, D, H, W]", false},
                  {"dw", "filter gradient [Kd, Kh, Kw, C_in, C_out]", false},
                  {"db", "bias gradient [C_out]", false}};
  spec.params = {
      {"stride", ParamType::Int3, "1", "forward output step (D, H, W)", {}},
      {"padding",
       ParamType::Int6,
       "0",
       "forward zero padding (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi)",
       {}},
      {"dilation", ParamType::Int3, "1", "forward filter tap spacing (D, H, W)", {}},
      {"compute_dx", ParamType::Bool, "true", "produce dx", {}},
      {"compute_dw", ParamType::Bool, "true", "produce dw", {}},
      {"compute_db", ParamType::Bool, "true", "produce db", {}},
  };
  for (ParamSpec& p : dwScheduleParams()) spec.params.push_back(std::move(p));
  for (ParamSpec& p : dxScheduleParams()) spec.params.push_back(std::move(p));
  spec.defaultShapes = {
      {"dy", {1, 64, 6, 14, 14}}, {"x_in", kDefaultX}, {"filters", kDefaultFilters}};
  spec.deriveShapes = deriveBwd;
  spec.inferShapes = inferBwd;
  spec.build = [](KernelBuilder& builder, const KernelArgs& args) {
    ShapeMap shapes;
    for (const auto& [name, view] : args.inputs) shapes[name] = view.shape();
    const ConvCore core = conv3dBwdCore(shapes, args.params);
    bool dbDone = false;  // computed with dw
    bool dwDone = false;  // emitted between dx's chunks
    if (args.hasOutput("dx")) {
      ConvOptions dxo = dxOptions(args.params);
      std::optional<OverlappedDw> overlap;
      if (args.hasOutput("dw")) {
        std::optional<HbmView> db;
        if (args.hasOutput("db")) db = args.out("db");
        overlap.emplace(builder, core, args.dtype, args.in("dy"), args.in("x_in"), args.out("dw"),
                        db, bwdOptions(args.params));
        overlap->attach(dxo);
      }
      buildConvDx(builder, core, args.dtype, args.in("dy"), args.in("filters"), args.out("dx"),
                  dxo);
      if (overlap) {
        dwDone = overlap->finish();
        dbDone = dwDone && overlap->dbDone();
      }
    }
    if (args.hasOutput("dw") && !dwDone) {
      const ConvBwdPlan plan =
          planConvBwd(core, args.dtype, builder.geometry(), bwdOptions(args.params));
      if (plan.dwMethod == DwMethod::Rows) {
        std::optional<HbmView> db;
        if (plan.rows.db) db = args.out("db");
        buildConvDwRows(builder, core, plan.rows, args.dtype, args.in("dy"), args.in("x_in"),
                        args.out("dw"), db);
        dbDone = plan.rows.db;
      } else {
        buildConvDw(builder, core, plan.boxes, args.dtype, args.in("dy"), args.in("x_in"),
                    args.out("dw"));
      }
    }
    if (args.hasOutput("db") && !dbDone) buildConvDb(builder, args.in("dy"), args.out("db"));
  };
  spec.reference = [](const HostTensors& inputs, const ParamValues& params) {
    ConvRefParams p;
    p.stride = params.getInt3("stride");
    p.padding = params.getInt6("padding");
    p.dilation = params.getInt3("dilation");
    HostTensors all = conv3dBwdRef(inputs.at("dy"), inputs.at("x_in"), inputs.at("filters"), p);
    HostTensors out;
    for (const std::string& name : requested(params)) out[name] = std::move(all[name]);
    return out;
  };
  spec.flops = [](const ShapeMap& inputs, const ParamValues& params) {
    const double one = 2.0 * usefulMacs(conv3dBwdCore(inputs, params));
    return one * (static_cast<double>(params.getBool("compute_dx")) +
                  static_cast<double>(params.getBool("compute_dw")));
  };
  return spec;
}

}  // namespace neuronsim::kernels
