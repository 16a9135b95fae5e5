// In-process runner for the ONNX node conformance suite (driven by
// run_conformance.py). It does what `atc` + `msame` do, without two process
// spawns per case: parse -> RunPipeline -> kernels -> .om bytes -> verifying .om
// load -> Executable from the loaded model -> run each test_data_set, and
// writes the outputs as TensorProto files for the Python side to compare.
//
//   oc_conformance_driver --list-ops          registry: "domain<TAB>op<TAB>min<TAB>max" lines
//   oc_conformance_driver OUT_DIR             reads case folders from stdin, one a line
//
// For each case one line "@@RESULT {json}" goes to stdout (anything else a
// kernel might print is ignored by the reader). A crash or hang is seen by the
// parent, which restarts the driver.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "executor/executable.h"
#include "graph/graph.h"
#include "om/om_file.h"
#include "onnx.pb.h"
#include "ops/op_registry.h"
#include "parser/onnx/onnx_parser.h"
#include "parser/onnx/onnx_tensor.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

namespace fs = std::filesystem;

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// Where a case stopped: the stage names are what the Python side classifies.
struct Failure {
  std::string stage;  // parse, compile, kernel, om, load, input, run, output
  Status status;
};

Expected<onnx::TensorProto> ReadTensorFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '", path.string(), "'");
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&in)) return InvalidFile("'", path.string(), "' is not a TensorProto");
  return t;
}

std::vector<fs::path> DataSets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(case_dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<fs::path> Numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int j = 0;; ++j) {
    fs::path p = dir / (prefix + std::to_string(j) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

std::string DimsString(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);
  }
  return s + "]";
}

// Shapes for the inputs the model leaves dynamic, taken from the first data
// set (what `atc --input_shape` would be given).
Expected<std::map<std::string, std::vector<int64_t>>> InputShapesFor(const Graph& g, const fs::path& data_set) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::vector<fs::path> files = Numbered(data_set, "input_");
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* in = g.inputs[i];
    if (in->IsStatic()) continue;
    const fs::path* file = nullptr;
    std::optional<onnx::TensorProto> t;
    for (const auto& f : files) {
      OC_ASSIGN_OR_RETURN(onnx::TensorProto tp, ReadTensorFile(f));
      if (tp.name() == in->name) { t = std::move(tp); file = &f; break; }
    }
    if (!file && i < files.size()) {
      OC_ASSIGN_OR_RETURN(onnx::TensorProto tp, ReadTensorFile(files[i]));
      t = std::move(tp);
    }
    if (!t) return InvalidArgument("no data for dynamic input '", in->name, "'");
    shapes[in->name] = std::vector<int64_t>(t->dims().begin(), t->dims().end());
  }
  return shapes;
}

// Static shapes are decided at compile time, so an input that sets a shape
// (Reshape's shape, Tile's repeats, Resize's sizes, Range's bounds, ...) has to
// be a constant, as it is in an exported model. The node tests feed such values
// as graph inputs; on a compile that fails for that reason the case is retried
// with those inputs (rank <= 1, read at input slot >= 1, or by Range /
// ConstantOfShape) turned into initializers holding the test data. Returns the
// model bytes and the frozen input names (empty when nothing qualifies).
// With `all_small_ints`, every integer input of rank <= 1 is frozen as well
// (a size fed through Cast into Range, as the window functions' bodies do).
Expected<std::pair<std::string, std::vector<std::string>>> FreezeShapeInputs(const fs::path& model_path,
                                                                            const fs::path& data_set,
                                                                            bool all_small_ints) {
  onnx::ModelProto model;
  {
    std::ifstream in(model_path, std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) return InvalidFile("cannot read '", model_path.string(), "'");
  }
  onnx::GraphProto* g = model.mutable_graph();
  std::map<std::string, onnx::TensorProto> data;
  for (const auto& f : Numbered(data_set, "input_")) {
    OC_ASSIGN_OR_RETURN(onnx::TensorProto t, ReadTensorFile(f));
    data[t.name()] = std::move(t);
  }
  std::set<std::string> wanted;
  for (const auto& n : g->node())
    for (int k = 0; k < n.input_size(); ++k)
      if (k >= 1 || n.op_type() == "Range" || n.op_type() == "ConstantOfShape") wanted.insert(n.input(k));
  std::vector<std::string> frozen;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& vi : g->input()) {
    auto it = data.find(vi.name());
    const bool small = it != data.end() && it->second.dims_size() <= 1;
    const int32_t t = small ? it->second.data_type() : 0;
    const bool is_int = t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32;
    if (small && (wanted.count(vi.name()) || (all_small_ints && is_int))) {
      *g->add_initializer() = it->second;
      frozen.push_back(vi.name());
    } else {
      *kept.Add() = vi;
    }
  }
  g->mutable_input()->Swap(&kept);
  std::string bytes;
  if (!frozen.empty() && !model.SerializeToString(&bytes)) return Internal("cannot serialise the frozen model");
  return std::make_pair(std::move(bytes), std::move(frozen));
}

bool NeedsConstantShapes(const Status& st) {
  const std::string& m = st.message();
  return m.find("dynamic shapes are not supported") != std::string::npos ||
         m.find("must be constant") != std::string::npos ||
         m.find("unknown rank") != std::string::npos;
}

Status WriteOutput(const fs::path& path, const Value& v, const void* data) {
  onnx::TensorProto t;
  t.set_name(v.name);
  t.set_data_type(static_cast<int32_t>(v.dtype));
  for (int64_t d : v.shape) t.add_dims(d);
  t.set_raw_data(data, static_cast<size_t>(v.ByteSize()));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !t.SerializeToOstream(&out)) return IoError("cannot write '", path.string(), "'");
  return Status::Ok();
}

// Parses (with --input_shape from the data where the model leaves dims open)
// and runs the pass pipeline. `model_bytes` replaces the file when not empty.
std::optional<Failure> Compile(const fs::path& model, const std::string& model_bytes,
                               const std::vector<fs::path>& sets, std::shared_ptr<Graph>* out) {
  auto parse = [&](const OnnxParseOptions& opts) {
    if (model_bytes.empty()) return ParseOnnxFile(model.string(), opts);
    return ParseOnnxBytes(model_bytes.data(), model_bytes.size(), model.parent_path().string(), opts);
  };
  auto parsed = parse({});
  if (!parsed.ok()) return Failure{"parse", parsed.status()};
  bool dynamic = false;
  for (const Value* in : (*parsed)->inputs) dynamic = dynamic || !in->IsStatic();
  if (dynamic && !sets.empty()) {
    OnnxParseOptions opts;
    auto shapes = InputShapesFor(**parsed, sets[0]);
    if (!shapes.ok()) return Failure{"input", shapes.status()};
    opts.input_shapes = std::move(*shapes);
    parsed = parse(opts);
    if (!parsed.ok()) return Failure{"parse", parsed.status()};
  }
  std::shared_ptr<Graph> graph(std::move(parsed).value());
  CompileOptions copts;
  if (Status st = RunPipeline(*graph, copts); !st.ok()) return Failure{"compile", st};
  *out = std::move(graph);
  return std::nullopt;
}

std::optional<Failure> RunCase(const fs::path& case_dir, const fs::path& out_root, ThreadPool& pool,
                               std::vector<std::string>* frozen) {
  const fs::path model = case_dir / "model.onnx";
  std::vector<fs::path> sets = DataSets(case_dir);

  std::shared_ptr<Graph> graph;
  std::optional<Failure> failed = Compile(model, "", sets, &graph);
  for (bool all_small_ints : {false, true}) {
    if (!failed || failed->stage != "compile" || !NeedsConstantShapes(failed->status) || sets.size() != 1) break;
    auto frozen_model = FreezeShapeInputs(model, sets[0], all_small_ints);
    if (!frozen_model.ok() || frozen_model->second.size() <= frozen->size()) continue;
    std::optional<Failure> retry = Compile(model, frozen_model->first, sets, &graph);
    if (!retry || retry->stage != "parse") {
      failed = std::move(retry);
      *frozen = std::move(frozen_model->second);
    }
  }
  if (failed) return failed;

  std::vector<std::vector<uint8_t>> prepacked;
  {
    auto compiled = Executable::Create(graph);
    if (!compiled.ok()) return Failure{"kernel", compiled.status()};
    prepacked = (*compiled)->ExportPrepacked();
  }

  // The .om round trip, as atc writes it and aclmdlLoadFromFile reads it.
  OmWriteOptions wopts;
  wopts.target = HostTarget();
  wopts.producer_version = OPENCANN_VERSION;
  auto bytes = SerializeOm(*graph, prepacked, wopts);
  if (!bytes.ok()) return Failure{"om", bytes.status()};
  auto om = LoadOmMemory(bytes->data(), bytes->size(), true);
  if (!om.ok()) return Failure{"om", om.status()};
  auto exe = Executable::Create(om->graph, om->prepacked);
  if (!exe.ok()) return Failure{"load", exe.status()};
  auto ctx = (*exe)->NewContext();
  if (!ctx.ok()) return Failure{"load", ctx.status()};

  for (const fs::path& ds : sets) {
    std::vector<fs::path> files = Numbered(ds, "input_");
    std::vector<onnx_parser::DecodedTensor> decoded;
    std::vector<std::string> names;
    for (const auto& f : files) {
      auto t = ReadTensorFile(f);
      if (!t.ok()) return Failure{"input", t.status()};
      auto d = onnx_parser::DecodeTensor(*t, ds.string(), "test input '" + f.filename().string() + "'");
      if (!d.ok()) return Failure{"input", d.status()};
      names.push_back(t->name());
      decoded.push_back(std::move(*d));
    }
    const Executable& e = **exe;
    std::vector<const void*> in_ptrs(e.num_inputs(), nullptr);
    for (size_t i = 0; i < e.num_inputs(); ++i) {
      const Value& want = e.input(i);
      size_t k = std::find(names.begin(), names.end(), want.name) - names.begin();
      if (k == names.size()) k = i;
      if (k >= decoded.size())
        return Failure{"input", InvalidArgument("no data for input '", want.name, "'")};
      const auto& d = decoded[k];
      // Checked as msame checks a .npy: same dtype, same shape.
      if (d.dtype != want.dtype)
        return Failure{"input", InvalidArgument("input '", want.name, "': model expects ", DataTypeName(want.dtype),
                                                ", data is ", DataTypeName(d.dtype))};
      if (d.shape != want.shape)
        return Failure{"input", InvalidArgument("input '", want.name, "': model expects ", want.ShapeString(),
                                                ", data is ", DimsString(d.shape))};
      in_ptrs[i] = d.data.data();
    }
    std::vector<TensorData> outs;
    std::vector<void*> out_ptrs;
    for (size_t i = 0; i < e.num_outputs(); ++i) {
      outs.push_back(TensorData::Allocate(static_cast<size_t>(std::max<int64_t>(e.output(i).ByteSize(), 1))));
      out_ptrs.push_back(outs.back().mutable_data());
    }
    if (Status st = e.Run(**ctx, in_ptrs, out_ptrs, pool); !st.ok()) return Failure{"run", st};

    fs::path out_dir = out_root / case_dir.filename() / ds.filename();
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    for (size_t i = 0; i < e.num_outputs(); ++i) {
      Status st = WriteOutput(out_dir / ("output_" + std::to_string(i) + ".pb"), e.output(i), outs[i].data());
      if (!st.ok()) return Failure{"output", st};
    }
  }
  return std::nullopt;
}

int ListOps() {
  std::vector<const OpDef*> defs = OpRegistry::Global().All();
  for (const OpDef* d : defs)
    std::printf("%s\t%s\t%d\t%d\n", d->domain.c_str(), d->op_type.c_str(), d->min_opset,
                d->max_opset == INT_MAX ? -1 : d->max_opset);
  return 0;
}

int Serve(const fs::path& out_root) {
  ThreadPool& pool = ThreadPool::Global();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    fs::path case_dir(line);
    auto start = std::chrono::steady_clock::now();
    std::optional<Failure> f;
    std::vector<std::string> frozen;
    try {
      f = RunCase(case_dir, out_root, pool, &frozen);
    } catch (const std::exception& ex) {
      f = Failure{"exception", Internal("C++ exception: ", ex.what())};
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string json = "{\"case\":\"" + JsonEscape(case_dir.filename().string()) + "\",\"ms\":" +
                       std::to_string(ms);
    if (!frozen.empty()) {
      json += ",\"frozen\":[";
      for (size_t i = 0; i < frozen.size(); ++i) json += (i ? ",\"" : "\"") + JsonEscape(frozen[i]) + "\"";
      json += "]";
    }
    if (f) {
      json += ",\"stage\":\"" + f->stage + "\",\"code\":\"" + StatusCodeName(f->status.code()) +
              "\",\"message\":\"" + JsonEscape(f->status.message()) + "\"";
    }
    json += "}";
    std::fflush(stdout);
    std::cout << "@@RESULT " << json << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace oc

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(true);
  if (argc == 2 && std::string(argv[1]) == "--list-ops") return oc::ListOps();
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: oc_conformance_driver OUT_DIR < case-folders | --list-ops\n");
    return 2;
  }
  return oc::Serve(argv[1]);
}
