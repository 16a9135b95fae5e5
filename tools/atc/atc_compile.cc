#include "atc_compile.h"
#include "aipp.h"
#include "io_types.h"
#include "fusion_switch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "executor/interpreter_ops.h"
#include "om/om_file.h"
#include "ops/custom_op.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "parser/mindir/mindir_parser.h"
#include "parser/onnx/onnx_parser.h"
#include "passes/pipeline.h"
#include "passes/calibrate.h"
#include "runtime/dynamic_gears.h"
#include "runtime/shape_specializer.h"

namespace oc::atc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A stage is reported once the whole compile has taken over a second: quick
// compiles stay quiet, slow ones show where the time goes.
constexpr double kStageReportSeconds = 1.0;

class Progress {
 public:
  explicit Progress(LogLevel level) : level_(level), start_(Clock::now()), stage_start_(start_) {}

  bool info() const { return level_ <= LogLevel::kInfo; }
  bool debug() const { return level_ <= LogLevel::kDebug; }
  void Info(const std::string& line) const {
    if (info()) std::printf("[INFO] ATC: %s\n", line.c_str());
  }
  void Warn(const std::string& line) const {
    if (level_ <= LogLevel::kWarning) std::printf("[WARNING] ATC: %s\n", line.c_str());
  }
  void StageDone(const std::string& stage) {
    auto now = Clock::now();
    double stage_s = std::chrono::duration<double>(now - stage_start_).count();
    double total_s = std::chrono::duration<double>(now - start_).count();
    stage_start_ = now;
    char buf[160];
    std::snprintf(buf, sizeof buf, "[%s] done in %.3f s (elapsed %.3f s)", stage.c_str(), stage_s, total_s);
    pending_.emplace_back(buf);
    if (total_s > kStageReportSeconds || info()) Flush();
  }
  void Flush() {
    for (const auto& line : pending_) std::printf("%s\n", line.c_str());
    pending_.clear();
    std::fflush(stdout);
  }
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  LogLevel level_;
  Clock::time_point start_, stage_start_;
  std::vector<std::string> pending_;
};

std::string FormatBytes(int64_t n) {
  char buf[64];
  if (n < 0) return "unknown";
  if (n >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", n / 1048576.0);
  else if (n >= 1024) std::snprintf(buf, sizeof buf, "%.2f KiB", n / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(n));
  return std::string(buf) + " (" + std::to_string(n) + " bytes)";
}

AtcError ParseError(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
      return {"E11001", "cannot read the model: " + s.message()};
    case StatusCode::kInvalidArgument:
      return {"E10001", s.message()};
    case StatusCode::kNotSupported:
      if (s.message().find("unsupported operator") != std::string::npos)
        return {"E11003", "the model uses operators this build does not implement: " + s.message()};
      return {"E11004", "the model uses a feature that is not supported: " + s.message()};
    default:
      return {"E11002", "cannot parse the model: " + s.message()};
  }
}

// Entries of --input_shape with -1 dims are applied after parsing (the parser
// takes fixed shapes only): the input keeps the model's dim names where the
// dim stays -1.
std::optional<AtcError> ApplyDynamicInputShapes(Graph& g, const OrderedInputShapes& entries) {
  for (const auto& [name, dims] : entries) {
    if (std::find(dims.begin(), dims.end(), -1) == dims.end()) continue;
    Value* v = nullptr;
    for (Value* in : g.inputs) if (in->name == name) v = in;
    if (!v)
      return Invalid("input_shape", name, "'" + name + "' is not an input of the model");
    if (v->has_shape && v->shape.size() != dims.size())
      return AtcError{"E10001", "--input_shape for '" + name + "' has rank " + std::to_string(dims.size()) +
                                    " but the model declares " + v->ShapeString()};
    std::vector<std::string> params(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (v->has_shape && dims[i] >= 0 && v->shape[i] >= 0 && v->shape[i] != dims[i])
        return AtcError{"E10001", "--input_shape for '" + name + "': dim " + std::to_string(i) + " is " +
                                      std::to_string(dims[i]) + " but the model fixes it to " +
                                      std::to_string(v->shape[i])};
      if (dims[i] < 0 && v->has_shape && i < v->dim_params.size()) params[i] = v->dim_params[i];
    }
    v->has_shape = true;
    v->shape = dims;
    v->dim_params = std::move(params);
  }
  return std::nullopt;
}

// The gear flag given, parsed and resolved against the graph's inputs.
std::optional<AtcError> ResolveGears(const AtcFlags& f, const Graph& g, const OrderedInputShapes& entries,
                                     GearSet* out) {
  GearMode mode = GearMode::kNone;
  std::string text;
  if (!f.dynamic_batch_size.empty()) mode = GearMode::kBatch, text = f.dynamic_batch_size;
  if (!f.dynamic_image_size.empty()) mode = GearMode::kImageSize, text = f.dynamic_image_size;
  if (!f.dynamic_dims.empty()) mode = GearMode::kDims, text = f.dynamic_dims;
  if (mode == GearMode::kNone) return std::nullopt;
  std::vector<std::vector<int64_t>> values;
  if (auto err = ParseGearList(GearModeName(mode), text, mode == GearMode::kBatch, &values)) return err;
  auto gears = MakeGears(g, mode, entries, values);
  if (!gears.ok()) return AtcError{"E10001", gears.status().message()};
  *out = std::move(gears).value();
  return std::nullopt;
}

std::string OutputPath(const std::string& output) {
  const std::string suffix = ".om";
  if (output.size() >= suffix.size() && output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0)
    return output;
  return output + suffix;
}

// --calibration_data="name:a.npy,b.npy;name2:c.npy" -> samples in graph-input order.
std::optional<AtcError> LoadCalibration(const std::string& text, const Graph& g, quant::CalibrationSet* out) {
  auto invalid = [&](const std::string& why) { return Invalid("calibration_data", text, why); };
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
  if (auto err = ParseCalibrationData(text, &entries)) return err;
  std::vector<std::vector<std::pair<std::vector<int64_t>, std::vector<float>>>> arrays(g.inputs.size());
  for (const auto& [name, files] : entries) {
    size_t idx = g.inputs.size();
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i]->name == name) idx = i;
    if (idx == g.inputs.size()) return invalid("'" + name + "' is not an input of the model");
    for (const std::string& path : files) {
      std::vector<int64_t> shape;
      std::vector<float> data;
      Status st = quant::ReadNpyFloat(path, &shape, &data);
      if (!st.ok()) return invalid(st.message());
      arrays[idx].emplace_back(std::move(shape), std::move(data));
    }
  }
  auto samples = quant::SplitSamples(g, arrays);
  if (!samples.ok()) return invalid(samples.status().message());
  *out = std::move(samples).value();
  return std::nullopt;
}

// Runs the compiled int8 model over the calibration samples and prints how far
// its outputs are from the float32 model's.
void ReportInt8Accuracy(const Executable& exe, const quant::CalibrationSet& samples,
                        const quant::Int8Report& report) {
  auto ctx = exe.NewContext();
  if (!ctx.ok() || report.reference_outputs.size() != samples.size()) return;
  ThreadPool pool(1);
  std::vector<std::vector<float>> outs(exe.num_outputs());
  std::vector<void*> ptrs;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (exe.output(i).dtype != DataType::kFloat32) return;
    outs[i].resize(static_cast<size_t>(exe.output(i).NumElements()));
    ptrs.push_back(outs[i].data());
  }
  std::vector<double> max_err(outs.size(), 0), lo(outs.size(), 1e300), hi(outs.size(), -1e300);
  std::vector<int64_t> agree(outs.size(), 0), rows(outs.size(), 0);
  for (size_t s = 0; s < samples.size(); ++s) {
    std::vector<const void*> ins;
    for (const auto& x : samples[s]) ins.push_back(x.data());
    if (!exe.Run(**ctx, ins, ptrs, pool).ok()) return;
    for (size_t o = 0; o < outs.size(); ++o) {
      const auto& ref = report.reference_outputs[s][o];
      if (ref.size() != outs[o].size()) return;
      for (size_t k = 0; k < ref.size(); ++k) {
        max_err[o] = std::max(max_err[o], static_cast<double>(std::fabs(ref[k] - outs[o][k])));
        lo[o] = std::min(lo[o], static_cast<double>(ref[k]));
        hi[o] = std::max(hi[o], static_cast<double>(ref[k]));
      }
      // Top-1 over the last dim (class scores) when there is more than one class.
      const Value& v = exe.output(o);
      const int64_t c = v.shape.empty() ? 1 : v.shape.back();
      if (c < 2) continue;
      for (size_t r = 0; r + static_cast<size_t>(c) <= ref.size(); r += static_cast<size_t>(c)) {
        auto a = std::max_element(ref.begin() + static_cast<long>(r), ref.begin() + static_cast<long>(r) + c);
        auto b = std::max_element(outs[o].begin() + static_cast<long>(r), outs[o].begin() + static_cast<long>(r) + c);
        agree[o] += (a - ref.begin()) == (b - outs[o].begin());
        ++rows[o];
      }
    }
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    char buf[256];
    const double range = hi[o] - lo[o];
    std::snprintf(buf, sizeof buf, "  output '%s': max abs error %.4g (%.2f%% of its float32 range %.4g)",
                  exe.output(o).name.c_str(), max_err[o], range > 0 ? 100.0 * max_err[o] / range : 0.0, range);
    std::printf("%s", buf);
    if (rows[o] > 0)
      std::printf(", top-1 agreement %lld/%lld", static_cast<long long>(agree[o]), static_cast<long long>(rows[o]));
    std::printf("\n");
  }
}

}  // namespace

// A dynamic model's kernels are made per input shape at run time, and without
// stored packings the first run at the first shape packs every weight (86 MB
// sentence encoder: 100-370 ms against 25 ms for a static .om). Packing a
// GEMM's constant operand does not depend on the dims that vary (batch,
// sequence, past length), so atc specialises the graph at a probe shape and
// stores what its kernels packed. A kernel whose packing does depend on the
// shape (a convolution whose algorithm follows the image size) finds the bytes'
// layout does not fit and repacks from the raw weights, which a dynamic .om
// keeps. Unknown dims take 1, else 32, else 224: the first that compiles.
// Returns the probe shapes, or nothing when no probe compiles or the shapes
// need the interpreter (data-dependent shapes); the model is then packed at
// run time, as before.
std::optional<ShapeSignature> ProbeDynamicShapes(ShapeSpecializer& spec, const Graph& g) {
  for (int64_t probe : {1, 32, 224}) {
    ShapeSignature shapes;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value* in = g.inputs[i];
      if (!in->has_shape) return std::nullopt;  // unknown rank: nothing to probe with
      std::vector<int64_t> dims = in->shape;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] >= 0) continue;
        const auto [lo, hi] = spec.DimRange(i, d);  // --input_shape ranges bound the probe
        dims[d] = std::max(lo, hi >= 0 ? std::min(probe, hi) : probe);
      }
      shapes.push_back(std::move(dims));
    }
    auto exe = spec.Get(shapes);
    if (exe.ok()) return *exe ? std::optional<ShapeSignature>(shapes) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<AtcError> RunCompile(const AtcFlags& f) {
  if (auto err = ValidateCompileFlags(f)) return err;

  OnnxParseOptions popts;
  OrderedInputShapes shape_entries;
  InputRanges ranges;
  if (!f.input_shape.empty() && !f.input_shape_range.empty())
    return AtcError{"E10001", "--input_shape and --input_shape_range cannot be used together (write lo~hi dims in "
                              "--input_shape)"};
  const std::string& shape_text = f.input_shape.empty() ? f.input_shape_range : f.input_shape;
  if (!shape_text.empty()) {
    if (auto err = ParseInputShapeOrdered(shape_text, &shape_entries, &ranges)) return err;
    for (const auto& [name, dims] : shape_entries)
      if (std::find(dims.begin(), dims.end(), -1) == dims.end()) popts.input_shapes[name] = dims;
  }
  if (!f.out_nodes.empty())
    if (auto err = ParseOutNodes(f.out_nodes, &popts.out_nodes)) return err;
  const std::string om_path = OutputPath(f.output);
  fs::path parent = fs::path(om_path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return Invalid("output", f.output, "directory '" + parent.string() + "' does not exist");

  Progress progress(f.log);
  // Custom operators: the packages ASCEND_CUSTOM_OPP_PATH names, as at run time.
  std::vector<std::string> warnings, packages;
  LoadCustomOpPackages(&warnings, &packages);
  for (const std::string& w : warnings) std::fprintf(stderr, "[WARNING] %s\n", w.c_str());
  for (const std::string& p : packages) progress.Info("custom operator package " + p);
  progress.Info("parsing " + f.model);
  // --framework=1 is a MindSpore MINDIR file, lowered onto the same IR.
  const bool mindspore = f.framework && *f.framework == 1;
  auto parse = [&]() { return mindspore ? ParseMindirFile(f.model, popts) : ParseOnnxFile(f.model, popts); };
  auto parsed = parse();
  if (!parsed.ok()) return ParseError(parsed.status());
  std::shared_ptr<Graph> graph(std::move(parsed).value());
  if (auto err = ApplyDynamicInputShapes(*graph, shape_entries)) return err;
  GearSet gears;
  if (auto err = ResolveGears(f, *graph, shape_entries, &gears)) return err;
  if (gears.mode != GearMode::kNone) StoreGears(*graph, gears);
  if (!ranges.empty()) {
    if (gears.mode != GearMode::kNone)
      return AtcError{"E10001", "shape ranges (lo~hi) and --dynamic_* gears cannot be used together"};
    std::string text;
    for (const auto& [name, dims] : ranges) {
      if (!text.empty()) text += ';';
      text += name + ":";
      for (size_t d = 0; d < dims.size(); ++d) {
        if (d) text += ',';
        text += dims[d].first < 0 ? std::string("-") : std::to_string(dims[d].first) + "~" + std::to_string(dims[d].second);
      }
    }
    graph->metadata[kInputShapeRangeKey] = text;
  }
  if (!f.insert_op_conf.empty()) {
    std::vector<AippConfig> aipp;
    if (auto err = ParseAippConfig(f.insert_op_conf, &aipp)) return err;
    if (auto err = InsertAipp(*graph, aipp)) return err;
  }
  if (!f.output_type.empty() || !f.input_fp16_nodes.empty())
    if (auto err = ApplyIoTypes(*graph, f.output_type, f.input_fp16_nodes)) return err;
  if (!f.input_format.empty()) graph->metadata["input_format"] = f.input_format;
  graph->metadata["precision_mode"] = f.precision_mode;
  progress.StageDone("parse model");
  progress.Info("parsed " + std::to_string(graph->nodes().size()) + " nodes, " +
                std::to_string(graph->inputs.size()) + " inputs, " + std::to_string(graph->outputs.size()) +
                " outputs");
  if (progress.debug()) std::printf("%s", graph->Dump().c_str());
  if (!f.input_format.empty() && f.input_format != "ND") {
    size_t want = f.input_format == "NCDHW" ? 5 : 4;
    for (const Value* in : graph->inputs)
      if (in->has_shape && in->shape.size() != want)
        progress.Warn("input '" + in->name + "' has rank " + std::to_string(in->shape.size()) +
                      ", not the rank " + std::to_string(want) + " --input_format=" + f.input_format + " implies");
  }

  FusionSwitch fusion_switch;
  if (!f.fusion_switch_file.empty()) {
    if (auto err = LoadFusionSwitch(f.fusion_switch_file, &fusion_switch)) return err;
  }

  // int8: the graph is calibrated and given QDQ form here; the pipeline then
  // runs in float32 mode and fuse-qdq makes the integer ops.
  const bool int8 = f.precision_mode == "int8";
  quant::CalibrationSet calibration;
  quant::Int8Report int8_report;
  if (int8) {
    if (auto err = LoadCalibration(f.calibration_data, *graph, &calibration)) return err;
    quant::Int8Options qopts;
    qopts.disabled_passes = fusion_switch.disabled;
    if (f.calibration_method == "percentile") qopts.method = quant::CalibrationMethod::kPercentile;
    auto fresh = [&]() -> Expected<std::unique_ptr<Graph>> {
      auto g = parse();
      if (!g.ok()) return g.status();
      if (auto err = ApplyDynamicInputShapes(**g, shape_entries)) return InvalidArgument(err->message);
      return std::move(g).value();
    };
    Status qst = quant::QuantizeInt8(*graph, fresh, calibration, qopts, &int8_report);
    if (!qst.ok()) return AtcError{"E12003", "int8 calibration failed: " + qst.message()};
    progress.StageDone("int8 calibration");
  }

  CompileOptions copts;
  copts.precision_mode = int8 ? "force_fp32" : f.precision_mode;
  copts.disabled_passes = fusion_switch.disabled;
  // Unknown dims are kept (and specialised per shape at run time); a model
  // that is static after --input_shape compiles exactly as before.
  copts.allow_dynamic = true;
  if (progress.info()) copts.log = [&progress](const std::string& line) { progress.Info(line); };
  Status st = RunPipeline(*graph, copts);
  if (!st.ok()) return AtcError{"E12001", "graph compilation failed: " + st.message()};
  progress.StageDone("optimize graph");
  if (progress.debug()) std::printf("%s", graph->Dump().c_str());

  // Creating every kernel proves that the compiled graph will load, and gives
  // the kernels' prepacked weights for the .om. A dynamic graph gets its
  // kernels per shape at run time; its gears (if any) are specialised here to
  // prove each of them compiles.
  std::vector<std::vector<uint8_t>> prepacked;
  std::vector<std::vector<int>> prepacked_inputs;
  const bool dynamic = IsDynamicGraph(*graph);
  std::string probe_shapes;  // dynamic: the shapes the stored packings were made at
  int dynamic_packed_nodes = 0, dynamic_unstored_nodes = 0;
  bool interpreted = false;  // static shapes, but ops only the interpreter runs
  auto exe = dynamic ? Expected<std::shared_ptr<Executable>>(nullptr) : Executable::Create(graph);
  if (!dynamic) {
    // Optionals or sequences inside a model with tensor inputs and outputs:
    // the run time runs it node by node (runtime/shape_specializer.h).
    interpreted = !exe.ok() && exe.status().code() == StatusCode::kNotSupported && NeedsInterpreter(*graph);
    if (!exe.ok() && !interpreted) return AtcError{"E12002", "kernel creation failed: " + exe.status().message()};
    if (interpreted) progress.Info("runs node by node: " + exe.status().message());
  }
  if (interpreted) {
    // No kernels, so no packed weights to store.
  } else if (!dynamic) {
    prepacked = (*exe)->ExportPrepacked();
    prepacked_inputs = (*exe)->PrepackedInputs();
    if (int8) {
      int qlinear = 0;
      for (const auto& n : graph->nodes()) qlinear += n->op_type == "QLinearConv" || n->op_type == "QLinearMatMul";
      std::printf("Precision: int8: %d of %d Conv/MatMul/Gemm nodes quantized (%d QLinearConv/QLinearMatMul "
                  "after fusion), %d activations calibrated (%s) on %d samples; the rest in float32\n",
                  int8_report.quantized_ops, int8_report.quantized_ops + int8_report.skipped_ops, qlinear,
                  int8_report.quantized_tensors, f.calibration_method.c_str(), int8_report.samples);
      std::printf("Accuracy (int8 vs float32 on the calibration samples):\n");
      ReportInt8Accuracy(**exe, calibration, int8_report);
    }
  } else {
    ShapeSpecializer spec(graph, {}, 1);
    for (size_t k = 0; k < gears.shapes.size(); ++k) {
      auto exe = spec.Get(gears.shapes[k]);
      if (!exe.ok())
        return AtcError{"E12002", "gear " + std::to_string(k) + " of --" + GearModeName(gears.mode) +
                                      " does not compile: " + exe.status().message()};
    }
    // Static inputs but unknown dims inside (data-dependent ops): a shape error
    // that dynamic mode let through is found now, not at the first run.
    bool static_inputs = true;
    ShapeSignature shapes;
    for (const Value* in : graph->inputs) {
      static_inputs &= in->IsStatic();
      shapes.push_back(in->shape);
    }
    if (gears.mode == GearMode::kNone && static_inputs) {
      auto exe = spec.Get(shapes);
      if (!exe.ok()) return AtcError{"E12001", "graph compilation failed: " + exe.status().message()};
    }
    if (gears.mode == GearMode::kNone && !static_inputs) {
      if (auto probe = ProbeDynamicShapes(spec, *graph)) probe_shapes = SignatureString(*graph, *probe);
    }
    // What the specialisations above packed, stored by node for the run time.
    // Nodes made only by specialising (a fusion that needed static shapes) are
    // not in this graph: they pack at run time. Raw weights stay in the file
    // (prepacked_inputs stays empty): other shapes may need to repack them.
    const auto packs = spec.PackedByName();
    prepacked.assign(graph->nodes().size(), {});
    for (size_t i = 0; i < graph->nodes().size(); ++i) {
      auto it = packs.find(graph->nodes()[i]->name);
      if (it == packs.end()) continue;
      prepacked[i].assign(it->second.begin(), it->second.end());
      ++dynamic_packed_nodes;
    }
    dynamic_unstored_nodes = static_cast<int>(packs.size()) - dynamic_packed_nodes;
  }
  progress.StageDone("build kernels");

  OmWriteOptions wopts;
  wopts.target = HostTarget();
  wopts.producer_version = OPENCANN_VERSION;
  wopts.source_framework = mindspore ? "mindspore" : "onnx";
  // Weights that prepacked bytes hold exactly are stored only there, unless
  // OPENCANN_OM_RAW_WEIGHTS=1 asks for a file that builds before that read.
  const char* raw_env = std::getenv("OPENCANN_OM_RAW_WEIGHTS");
  if (!(raw_env && std::string(raw_env) == "1")) wopts.prepacked_inputs = prepacked_inputs;
  st = WriteOmFile(om_path, *graph, prepacked, wopts);
  if (!st.ok()) return AtcError{"E13001", "cannot write '" + om_path + "': " + st.message()};
  progress.StageDone("write om");

  int64_t weights = 0, packed = 0;
  for (const auto& v : graph->values())
    if (v->constant) weights += static_cast<int64_t>(v->constant->size());
  for (const auto& p : prepacked) packed += static_cast<int64_t>(p.size());
  std::printf("Model: %zu nodes, %zu inputs, %zu outputs, target %s\n", graph->nodes().size(),
              graph->inputs.size(), graph->outputs.size(), wopts.target.c_str());
  int64_t packed_only = 0;
  const std::vector<int32_t> plan = PlanPackedOnlyWeights(*graph, prepacked, wopts);
  for (const auto& v : graph->values())
    if (v->constant && plan[v->id] >= 0) packed_only += static_cast<int64_t>(v->constant->size());
  std::printf("Weights: %s, prepacked: %s, weights stored only prepacked: %s\n", FormatBytes(weights).c_str(),
              FormatBytes(packed).c_str(), FormatBytes(packed_only).c_str());
  if (int8) {
    // Reported with the accuracy figures above.
  } else if (gemm::IsBf16PrecisionMode(copts.precision_mode)) {
    int bf16_nodes = 0;
    for (const auto& n : graph->nodes()) bf16_nodes += gemm::NodeWantsBf16(*n);
    const gemm::Bf16Ukernel* uk = gemm::DefaultBf16Ukernel();
    std::printf("Precision: %s: %d Conv/MatMul/Gemm nodes in bfloat16 with float32 accumulation (%s), the rest "
                "in float32\n",
                copts.precision_mode.c_str(), bf16_nodes,
                uk ? uk->name : "this CPU lacks AMX-BF16 and AVX512_BF16: float32 kernels here");
  } else {
    std::printf("Precision: %s: float32\n", copts.precision_mode.c_str());
  }
  if (!f.fusion_switch_file.empty()) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("none") : s;
    };
    std::printf("Fusion switch: passes off: %s\n", join(fusion_switch.disabled).c_str());
    if (!fusion_switch.ignored.empty())
      std::printf("[WARNING] ATC: --fusion_switch_file names no pass of this compiler, ignored: %s\n",
                  join(fusion_switch.ignored).c_str());
  }
  if (dynamic) {
    std::string io;
    for (const Value* in : graph->inputs) io += (io.empty() ? "" : ", ") + in->name + in->ShapeString();
    std::printf("Dynamic shapes: inputs %s; memory is planned per input shape at run time\n", io.c_str());
    if (gears.mode != GearMode::kNone)
      std::printf("Gears (--%s): %zu\n", GearModeName(gears.mode), gears.values.size());
    std::string at = gears.mode != GearMode::kNone ? std::string("the gears")
                     : !probe_shapes.empty()      ? "probe shapes " + probe_shapes
                                                  : std::string("the input shapes");
    const std::string unstored =
        dynamic_unstored_nodes
            ? ", as do " + std::to_string(dynamic_unstored_nodes) + " nodes made only when specialising"
            : std::string();
    if (dynamic_packed_nodes + dynamic_unstored_nodes == 0)
      std::printf("Prepacked weights: none stored (no shape to pack at compiles statically); kernels pack them "
                  "at the first run of each shape\n");
    else
      std::printf("Prepacked weights: %d nodes, packed at %s; a kernel whose packing depends on the shape "
                  "repacks at run time%s\n",
                  dynamic_packed_nodes, at.c_str(), unstored.c_str());
  } else if (interpreted) {
    std::printf("Runs node by node (ops without a compiled kernel: optionals or sequences inside the model)\n");
  } else {
    std::printf("Activation arena: %s with reuse, %s without\n", FormatBytes(graph->arena_size).c_str(),
                FormatBytes(graph->arena_size_no_reuse).c_str());
  }
  std::printf("Output: %s\n", om_path.c_str());
  return std::nullopt;
}

std::optional<AtcError> RunOmToJson(const AtcFlags& f) {
  if (f.om.empty()) return AtcError{"E10003", "parameter [--om] is required in --mode=1"};
  if (f.json.empty()) return AtcError{"E10003", "parameter [--json] is required in --mode=1"};
  auto model = LoadOmFile(f.om);
  if (!model.ok()) return AtcError{"E13002", "cannot load '" + f.om + "': " + model.status().message()};
  std::string json = OmToJson(*model);
  std::ofstream out(f.json, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  if (!out) return AtcError{"E13003", "cannot write JSON file '" + f.json + "'"};
  return std::nullopt;
}

std::optional<AtcError> RunOmSummary(const AtcFlags& f) {
  if (f.om.empty()) return AtcError{"E10003", "parameter [--om] is required in --mode=6"};
  auto model = LoadOmFile(f.om);
  if (!model.ok()) return AtcError{"E13002", "cannot load '" + f.om + "': " + model.status().message()};
  std::string summary = OmSummary(*model);
  std::fwrite(summary.data(), 1, summary.size(), stdout);
  if (!summary.empty() && summary.back() != '\n') std::printf("\n");
  return std::nullopt;
}

}  // namespace oc::atc
