// The .om writer. The reader is om_reader.cc, the JSON dump and summary are in
// om_json.cc, shared container helpers in om_format.cc.
//
// ---------------------------------------------------------------------------
// .om container, format version 1. All integers little-endian.
//
//   file offset  size  field
//   0            8     magic "OCANNOM\0" (4F 43 41 4E 4E 4F 4D 00)
//   8            4     u32 format_version: 1 (kOmFormatVersion) for a static,
//                          memory-planned graph; 2 (kOmFormatVersionDynamic)
//                          for a graph with unknown dims (Model.dynamic)
//   12           4     u32 header_size (= 128)
//   16           4     u32 flags: bit 0 (0x1) = some constants are stored only
//                          inside prepacked bytes (Value.packed_in_node; format
//                          version 1 only); other bits must be 0
//   20           4     u32 body_crc: CRC-32C of file bytes [header_size, file_size)
//   24           8     u64 fb_offset: graph section (FlatBuffer) start; multiple of 8, >= 128
//   32           8     u64 fb_size: graph section length (>= 8)
//   40           8     u64 blob_offset: weight blob start; multiple of 64,
//                          >= fb_offset + fb_size
//   48           8     u64 blob_size: weight blob length = file_size - blob_offset
//   56           8     u64 file_size: total file length
//   64           32    target: ASCII "x86_64-avx512" / "x86_64-avx2" / "x86_64" /
//                          "aarch64", NUL-padded (at most 31 characters, the
//                          rest zero); repeated from the graph section so a
//                          wrong-target error needs no parsing
//   96           28    reserved, zero
//   124          4     u32 header_crc: CRC-32C of file bytes [0, 124)
//   128          ...   graph section: a FlatBuffer (schema om_schema.fbs, root
//                          Model, file identifier "OCOM")
//   ...                zero padding up to blob_offset
//   blob_offset  ...   weight blob: constant tensors, tensor attributes and
//                          kernel-prepacked weights, each at a blob-relative
//                          offset that is a multiple of 64 (zero padding
//                          between entries), referenced by offset+size
//                          from the graph section.
//
// CRC-32C is the Castagnoli CRC (reflected polynomial 0x82F63B78, initial
// value and final xor 0xFFFFFFFF); CRC-32C("123456789") = 0xE3069283.
//
// Because the blob starts at a multiple of 64 and mmap returns page-aligned
// memory, every weight is 64-byte aligned in place; constants of the loaded
// graph are views into the mapping. The writer runs the full reader over its
// output (minus the host-target check) so it never emits a file the reader
// rejects.
// ---------------------------------------------------------------------------
#include "om/om_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "om/om_format.h"
#include "om_schema_generated.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

namespace fb = ::oc::om;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using om_internal::kOmBlobAlign;

class BlobBuilder {
 public:
  // Appends `n` bytes at the next multiple of 64 and returns their blob offset.
  uint64_t Add(const void* data, size_t n) {
    bytes_.resize((bytes_.size() + kOmBlobAlign - 1) / kOmBlobAlign * kOmBlobAlign, 0);
    uint64_t off = bytes_.size();
    if (n) {
      bytes_.resize(bytes_.size() + n);
      std::memcpy(bytes_.data() + off, data, n);
    }
    return off;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

bool Owned(const Graph& g, const Value* v) {
  return v && v->id >= 0 && static_cast<size_t>(v->id) < g.values().size() &&
         g.values()[v->id].get() == v;
}

// A graph that keeps unknown dims (compiled with allow_dynamic).
bool HasUnknownDims(const Graph& g) {
  for (const Value* v : g.inputs)
    if (!v->IsStatic()) return true;
  for (auto& n : g.nodes())
    for (const Value* v : n->outputs)
      if (v && !v->IsStatic()) return true;
  return false;
}

Status CheckValueForWrite(const Graph& g, const Value& v, bool dynamic) {
  // In a dynamic graph only run-time-inferred values may lack a dtype or dims.
  const bool may_be_unknown = dynamic && !v.constant;
  const bool may_lack_dtype = may_be_unknown && !g.IsGraphInput(&v);
  if (!(may_lack_dtype && v.dtype == DataType::kUndefined) &&
      !IsKnownDataType(static_cast<int32_t>(v.dtype)))
    return InvalidArgument("cannot write value '", v.name, "': dtype ", DataTypeName(v.dtype),
                           " cannot be stored in a .om");
  // (Sequences and optionals describe an element type: their rank may be open.)
  if (may_be_unknown && g.IsGraphInput(&v) && !v.has_shape && v.kind == ValueKind::kTensor)
    return FailedPrecondition("cannot write graph input '", v.name,
                              "': its rank is unknown (a .om needs at least the rank of every input)");
  if (!may_be_unknown && !v.IsStatic())
    return FailedPrecondition("cannot write value '", v.name, "' with shape ", v.ShapeString(),
                              ": a .om needs a static graph (run the compile pipeline first)");
  if (!v.dim_params.empty() && v.dim_params.size() != v.shape.size())
    return Internal("value '", v.name, "' has ", v.dim_params.size(), " dim_params for rank ",
                    v.shape.size());
  if (v.constant && static_cast<int64_t>(v.constant->size()) != v.ByteSize())
    return Internal("constant '", v.name, "' has ", v.constant->size(), " bytes, shape ",
                    v.ShapeString(), " of ", DataTypeName(v.dtype), " needs ", v.ByteSize());
  return Status::Ok();
}

fb::ValueKind KindOf(const Graph& g, const Value& v) {
  if (v.constant) return fb::ValueKind::Constant;
  if (g.IsGraphInput(&v)) return fb::ValueKind::Input;
  if (g.IsGraphOutput(&v)) return fb::ValueKind::Output;
  return fb::ValueKind::Activation;
}

// Model.string_pool: one entry per use (no sharing: the reader's work budget
// assumes every byte it copies is stored once).
class StringPool {
 public:
  explicit StringPool(FlatBufferBuilder& b) : b_(b) {}
  Offset<flatbuffers::Vector<int32_t>> Add(const std::vector<std::string>& strings) {
    std::vector<int32_t> idx;
    idx.reserve(strings.size());
    for (const std::string& s : strings) {
      idx.push_back(static_cast<int32_t>(offsets_.size()));
      offsets_.push_back(b_.CreateString(s));
    }
    return b_.CreateVector(idx);
  }
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Finish() { return b_.CreateVector(offsets_); }

 private:
  FlatBufferBuilder& b_;
  std::vector<Offset<flatbuffers::String>> offsets_;
};

Expected<std::vector<uint8_t>> SerializeSubgraph(const Graph& g, BlobBuilder& blob, int depth);

// Per value id: the first node whose prepacked bytes alone will hold the value
// (Value.packed_in_node), or -1 to store its raw data. A constant qualifies
// when every use of it is an input that its node's kernel says its bytes hold
// and that the reader accepts (AcceptsPackedOnlyInput), and it is no output.
std::vector<int32_t> PackedOnlyPlan(const Graph& g, const std::vector<std::vector<uint8_t>>& prepacked,
                                    const std::vector<std::vector<int>>& claims) {
  const size_t nv = g.values().size();
  std::vector<int32_t> where(nv, -1);
  std::vector<bool> refused(nv, false);
  for (size_t ni = 0; ni < g.nodes().size(); ++ni) {
    const Node& n = *g.nodes()[ni];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value* v = n.inputs[k];
      if (!v || !v->constant || !Owned(g, v)) continue;
      const bool claimed = ni < claims.size() &&
                           std::find(claims[ni].begin(), claims[ni].end(), static_cast<int>(k)) != claims[ni].end();
      const bool ok = claimed && v->ByteSize() > 0 &&
                      om_internal::PackedOnlyWeight(v->dtype, static_cast<uint64_t>(v->ByteSize())) &&
                      om_internal::PackedOnlyReader(CanonicalDomain(n.domain), n.op_type, k,
                                                    ni < prepacked.size() ? prepacked[ni].size() : 0,
                                                    n.input(0) ? n.input(0)->dtype : DataType::kUndefined);
      if (!ok) refused[v->id] = true;
      else if (where[v->id] < 0) where[v->id] = static_cast<int32_t>(ni);
    }
  }
  for (const Value* v : g.outputs)
    if (Owned(g, v)) refused[v->id] = true;
  for (size_t i = 0; i < nv; ++i)
    if (refused[i]) where[i] = -1;
  return where;
}

// Value.type_kind: the ValueKind code (0 tensor, 1 sequence, 2/3 optional).
int8_t TypeKindOf(const Value& v) { return static_cast<int8_t>(v.kind); }

// Files with subgraphs or sequence/optional values are format version 3.
bool NeedsVersion3(const Graph& g) { return g.HasSubgraphs() || g.HasNonTensorValues(); }

Expected<Offset<fb::Attribute>> WriteAttribute(FlatBufferBuilder& b, BlobBuilder& blob,
                                               StringPool& pool, const Node& n, const std::string& name,
                                               const Attribute& a, int depth = 0) {
  auto name_off = b.CreateString(name);
  switch (a.kind) {
    case Attribute::Kind::kGraph: {
      if (!a.graph) return Internal(n.Describe(), ": graph attribute '", name, "' is empty");
      auto bytes = SerializeSubgraph(*a.graph, blob, depth + 1);
      if (!bytes.ok()) return bytes.status().WithContext(StrCat(n.Describe(), " attribute '", name, "'"));
      b.ForceVectorAlignment(bytes->size(), 1, 8);
      auto vec = b.CreateVector(*bytes);
      fb::AttributeBuilder ab(b);
      ab.add_name(name_off);
      ab.add_kind(fb::AttrKind::Graph);
      ab.add_graph(vec);
      return ab.Finish();
    }
    case Attribute::Kind::kGraphs:
      return NotSupported(n.Describe(), ": attribute '", name, "' is a list of graphs, which a .om cannot store yet");
    case Attribute::Kind::kInt:
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Int, a.i);
    case Attribute::Kind::kFloat:
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Float, 0, a.f);
    case Attribute::Kind::kString: {
      auto s = b.CreateString(a.s);
      return fb::CreateAttribute(b, name_off, fb::AttrKind::String, 0, 0.f, s);
    }
    case Attribute::Kind::kInts: {
      auto v = b.CreateVector(a.ints);
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Ints, 0, 0.f, 0, v);
    }
    case Attribute::Kind::kFloats: {
      auto v = b.CreateVector(a.floats);
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Floats, 0, 0.f, 0, 0, v);
    }
    case Attribute::Kind::kStrings: {
      auto v = pool.Add(a.strings);
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Strings, 0, 0.f, 0, 0, 0, v);
    }
    case Attribute::Kind::kTensor: {
      if (!IsKnownDataType(static_cast<int32_t>(a.tensor_dtype)))
        return InvalidArgument(n.Describe(), ": tensor attribute '", name, "' has dtype ",
                               DataTypeName(a.tensor_dtype), " which a .om cannot store");
      int64_t count = 1;
      for (int64_t d : a.tensor_shape) {
        if (d < 0 || __builtin_mul_overflow(count, d, &count))
          return InvalidArgument(n.Describe(), ": tensor attribute '", name, "' has a bad shape");
      }
      if (DataTypeByteSize(a.tensor_dtype, count) != static_cast<int64_t>(a.tensor.size()))
        return InvalidArgument(n.Describe(), ": tensor attribute '", name, "' has ",
                               a.tensor.size(), " bytes, its shape needs ",
                               DataTypeByteSize(a.tensor_dtype, count));
      uint64_t off = blob.Add(a.tensor.data(), a.tensor.size());
      auto shape = b.CreateVector(a.tensor_shape);
      return fb::CreateAttribute(b, name_off, fb::AttrKind::Tensor, 0, 0.f, 0, 0, 0, 0,
                                 static_cast<int32_t>(a.tensor_dtype), shape, off, a.tensor.size());
    }
  }
  return Internal(n.Describe(), ": attribute '", name, "' has an unknown kind");
}

// A subgraph as a nested Model buffer (om_schema.fbs, Attribute.graph): no
// memory plan, unknown dims allowed, captures listed, weights in the file's blob.
Expected<std::vector<uint8_t>> SerializeSubgraph(const Graph& g, BlobBuilder& blob, int depth) {
  constexpr int kMaxDepth = 16;  // the reader's limit
  if (depth > kMaxDepth) return NotSupported("subgraphs nested deeper than ", kMaxDepth, " levels");
  FlatBufferBuilder b(1 << 12);
  StringPool pool(b);
  auto is_capture = [&](const Value* v) {
    return std::find(g.captures.begin(), g.captures.end(), v) != g.captures.end();
  };
  std::vector<Offset<fb::Value>> values;
  for (size_t i = 0; i < g.values().size(); ++i) {
    const Value& v = *g.values()[i];
    if (v.id != static_cast<int>(i)) return Internal("subgraph value '", v.name, "' has id ", v.id, " at ", i);
    if (v.dtype != DataType::kUndefined && !IsKnownDataType(static_cast<int32_t>(v.dtype)))
      return InvalidArgument("cannot write subgraph value '", v.name, "': dtype ", DataTypeName(v.dtype));
    if (v.constant && (v.kind != ValueKind::kTensor || static_cast<int64_t>(v.constant->size()) != v.ByteSize()))
      return Internal("subgraph constant '", v.name, "' does not match its shape ", v.ShapeString());
    if (v.constant && v.dtype == DataType::kUndefined)
      return Internal("subgraph constant '", v.name, "' has no dtype");
    fb::ValueKind kind = v.constant                                ? fb::ValueKind::Constant
                         : g.IsGraphInput(&v) || is_capture(&v) ? fb::ValueKind::Input
                         : g.IsGraphOutput(&v) && v.producer     ? fb::ValueKind::Output
                                                                 : fb::ValueKind::Activation;
    uint64_t data_off = 0, data_size = 0;
    if (v.constant) {
      data_size = v.constant->size();
      data_off = blob.Add(v.constant->data(), data_size);
    }
    std::vector<int64_t> shape = v.has_shape ? v.shape : std::vector<int64_t>{};
    for (int64_t& d : shape) if (d < 0) d = -1;
    auto name = b.CreateString(v.name);
    auto shape_off = b.CreateVector(shape);
    Offset<flatbuffers::Vector<int32_t>> dim_params = 0;
    bool any_param = false;
    for (const std::string& p : v.dim_params) any_param |= !p.empty();
    if (any_param && v.has_shape) dim_params = pool.Add(v.dim_params);
    const bool rank_unknown = !v.has_shape && !v.constant;
    values.push_back(fb::CreateValue(b, name, static_cast<int32_t>(v.dtype), shape_off, dim_params, kind, -1,
                                     data_off, data_size, rank_unknown, TypeKindOf(v)));
  }
  auto index_of = [&](const Value* v) -> Expected<int32_t> {
    if (!v) return -1;
    if (!Owned(g, v)) return Internal("subgraph '", g.name, "' refers to value '", v->name, "' it does not own");
    return static_cast<int32_t>(v->id);
  };
  std::vector<Offset<fb::Node>> nodes;
  for (const auto& up : g.nodes()) {
    const Node& n = *up;
    std::vector<int32_t> ins, outs;
    for (const Value* v : n.inputs) {
      OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v));
      ins.push_back(idx);
    }
    for (const Value* v : n.outputs) {
      OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v));
      outs.push_back(idx);
    }
    std::vector<Offset<fb::Attribute>> attrs;
    for (const auto& [name, a] : n.attrs) {
      OC_ASSIGN_OR_RETURN(auto off, WriteAttribute(b, blob, pool, n, name, a, depth));
      attrs.push_back(off);
    }
    auto name = b.CreateString(n.name);
    auto domain = b.CreateString(n.domain);
    auto op_type = b.CreateString(n.op_type);
    auto in_vec = b.CreateVector(ins);
    auto out_vec = b.CreateVector(outs);
    auto attr_vec = b.CreateVector(attrs);
    nodes.push_back(fb::CreateNode(b, name, domain, op_type, n.opset, in_vec, out_vec, attr_vec, 0, 0));
  }
  std::vector<int32_t> inputs, outputs, captures;
  for (const Value* v : g.inputs) { OC_ASSIGN_OR_RETURN(int32_t i, index_of(v)); inputs.push_back(i); }
  for (const Value* v : g.outputs) { OC_ASSIGN_OR_RETURN(int32_t i, index_of(v)); outputs.push_back(i); }
  for (const Value* v : g.captures) { OC_ASSIGN_OR_RETURN(int32_t i, index_of(v)); captures.push_back(i); }
  std::vector<Offset<fb::OpsetImport>> opsets;
  for (const auto& [domain, version] : g.opset_imports)
    opsets.push_back(fb::CreateOpsetImport(b, b.CreateString(domain), version));
  auto values_vec = b.CreateVector(values);
  auto nodes_vec = b.CreateVector(nodes);
  auto in_vec = b.CreateVector(inputs);
  auto out_vec = b.CreateVector(outputs);
  auto cap_vec = b.CreateVector(captures);
  auto opset_vec = b.CreateVector(opsets);
  auto pool_vec = pool.Finish();
  auto name = b.CreateString(g.name);
  fb::ModelBuilder mb(b);
  mb.add_name(name);
  mb.add_ir_version(g.ir_version);
  mb.add_opset_imports(opset_vec);
  mb.add_values(values_vec);
  mb.add_nodes(nodes_vec);
  mb.add_inputs(in_vec);
  mb.add_outputs(out_vec);
  mb.add_arena_size(0);
  mb.add_arena_size_no_reuse(-1);
  mb.add_string_pool(pool_vec);
  mb.add_dynamic(true);
  mb.add_captures(cap_vec);
  fb::FinishModelBuffer(b, mb.Finish());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace

namespace om_internal {
Expected<OmModel> LoadOmImpl(std::shared_ptr<const void> storage, const uint8_t* data,
                             size_t size, bool check_target);
}  // namespace om_internal

Expected<std::vector<uint8_t>> SerializeOm(const Graph& graph,
                                           const std::vector<std::vector<uint8_t>>& prepacked,
                                           const OmWriteOptions& options) {
  std::string target = options.target;
  if (target.empty() || target == "host") target = HostTarget();
  if (!om_internal::IsKnownTarget(target) || target.size() >= om_internal::kOmTargetFieldSize)
    return InvalidArgument("unknown .om target '", options.target,
                           "' (expected host, x86_64, x86_64-avx2, x86_64-avx512 or aarch64)");
  const bool dynamic = HasUnknownDims(graph);
  if (dynamic && graph.arena_size != 0)
    return FailedPrecondition("graph '", graph.name,
                              "' has unknown dims but a memory plan: compile it with allow_dynamic");
  if (graph.arena_size < 0)
    return FailedPrecondition("graph '", graph.name,
                              "' has no memory plan (arena_size unset): run the compile pipeline");
  if (prepacked.size() > graph.nodes().size())
    return InvalidArgument(prepacked.size(), " prepacked entries for ", graph.nodes().size(),
                           " nodes");

  const std::vector<int32_t> packed_in = PlanPackedOnlyWeights(graph, prepacked, options);
  uint32_t flags = 0;
  for (int32_t p : packed_in)
    if (p >= 0) flags = om_internal::kOmFlagPackedOnlyWeights;

  FlatBufferBuilder b(1 << 16);
  BlobBuilder blob;
  StringPool pool(b);

  std::vector<Offset<fb::Value>> values;
  values.reserve(graph.values().size());
  for (size_t i = 0; i < graph.values().size(); ++i) {
    const Value& v = *graph.values()[i];
    if (v.id != static_cast<int>(i))
      return Internal("value '", v.name, "' has id ", v.id, " at index ", i);
    OC_RETURN_IF_ERROR(CheckValueForWrite(graph, v, dynamic));
    fb::ValueKind kind = KindOf(graph, v);
    uint64_t data_off = 0, data_size = 0;
    if (v.constant && packed_in[i] < 0) {
      data_size = v.constant->size();
      data_off = blob.Add(v.constant->data(), data_size);
    }
    auto name = b.CreateString(v.name);
    // A value of unknown rank may still carry stale dims (from the model's
    // declared types): only has_shape says they mean anything.
    auto shape = b.CreateVector(v.has_shape ? v.shape : std::vector<int64_t>());
    Offset<flatbuffers::Vector<int32_t>> dim_params = 0;
    bool any_param = false;
    if (v.has_shape)
      for (const std::string& p : v.dim_params) any_param |= !p.empty();
    if (any_param) dim_params = pool.Add(v.dim_params);
    values.push_back(fb::CreateValue(b, name, static_cast<int32_t>(v.dtype), shape, dim_params,
                                     kind, v.constant || dynamic ? -1 : v.arena_offset, data_off,
                                     data_size, !v.has_shape, TypeKindOf(v), packed_in[i]));
  }

  auto index_of = [&](const Value* v, const std::string& what) -> Expected<int32_t> {
    if (!v) return -1;
    if (!Owned(graph, v)) return Internal(what, " refers to a value the graph does not own");
    return static_cast<int32_t>(v->id);
  };

  std::vector<Offset<fb::Node>> nodes;
  for (size_t ni = 0; ni < graph.nodes().size(); ++ni) {
    const Node& n = *graph.nodes()[ni];
    std::vector<int32_t> ins, outs;
    for (const Value* v : n.inputs) {
      OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v, n.Describe() + " input"));
      ins.push_back(idx);
    }
    for (const Value* v : n.outputs) {
      OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v, n.Describe() + " output"));
      outs.push_back(idx);
    }
    std::vector<Offset<fb::Attribute>> attrs;
    for (const auto& [name, a] : n.attrs) {
      OC_ASSIGN_OR_RETURN(auto off, WriteAttribute(b, blob, pool, n, name, a));
      attrs.push_back(off);
    }
    uint64_t pp_off = 0, pp_size = 0;
    if (ni < prepacked.size() && !prepacked[ni].empty()) {
      pp_size = prepacked[ni].size();
      pp_off = blob.Add(prepacked[ni].data(), pp_size);
    }
    auto name = b.CreateString(n.name);
    auto domain = b.CreateString(n.domain);
    auto op_type = b.CreateString(n.op_type);
    auto in_vec = b.CreateVector(ins);
    auto out_vec = b.CreateVector(outs);
    auto attr_vec = b.CreateVector(attrs);
    nodes.push_back(fb::CreateNode(b, name, domain, op_type, n.opset, in_vec, out_vec, attr_vec,
                                   pp_off, pp_size));
  }

  std::vector<int32_t> inputs, outputs;
  for (const Value* v : graph.inputs) {
    if (!v) return Internal("graph input is null");
    OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v, "graph input"));
    inputs.push_back(idx);
  }
  for (const Value* v : graph.outputs) {
    if (!v) return Internal("graph output is null");
    OC_ASSIGN_OR_RETURN(int32_t idx, index_of(v, "graph output"));
    outputs.push_back(idx);
  }

  std::vector<Offset<fb::OpsetImport>> opsets;
  for (const auto& [domain, version] : graph.opset_imports)
    opsets.push_back(fb::CreateOpsetImport(b, b.CreateString(domain), version));
  std::vector<Offset<fb::KeyValue>> meta;
  for (const auto& [k, v] : graph.metadata)
    meta.push_back(fb::CreateKeyValue(b, b.CreateString(k), b.CreateString(v)));

  auto model = fb::CreateModel(
      b, b.CreateString(graph.name), b.CreateString(options.producer_version),
      b.CreateString(target), b.CreateString(options.source_framework),
      b.CreateString(graph.producer_name), graph.ir_version, b.CreateVector(opsets),
      b.CreateVector(meta), b.CreateVector(values), b.CreateVector(nodes), b.CreateVector(inputs),
      b.CreateVector(outputs), graph.arena_size, dynamic ? -1 : graph.arena_size_no_reuse, pool.Finish(),
      dynamic);
  fb::FinishModelBuffer(b, model);

  std::vector<uint8_t> file = om_internal::PackContainer(
      std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()), blob.bytes(), target,
      NeedsVersion3(graph) ? kOmFormatVersionSubgraphs : dynamic ? kOmFormatVersionDynamic : kOmFormatVersion,
      flags);

  // Self-check: a file atc writes must load (on a host of its target).
  auto check = om_internal::LoadOmImpl(nullptr, file.data(), file.size(), /*check_target=*/false);
  if (!check.ok())
    return check.status().WithContext(
        StrCat("the .om written for graph '", graph.name, "' fails its own verification"));
  return file;
}

std::vector<int32_t> PlanPackedOnlyWeights(const Graph& graph,
                                           const std::vector<std::vector<uint8_t>>& prepacked,
                                           const OmWriteOptions& options) {
  // Only static single-graph files (format version 1) drop raw weights.
  if (options.prepacked_inputs.empty() || HasUnknownDims(graph) || NeedsVersion3(graph))
    return std::vector<int32_t>(graph.values().size(), -1);
  return PackedOnlyPlan(graph, prepacked, options.prepacked_inputs);
}

Status WriteOmFile(const std::string& path, const Graph& graph,
                   const std::vector<std::vector<uint8_t>>& prepacked,
                   const OmWriteOptions& options) {
  OC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeOm(graph, prepacked, options));
  // Write a sibling file and rename it so a failed write never leaves a torn .om.
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return IoError("cannot create '", tmp, "': ", std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return IoError("cannot write ", bytes.size(), " bytes to '", tmp, "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return IoError("cannot rename '", tmp, "' to '", path, "': ", std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace oc
