// In-process runner for the ONNX node conformance suite (driven by
// run_conformance.py). It does what `atc` + `msame` do, without two process
// spawns per case: parse -> RunPipeline -> kernels -> .om bytes -> verifying .om
// load -> Executable from the loaded model -> run each test_data_set, and
// writes the outputs as TensorProto files for the Python side to compare.
//
//   oc_conformance_driver --list-ops          registry: "domain<TAB>op<TAB>min<TAB>max" lines
//   oc_conformance_driver OUT_DIR             reads case folders from stdin, one a line
//
// With OC_CONFORMANCE_ALL_DYNAMIC=1 every model is compiled as if all its input
// dims were unknown (CompileOptions::allow_dynamic, .om format version 2) and
// specialised at each data set's shapes (runtime/shape_specializer.h), or run
// by the interpreter where the shapes depend on data: a check of the dynamic-
// shape path on every node test (ctest onnx_node_conformance_dynamic).
//
// For each case one line "@@RESULT {json}" goes to stdout (anything else a
// kernel might print is ignored by the reader). A crash or hang is seen by the
// parent, which restarts the driver.
#include <algorithm>
#include <chrono>
#include <cstdlib>
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
#include "executor/interpreter.h"
#include "executor/interpreter_ops.h"
#include "graph/graph.h"
#include "om/om_file.h"
#include "onnx.pb.h"
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include "ops/op_registry.h"
#include "parser/onnx/onnx_parser.h"
#include "parser/onnx/onnx_tensor.h"
#include "passes/pipeline.h"
#include "runtime/shape_specializer.h"

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
  std::vector<std::vector<int>> prepacked_inputs;
  {
    auto compiled = Executable::Create(graph);
    if (!compiled.ok()) return Failure{"kernel", compiled.status()};
    prepacked = (*compiled)->ExportPrepacked();
    prepacked_inputs = (*compiled)->PrepackedInputs();
  }

  // The .om round trip, as atc writes it and aclmdlLoadFromFile reads it.
  OmWriteOptions wopts;
  wopts.target = HostTarget();
  wopts.prepacked_inputs = prepacked_inputs;
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

// --- Interpreter path: models with control flow, sequences or optionals that
// the static pipeline cannot compile. Test data for sequence / optional values
// are onnx-data.proto's SequenceProto / OptionalProto, which this build's
// onnx.proto lacks, so their few fields are read and written by hand:
// SequenceProto {1 name, 2 elem_type, 3 repeated tensor_values},
// OptionalProto {1 name, 2 elem_type, 3 tensor_value, 5 sequence_value};
// elem_type 1 = tensor, 3 = sequence.

using google::protobuf::io::CodedInputStream;

struct WireValue {
  std::string name;
  int elem_type = 0;
  std::vector<std::string> tensors;  // serialized TensorProtos (field 3)
  std::string sequence;              // serialized SequenceProto (OptionalProto field 5)
  bool has_tensor = false, has_sequence = false;
};

Expected<WireValue> ParseWire(const std::string& bytes, const std::string& what) {
  WireValue w;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  for (;;) {
    uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const uint32_t field = tag >> 3, wire = tag & 7;
    if (wire == 2) {
      uint32_t len = 0;
      std::string payload;
      if (!in.ReadVarint32(&len) || !in.ReadString(&payload, static_cast<int>(len)))
        return InvalidFile(what, ": truncated field ", field);
      if (field == 1) w.name = payload;
      else if (field == 3) { w.tensors.push_back(std::move(payload)); w.has_tensor = true; }
      else if (field == 5) { w.sequence = std::move(payload); w.has_sequence = true; }
    } else if (wire == 0) {
      uint64_t v = 0;
      if (!in.ReadVarint64(&v)) return InvalidFile(what, ": truncated varint");
      if (field == 2) w.elem_type = static_cast<int>(v);
    } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
      return InvalidFile(what, ": unreadable field ", field);
    }
  }
  return w;
}

Expected<HostTensor> DecodeHost(const std::string& bytes, const std::string& what) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) return InvalidFile(what, " is not a TensorProto");
  OC_ASSIGN_OR_RETURN(auto d, onnx_parser::DecodeTensor(t, "", what));
  HostTensor h;
  h.dtype = d.dtype;
  h.shape = std::move(d.shape);
  h.data = std::move(d.data);
  return h;
}

Expected<RtValue> DecodeSequence(const std::string& bytes, const Value& want, const std::string& what) {
  OC_ASSIGN_OR_RETURN(WireValue w, ParseWire(bytes, what));
  std::vector<HostTensor> items;
  for (const auto& t : w.tensors) {
    OC_ASSIGN_OR_RETURN(HostTensor h, DecodeHost(t, what));
    items.push_back(std::move(h));
  }
  return RtValue::FromSequence(want.dtype, std::move(items));
}

// Reads input file `bytes` as the kind `want` expects; sets *name.
Expected<RtValue> DecodeInput(const std::string& bytes, const Value& want, const std::string& what,
                              std::string* name) {
  switch (want.kind) {
    case ValueKind::kTensor: {
      onnx::TensorProto t;
      if (!t.ParseFromString(bytes)) return InvalidFile(what, " is not a TensorProto");
      *name = t.name();
      OC_ASSIGN_OR_RETURN(HostTensor h, DecodeHost(bytes, what));
      return RtValue::FromTensor(std::move(h));
    }
    case ValueKind::kSequence: {
      OC_ASSIGN_OR_RETURN(WireValue w, ParseWire(bytes, what));
      *name = w.name;
      return DecodeSequence(bytes, want, what);
    }
    default: {
      OC_ASSIGN_OR_RETURN(WireValue w, ParseWire(bytes, what));
      *name = w.name;
      if (want.kind == ValueKind::kOptionalTensor && w.has_tensor) {
        OC_ASSIGN_OR_RETURN(HostTensor h, DecodeHost(w.tensors[0], what));
        RtValue v = RtValue::FromTensor(std::move(h));
        v.kind = ValueKind::kOptionalTensor;
        return v;
      }
      if (want.kind == ValueKind::kOptionalSequence && w.has_sequence) {
        OC_ASSIGN_OR_RETURN(RtValue v, DecodeSequence(w.sequence, want, what));
        v.kind = ValueKind::kOptionalSequence;
        return v;
      }
      return RtValue::EmptyOptional(want.kind, want.dtype);
    }
  }
}

void PutTag(std::string& out, uint32_t field, uint32_t wire) {
  uint64_t v = (field << 3) | wire;
  while (v >= 0x80) { out += static_cast<char>(v | 0x80); v >>= 7; }
  out += static_cast<char>(v);
}
void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) { out += static_cast<char>(v | 0x80); v >>= 7; }
  out += static_cast<char>(v);
}
void PutBytes(std::string& out, uint32_t field, const std::string& bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out += bytes;
}

std::string EncodeTensor(const std::string& name, const HostTensor& h) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(h.dtype));
  for (int64_t d : h.shape) t.add_dims(d);
  t.set_raw_data(h.data.data(), h.ByteSize());
  return t.SerializeAsString();
}

std::string EncodeSequence(const std::string& name, const RtValue& v) {
  std::string out;
  PutBytes(out, 1, name);
  PutTag(out, 2, 0);
  PutVarint(out, 1);
  for (const HostTensor& h : v.sequence) PutBytes(out, 3, EncodeTensor("", h));
  return out;
}

std::string EncodeValue(const std::string& name, const RtValue& v) {
  switch (v.kind) {
    case ValueKind::kTensor: return EncodeTensor(name, v.tensor);
    case ValueKind::kSequence: return EncodeSequence(name, v);
    default: {
      std::string out;
      PutBytes(out, 1, name);
      PutTag(out, 2, 0);
      PutVarint(out, v.kind == ValueKind::kOptionalTensor ? 1 : 3);
      if (v.present) {
        if (v.kind == ValueKind::kOptionalTensor) PutBytes(out, 3, EncodeTensor("", v.tensor));
        else PutBytes(out, 5, EncodeSequence("", v));
      }
      return out;
    }
  }
}

Expected<std::string> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '", path.string(), "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::optional<Failure> RunInterpreted(const fs::path& case_dir, const fs::path& out_root, ThreadPool& pool) {
  auto parsed = ParseOnnxFile((case_dir / "model.onnx").string(), {});
  if (!parsed.ok()) return Failure{"parse", parsed.status()};
  std::shared_ptr<const Graph> graph(std::move(parsed).value());
  auto interp = Interpreter::Create(graph);
  if (!interp.ok()) return Failure{"kernel", interp.status()};
  for (const fs::path& ds : DataSets(case_dir)) {
    std::vector<fs::path> files = Numbered(ds, "input_");
    std::vector<RtValue> inputs(graph->inputs.size());
    std::vector<bool> bound(graph->inputs.size(), false);
    for (size_t j = 0; j < files.size(); ++j) {
      auto bytes = ReadBytes(files[j]);
      if (!bytes.ok()) return Failure{"input", bytes.status()};
      // Bound by name where the file names its value, else by position.
      std::string name;
      size_t slot = j;
      for (int pass = 0; pass < 2; ++pass) {
        const Value& want = *graph->inputs[std::min(slot, graph->inputs.size() - 1)];
        auto v = DecodeInput(*bytes, want, files[j].filename().string(), &name);
        if (!v.ok()) return Failure{"input", v.status()};
        auto it = std::find_if(graph->inputs.begin(), graph->inputs.end(),
                               [&](const Value* in) { return in->name == name; });
        size_t by_name = it == graph->inputs.end() ? slot : static_cast<size_t>(it - graph->inputs.begin());
        if (by_name == slot || pass == 1) {
          if (slot >= inputs.size()) return Failure{"input", InvalidArgument("more input files than inputs")};
          inputs[slot] = std::move(*v);
          bound[slot] = true;
          break;
        }
        slot = by_name;
      }
    }
    for (size_t i = 0; i < bound.size(); ++i)
      if (!bound[i]) return Failure{"input", InvalidArgument("no data for input '", graph->inputs[i]->name, "'")};
    auto outs = (*interp)->Run(inputs, pool);
    if (!outs.ok()) return Failure{"run", outs.status()};
    fs::path out_dir = out_root / case_dir.filename() / ds.filename();
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    for (size_t i = 0; i < outs->size(); ++i) {
      std::ofstream out(out_dir / ("output_" + std::to_string(i) + ".pb"), std::ios::binary | std::ios::trunc);
      out << EncodeValue(graph->outputs[i]->name, (*outs)[i]);
      if (!out) return Failure{"output", IoError("cannot write output ", i)};
    }
  }
  return std::nullopt;
}


// OC_CONFORMANCE_ALL_DYNAMIC: the case with every input dim unknown at compile
// time, then specialised (or interpreted) at the data's shapes.
std::optional<Failure> RunCaseAsDynamic(const fs::path& case_dir, const fs::path& out_root, ThreadPool& pool) {
  auto parsed = ParseOnnxFile((case_dir / "model.onnx").string(), {});
  if (!parsed.ok()) return Failure{"parse", parsed.status()};
  std::shared_ptr<Graph> graph(std::move(parsed).value());
  for (Value* in : graph->inputs) {
    if (!in->has_shape)
      return Failure{"input", NotSupported("input '", in->name, "' has no rank: a dynamic model needs one")};
    for (int64_t& d : in->shape) d = -1;
  }
  CompileOptions copts;
  copts.allow_dynamic = true;
  if (Status st = RunPipeline(*graph, copts); !st.ok()) return Failure{"compile", st};
  std::vector<std::vector<uint8_t>> prepacked;
  OmWriteOptions wopts;
  if (!IsDynamicGraph(*graph)) {  // no inputs, or none with dims
    auto compiled = Executable::Create(graph);
    if (!compiled.ok()) return Failure{"kernel", compiled.status()};
    prepacked = (*compiled)->ExportPrepacked();
    wopts.prepacked_inputs = (*compiled)->PrepackedInputs();
  }
  wopts.target = HostTarget();
  wopts.producer_version = OPENCANN_VERSION;
  auto bytes = SerializeOm(*graph, prepacked, wopts);
  if (!bytes.ok()) return Failure{"om", bytes.status()};
  auto om = LoadOmMemory(bytes->data(), bytes->size(), true);
  if (!om.ok()) return Failure{"om", om.status()};
  const Graph& g = *om->graph;
  ShapeSpecializer spec(om->graph, om->prepacked);
  for (const fs::path& ds : DataSets(case_dir)) {
    std::vector<onnx_parser::DecodedTensor> decoded;
    std::vector<std::string> names;
    for (const fs::path& f : Numbered(ds, "input_")) {
      auto t = ReadTensorFile(f);
      if (!t.ok()) return Failure{"input", t.status()};
      auto d = onnx_parser::DecodeTensor(*t, ds.string(), "test input '" + f.filename().string() + "'");
      if (!d.ok()) return Failure{"input", d.status()};
      names.push_back(t->name());
      decoded.push_back(std::move(*d));
    }
    ShapeSignature shapes;
    std::vector<const void*> in_ptrs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      size_t k = std::find(names.begin(), names.end(), g.inputs[i]->name) - names.begin();
      if (k == names.size()) k = i;
      if (k >= decoded.size()) return Failure{"input", InvalidArgument("no data for input '", g.inputs[i]->name, "'")};
      if (decoded[k].dtype != g.inputs[i]->dtype)
        return Failure{"input", InvalidArgument("input '", g.inputs[i]->name, "': model expects ",
                                                DataTypeName(g.inputs[i]->dtype), ", data is ",
                                                DataTypeName(decoded[k].dtype))};
      shapes.push_back(decoded[k].shape);
      in_ptrs.push_back(decoded[k].data.data());
    }
    auto exe = spec.Get(shapes);
    if (!exe.ok()) return Failure{"compile", exe.status()};
    fs::path out_dir = out_root / case_dir.filename() / ds.filename();
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!*exe) {  // data-dependent shapes
      auto interp = spec.GetInterpreter();
      if (!interp.ok()) return Failure{"kernel", interp.status()};
      std::vector<RtValue> ins;
      for (size_t i = 0; i < in_ptrs.size(); ++i) {
        HostTensor t;
        t.dtype = g.inputs[i]->dtype;
        t.shape = shapes[i];
        t.data = TensorData::View(nullptr, in_ptrs[i], t.ByteSize());
        ins.push_back(RtValue::FromTensor(std::move(t)));
      }
      auto outs = (*interp)->Run(ins, pool);
      if (!outs.ok()) return Failure{"run", outs.status()};
      for (size_t i = 0; i < outs->size(); ++i) {
        std::ofstream out(out_dir / ("output_" + std::to_string(i) + ".pb"), std::ios::binary | std::ios::trunc);
        out << EncodeValue(g.outputs[i]->name, (*outs)[i]);
        if (!out) return Failure{"output", IoError("cannot write output ", i)};
      }
      continue;
    }
    const Executable& e = **exe;
    auto ctx = e.AcquireContext();
    if (!ctx.ok()) return Failure{"load", ctx.status()};
    std::vector<TensorData> outs;
    std::vector<void*> out_ptrs;
    for (size_t i = 0; i < e.num_outputs(); ++i) {
      outs.push_back(TensorData::Allocate(static_cast<size_t>(std::max<int64_t>(e.output(i).ByteSize(), 1))));
      out_ptrs.push_back(outs.back().mutable_data());
    }
    Status st = e.Run(**ctx, in_ptrs, out_ptrs, pool);
    e.ReleaseContext(std::move(*ctx));
    if (!st.ok()) return Failure{"run", st};
    for (size_t i = 0; i < e.num_outputs(); ++i)
      if (Status w = WriteOutput(out_dir / ("output_" + std::to_string(i) + ".pb"), e.output(i), outs[i].data());
          !w.ok())
        return Failure{"output", w};
  }
  return std::nullopt;
}

// True when the static path may fail for reasons the interpreter covers.
bool WantsInterpreter(const fs::path& case_dir) {
  auto parsed = ParseOnnxFile((case_dir / "model.onnx").string(), {});
  if (!parsed.ok()) return false;
  return (*parsed)->HasSubgraphs() || (*parsed)->HasNonTensorValues() || NeedsInterpreter(**parsed);
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
      static const bool all_dynamic = std::getenv("OC_CONFORMANCE_ALL_DYNAMIC") != nullptr &&
                                      std::string(std::getenv("OC_CONFORMANCE_ALL_DYNAMIC")) == "1";
      f = all_dynamic ? RunCaseAsDynamic(case_dir, out_root, pool) : RunCase(case_dir, out_root, pool, &frozen);
      // A parse failure of the static path can come from --input_shape taken
      // from sequence data; WantsInterpreter parses without it.
      // Shapes that only the data decides (NonZero, Unique, NonMaxSuppression,
      // shape tensors read from inputs) are what the interpreter is for, as in
      // the runtime's dynamic models (runtime/shape_specializer.h).
      if (f && f->stage != "output" &&
          (WantsInterpreter(case_dir) || (f->stage == "compile" && NeedsConstantShapes(f->status)))) {
        std::optional<Failure> g = RunInterpreted(case_dir, out_root, pool);
        if (!g) frozen.clear();
        f = g ? std::optional<Failure>(Failure{g->stage, g->status.WithContext(StrCat(
                                                  "interpreter (static path: [", f->stage, "] ",
                                                  f->status.message().substr(0, 200), ")"))})
              : std::nullopt;
      }
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
