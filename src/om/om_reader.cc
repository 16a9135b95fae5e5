// The verifying .om reader (layout: top of om_file.cc). The input is untrusted:
// every size, offset, index, dtype and op is checked before a Graph is built,
// and every failure is a Status naming the file offset or field at fault.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <new>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "om/om_file.h"
#include "om/om_format.h"
#include "om_schema_generated.h"
#include "ops/op_registry.h"

namespace oc {
namespace om_internal {
namespace {

namespace fb = ::oc::om;
using flatbuffers::String;

// Returns `expr`'s error prefixed with `context`, which is built only on failure
// (building messages eagerly would dominate the load time of large graphs).
#define OM_TRY(expr, context)                                 \
  do {                                                        \
    ::oc::Status om_st_ = (expr);                             \
    if (!om_st_.ok()) return om_st_.WithContext(context);     \
  } while (0)
using flatbuffers::Vector;

std::string Str(const String* s) { return s ? std::string(s->data(), s->size()) : std::string(); }

// Element count and byte size of a shape, or an error on a negative dim or overflow.
// FlatBuffers 2.0.8's verifier checks the alignment of a vector's length field
// but not of 8-byte elements; reading a misaligned one would be undefined.
Status CheckAligned(const Vector<int64_t>* v, const char* field) {
  if (v && v->size() && reinterpret_cast<uintptr_t>(v->data()) % alignof(int64_t) != 0)
    return InvalidFile("the elements of '", field, "' are not 8-byte aligned");
  return Status::Ok();
}

// `allow_unknown`: -1 dims are accepted (dynamic models) and give 0 bytes.
Status ShapeBytes(const Vector<int64_t>* shape, DataType dtype, uint64_t* bytes,
                  bool allow_unknown = false) {
  OC_RETURN_IF_ERROR(CheckAligned(shape, "shape"));
  int64_t count = 1;
  bool unknown = false;
  if (shape) {
    for (flatbuffers::uoffset_t i = 0; i < shape->size(); ++i) {
      int64_t d = shape->Get(i);
      if (d == -1 && allow_unknown) {
        unknown = true;
        continue;
      }
      if (d < 0)
        return InvalidFile("dim ", i, " is ", d,
                           allow_unknown ? " (dims must be >= 0, or -1 for unknown)"
                                         : " (a static .om graph has dims >= 0; -1 is allowed only "
                                           "in inputs, activations and outputs of a dynamic model)");
      if (__builtin_mul_overflow(count, d, &count))
        return InvalidFile("element count overflows at dim ", i);
    }
  }
  int64_t b = 0;
  // Sub-byte types pack several elements a byte: their size is below count's.
  const int64_t elem_bytes = std::max<int64_t>(DataTypeBits(dtype) / 8, 1);
  if (__builtin_mul_overflow(count, elem_bytes, &b))
    return InvalidFile("byte size overflows (", count, " elements of ",
                       DataTypeName(dtype), ")");
  b = DataTypeBits(dtype) == 0 ? 0 : DataTypeByteSize(dtype, count);
  *bytes = unknown ? 0 : static_cast<uint64_t>(b);
  return Status::Ok();
}

class Reader {
 public:
  Reader(const uint8_t* file, const OmHeader& h, std::shared_ptr<const void> storage)
      : file_(file), h_(h), storage_(std::move(storage)), blob_(file + h.blob_offset),
        fbuf_(file + h.fb_offset), fb_size_(h.fb_size) {}
  // A subgraph: the nested Model buffer [fbuf, fbuf + size) of a Graph attribute.
  Reader(const Reader& parent, const uint8_t* fbuf, uint64_t size)
      : file_(parent.file_), h_(parent.h_), storage_(parent.storage_), blob_(parent.blob_), fbuf_(fbuf),
        fb_size_(size), subgraph_(true), depth_(parent.depth_ + 1) {}

  // Nesting of subgraphs (If inside Loop inside ...) a file may use.
  static constexpr int kMaxSubgraphDepth = 16;

  Expected<OmModel> Run();

 private:
  uint64_t Off(const void* p) const { return static_cast<const uint8_t*>(p) - file_; }
  std::string ValueWhat(size_t i, const fb::Value* v) const {
    return StrCat("value ", i, " '", Str(v->name()), "' (table at file offset ", Off(v), ")");
  }
  std::string NodeWhat(size_t i, const fb::Node* n) const {
    return StrCat("node ", i, " '", Str(n->name()), "' (", Str(n->op_type()),
                  ", table at file offset ", Off(n), ")");
  }
  Status CheckBlobRange(uint64_t offset, uint64_t size) const {
    if (offset % kOmBlobAlign != 0)
      return InvalidFile("blob offset ", offset, " is not a multiple of ", kOmBlobAlign);
    if (offset > h_.blob_size || size > h_.blob_size - offset)
      return InvalidFile("bytes [", offset, ", +", size, ") exceed the weight blob (",
                         h_.blob_size, " bytes at file offset ", h_.blob_offset, ")");
    return Status::Ok();
  }
  Status CheckIndex(int32_t idx, bool allow_absent) const {
    if (idx == -1 && allow_absent) return Status::Ok();
    if (idx < 0 || static_cast<size_t>(idx) >= num_values_)
      return InvalidFile("value index ", idx, " is out of range [0, ", num_values_, ")");
    return Status::Ok();
  }
  // Charges the bytes a field occupies when stored once. A FlatBuffer can make
  // many offsets point at the same data; the writer never does, so a graph
  // that references more bytes than its section holds is rejected. This keeps
  // the reader's work (and the graph it builds) linear in the file size.
  Status Charge(uint64_t bytes) {
    if (bytes > budget_)
      return InvalidFile("graph section (", fb_size_,
                         " bytes) references more data than it holds: shared offsets");
    budget_ -= bytes;
    return Status::Ok();
  }
  static uint64_t Cost(const String* s) { return s ? 5 + static_cast<uint64_t>(s->size()) : 0; }
  template <typename T>
  static uint64_t Cost(const Vector<T>* v) {
    return v ? 4 + static_cast<uint64_t>(v->size()) * sizeof(T) : 0;
  }
  // Checks string_pool indices and returns the bytes of the strings they name.
  Expected<uint64_t> PoolCost(const Vector<int32_t>* idx) const {
    uint64_t cost = 0;
    if (!idx) return cost;
    for (flatbuffers::uoffset_t k = 0; k < idx->size(); ++k) {
      int32_t i = idx->Get(k);
      if (i < 0 || static_cast<size_t>(i) >= pool_size_)
        return InvalidFile("string_pool index ", i, " at position ", k, " is out of range [0, ",
                           pool_size_, ")");
      cost += Cost(m_->string_pool()->Get(static_cast<flatbuffers::uoffset_t>(i)));
    }
    return cost;
  }
  std::string PoolString(int32_t i) const {
    return Str(m_->string_pool()->Get(static_cast<flatbuffers::uoffset_t>(i)));
  }
  Status CheckHeaderFields();
  Status CheckValues();
  Status CheckGraphIO();
  Status CheckNodes();
  Status CheckAttribute(const fb::Attribute* a, const std::function<std::string()>& node_what);
  Expected<OmModel> Build();

  const uint8_t* file_;
  OmHeader h_;
  std::shared_ptr<const void> storage_;
  const uint8_t* blob_;
  const fb::Model* m_ = nullptr;
  size_t num_values_ = 0;
  size_t pool_size_ = 0;
  uint64_t budget_ = 0;
  bool dynamic_ = false;
  const uint8_t* fbuf_;
  uint64_t fb_size_;
  bool subgraph_ = false;
  int depth_ = 0;
  // Subgraphs built while their attributes were checked, for Build().
  std::unordered_map<const fb::Attribute*, std::shared_ptr<Graph>> subgraphs_;
  std::vector<fb::ValueKind> kinds_;
  std::vector<uint64_t> bytes_;
  // Value.packed_in_node per value (-1: raw data in the blob, or no constant).
  std::vector<int32_t> packed_in_;
  size_t packed_only_values_ = 0;
  uint64_t packed_only_bytes_ = 0;
};

Status Reader::CheckHeaderFields() {
  if (!subgraph_ && Str(m_->target()) != h_.target)
    return InvalidFile("graph section target '", Str(m_->target()),
                       "' differs from the header target '", h_.target, "'");
  dynamic_ = m_->dynamic();
  if (subgraph_) {
    // Nested in an attribute: never memory-planned; the target is the file's.
    if (!dynamic_ || m_->arena_size() != 0)
      return InvalidFile("a subgraph must be dynamic with arena_size 0 (has dynamic=", dynamic_, ", arena_size ",
                         m_->arena_size(), ")");
  } else if (m_->captures() && m_->captures()->size()) {
    return InvalidFile("the top-level graph lists captures (only subgraphs read enclosing graphs)");
  } else if (h_.format_version == kOmFormatVersionSubgraphs) {
    // Version 3 may be either; Model.dynamic says which.
  } else if (dynamic_ != (h_.format_version == kOmFormatVersionDynamic))
    return InvalidFile("graph section says the model is ", dynamic_ ? "dynamic" : "static",
                       " but the header has format version ", h_.format_version, " (dynamic models are version ",
                       kOmFormatVersionDynamic, ", static ones ", kOmFormatVersion, ")");
  if (m_->arena_size() < 0)
    return InvalidFile("arena_size ", m_->arena_size(), " is negative (model not memory-planned)");
  if (dynamic_ && m_->arena_size() != 0)
    return InvalidFile("arena_size is ", m_->arena_size(),
                       " in a dynamic model (planned at run time: must be 0)");
  if (m_->arena_size_no_reuse() < -1)
    return InvalidFile("arena_size_no_reuse ", m_->arena_size_no_reuse(), " is invalid");
  std::unordered_set<std::string> domains;
  if (auto* ops = m_->opset_imports()) {
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
      const fb::OpsetImport* o = ops->Get(i);
      std::string d = CanonicalDomain(Str(o->domain()));
      if (o->version() < 1)
        return InvalidFile("opset_imports[", i, "] (domain '", d, "') has version ", o->version());
      if (!domains.insert(d).second)
        return InvalidFile("opset_imports[", i, "]: domain '", d, "' is imported twice");
    }
  }
  return Status::Ok();
}

Status Reader::CheckValues() {
  const auto* values = m_->values();
  num_values_ = values ? values->size() : 0;
  kinds_.resize(num_values_);
  bytes_.resize(num_values_);
  packed_in_.assign(num_values_, -1);
  std::unordered_set<std::string_view> names;
  names.reserve(num_values_);
  for (size_t i = 0; i < num_values_; ++i) {
    const fb::Value* v = values->Get(static_cast<flatbuffers::uoffset_t>(i));
    auto what = [&] { return ValueWhat(i, v); };
    if (v->name() && v->name()->size() &&
        !names.insert(std::string_view(v->name()->data(), v->name()->size())).second)
      return InvalidFile(what(), ": duplicate value name");
    auto pool_cost = PoolCost(v->dim_params());
    if (!pool_cost.ok()) return pool_cost.status().WithContext(what() + " dim_params");
    OM_TRY(Charge(Cost(v->name()) + Cost(v->shape()) + Cost(v->dim_params()) + *pool_cost), what());
    fb::ValueKind kind = v->kind();
    if (kind < fb::ValueKind::MIN || kind > fb::ValueKind::MAX)
      return InvalidFile(what(), ": unknown value kind ", static_cast<int>(kind));
    kinds_[i] = kind;
    const int type_kind = v->type_kind();
    if (type_kind < 0 || type_kind > static_cast<int>(ValueKind::kOptionalSequence))
      return InvalidFile(what(), ": unknown type_kind ", type_kind);
    if (type_kind != 0) {
      if (h_.format_version != kOmFormatVersionSubgraphs)
        return InvalidFile(what(), ": a sequence/optional value needs format version ", kOmFormatVersionSubgraphs);
      if (kind == fb::ValueKind::Constant || v->arena_offset() != -1)
        return InvalidFile(what(), ": a sequence/optional value cannot be a constant or live in the arena");
    }
    // Dynamic models: what is inferred at run time may be unknown; weights and
    // the rank (and dtype) of graph inputs never are.
    // A subgraph's inputs and captures are typed by what the enclosing node
    // passes at run time, so they may be as unknown as activations.
    const bool inferred = dynamic_ && (kind == fb::ValueKind::Activation || kind == fb::ValueKind::Output ||
                                       (kind == fb::ValueKind::Input && (subgraph_ || v->type_kind() != 0)));
    const bool may_have_unknown_dims = inferred || (dynamic_ && kind == fb::ValueKind::Input);
    if (!(inferred && v->dtype() == 0) && !IsKnownDataType(v->dtype()))
      return InvalidFile(what(), ": unknown dtype code ", v->dtype());
    DataType dtype = static_cast<DataType>(v->dtype());
    OM_TRY(ShapeBytes(v->shape(), dtype, &bytes_[i], may_have_unknown_dims), what());
    size_t rank = v->shape() ? v->shape()->size() : 0;
    if (v->rank_unknown() && (!inferred || rank != 0))
      return InvalidFile(what(), ": rank_unknown is set on a ",
                         inferred ? "value with dims" : "value of a static model, an input or a constant");
    if (v->dim_params() && v->dim_params()->size() != 0 && v->dim_params()->size() != rank)
      return InvalidFile(what(), ": ", v->dim_params()->size(), " dim_params for rank ", rank);
    if (dynamic_ && kind != fb::ValueKind::Constant && v->arena_offset() != -1)
      return InvalidFile(what(), ": arena offset ", v->arena_offset(),
                         " in a dynamic model (planned at run time: must be -1)");
    if (const int32_t pin = v->packed_in_node(); pin != -1) {
      // Stored only in prepacked bytes: CheckNodes checks who reads it.
      if (kind != fb::ValueKind::Constant)
        return InvalidFile(what(), ": packed_in_node ", pin, " is set on a value that is no constant");
      if (subgraph_ || !(h_.flags & kOmFlagPackedOnlyWeights))
        return InvalidFile(what(), ": packed_in_node ", pin, " is set but ",
                           subgraph_ ? "the value is in a subgraph" : "header flag 0x1 (packed-only weights) is not");
      if (!PackedOnlyWeight(dtype, bytes_[i]) || pin < 0)
        return InvalidFile(what(), ": packed_in_node ", pin, " on a ", DataTypeName(dtype), " constant of ",
                           bytes_[i], " bytes (only non-empty float32 weights may be stored packed only)");
      if (v->data_offset() != 0 || v->data_size() != 0)
        return InvalidFile(what(), ": a constant stored only in prepacked bytes carries data (offset ",
                           v->data_offset(), ", size ", v->data_size(), ")");
      if (v->arena_offset() != -1)
        return InvalidFile(what(), ": a constant cannot have an arena offset");
      packed_in_[i] = pin;
      ++packed_only_values_;
      packed_only_bytes_ += bytes_[i];
    } else if (kind == fb::ValueKind::Constant) {
      if (v->data_size() != bytes_[i])
        return InvalidFile(what(), ": constant has ", v->data_size(), " bytes, its shape of ",
                           DataTypeName(dtype), " needs ", bytes_[i]);
      OM_TRY(CheckBlobRange(v->data_offset(), v->data_size()), what());
      if (v->arena_offset() != -1)
        return InvalidFile(what(), ": a constant cannot have an arena offset");
    } else {
      if (v->data_offset() != 0 || v->data_size() != 0)
        return InvalidFile(what(), ": only constants carry data");
      int64_t off = v->arena_offset();
      if (off < -1) return InvalidFile(what(), ": arena offset ", off, " is negative");
      if (off >= 0 && (static_cast<uint64_t>(off) > static_cast<uint64_t>(m_->arena_size()) ||
                       bytes_[i] > static_cast<uint64_t>(m_->arena_size() - off)))
        return InvalidFile(what(), ": arena bytes [", off, ", +", bytes_[i],
                           ") exceed arena_size ", m_->arena_size());
    }
  }
  return Status::Ok();
}

Status Reader::CheckGraphIO() {
  std::vector<bool> listed(num_values_, false);
  size_t n_in = 0;
  if (auto* ins = m_->inputs()) {
    for (flatbuffers::uoffset_t i = 0; i < ins->size(); ++i) {
      auto what = [&] { return StrCat("graph input ", i); };
      OM_TRY(CheckIndex(ins->Get(i), false), what());
      size_t idx = static_cast<size_t>(ins->Get(i));
      if (kinds_[idx] != fb::ValueKind::Input)
        return InvalidFile(what(), ": value ", idx, " is not of kind Input");
      if (listed[idx]) return InvalidFile(what(), ": value ", idx, " is listed twice");
      listed[idx] = true;
      ++n_in;
    }
  }
  if (auto* caps = m_->captures()) {
    for (flatbuffers::uoffset_t i = 0; i < caps->size(); ++i) {
      auto what = [&] { return StrCat("captured value ", i); };
      OM_TRY(CheckIndex(caps->Get(i), false), what());
      size_t idx = static_cast<size_t>(caps->Get(i));
      if (kinds_[idx] != fb::ValueKind::Input)
        return InvalidFile(what(), ": value ", idx, " is not of kind Input");
      if (listed[idx]) return InvalidFile(what(), ": value ", idx, " is listed twice");
      listed[idx] = true;
      ++n_in;
    }
  }
  size_t kind_in = 0;
  for (fb::ValueKind k : kinds_) kind_in += k == fb::ValueKind::Input;
  if (kind_in != n_in)
    return InvalidFile(kind_in, " values have kind Input but the graph lists ", n_in, " inputs",
                       subgraph_ ? " and captures" : "");
  std::vector<bool> out_listed(num_values_, false);
  if (auto* outs = m_->outputs()) {
    for (flatbuffers::uoffset_t i = 0; i < outs->size(); ++i) {
      auto what = [&] { return StrCat("graph output ", i); };
      OM_TRY(CheckIndex(outs->Get(i), false), what());
      size_t idx = static_cast<size_t>(outs->Get(i));
      if (kinds_[idx] == fb::ValueKind::Activation)
        return InvalidFile(what(), ": value ", idx, " has kind Activation");
      if (packed_in_[idx] >= 0)
        return InvalidFile(what(), ": value ", idx, " is stored only in prepacked bytes (packed_in_node ",
                           packed_in_[idx], ")");
      out_listed[idx] = true;
    }
  }
  for (size_t i = 0; i < num_values_; ++i)
    if (kinds_[i] == fb::ValueKind::Output && !out_listed[i])
      return InvalidFile("value ", i, " has kind Output but is not a graph output");
  return Status::Ok();
}

Status Reader::CheckAttribute(const fb::Attribute* a,
                              const std::function<std::string()>& node_what) {
  auto what = [&] {
    return StrCat(node_what(), " attribute '", Str(a->name()), "' (table at file offset ", Off(a), ")");
  };
  if (!a->name() || a->name()->size() == 0) return InvalidFile(what(), ": empty attribute name");
  auto pool_cost = PoolCost(a->strings());
  if (!pool_cost.ok()) return pool_cost.status().WithContext(what() + " strings");
  OM_TRY(Charge(Cost(a->name()) + Cost(a->s()) + Cost(a->ints()) + Cost(a->floats()) +
                Cost(a->strings()) + *pool_cost + Cost(a->tensor_shape())),
         what());
  fb::AttrKind kind = a->kind();
  if (kind < fb::AttrKind::MIN || kind > fb::AttrKind::MAX)
    return InvalidFile(what(), ": unknown attribute kind ", static_cast<int>(kind));
  OM_TRY(CheckAligned(a->ints(), "ints"), what());
  if (kind == fb::AttrKind::Tensor) {
    if (!IsKnownDataType(a->tensor_dtype()))
      return InvalidFile(what(), ": unknown tensor dtype code ", a->tensor_dtype());
    uint64_t bytes = 0;
    OM_TRY(ShapeBytes(a->tensor_shape(), static_cast<DataType>(a->tensor_dtype()), &bytes), what());
    if (bytes != a->tensor_size())
      return InvalidFile(what(), ": tensor has ", a->tensor_size(), " bytes, its shape needs ", bytes);
    OM_TRY(CheckBlobRange(a->tensor_offset(), a->tensor_size()), what());
  }
  if (kind != fb::AttrKind::Graph && a->graph())
    return InvalidFile(what(), ": only Graph attributes carry a graph");
  if (kind == fb::AttrKind::Graph) {
    if (h_.format_version != kOmFormatVersionSubgraphs)
      return InvalidFile(what(), ": subgraphs need format version ", kOmFormatVersionSubgraphs);
    const Vector<uint8_t>* bytes = a->graph();
    if (!bytes || bytes->size() == 0) return InvalidFile(what(), ": Graph attribute without a graph");
    if (reinterpret_cast<uintptr_t>(bytes->data()) % 8 != 0)
      return InvalidFile(what(), ": the nested graph is not 8-byte aligned");
    if (depth_ + 1 > kMaxSubgraphDepth)
      return InvalidFile(what(), ": subgraphs nested deeper than ", kMaxSubgraphDepth, " levels");
    OM_TRY(Charge(Cost(bytes)), what());
    Reader sub(*this, bytes->data(), bytes->size());
    auto built = sub.Run();
    if (!built.ok()) return built.status().WithContext(what());
    subgraphs_[a] = std::move(built->graph);
  }
  return Status::Ok();
}

Status Reader::CheckNodes() {
  const OpRegistry& reg = OpRegistry::Global();
  std::vector<bool> produced(num_values_, false);
  std::vector<bool> packed_in_found(num_values_, false);
  const auto* nodes = m_->nodes();
  size_t nn = nodes ? nodes->size() : 0;
  for (size_t ni = 0; ni < nn; ++ni) {
    const fb::Node* n = nodes->Get(static_cast<flatbuffers::uoffset_t>(ni));
    std::function<std::string()> what = [&] { return NodeWhat(ni, n); };
    OM_TRY(Charge(Cost(n->name()) + Cost(n->domain()) + Cost(n->op_type()) + Cost(n->inputs()) +
                  Cost(n->outputs()) + Cost(n->attributes())),
           what());
    std::string op = Str(n->op_type()), domain = Str(n->domain());
    if (op.empty()) return InvalidFile(what(), ": empty op_type");
    if (!reg.Find(domain, op, n->opset())) {
      std::string full = domain.empty() ? op : domain + "::" + op;
      if (reg.FindAnyVersion(domain, op))
        return NotSupported(what(), ": op ", full, " is not supported at opset ", n->opset());
      return NotSupported(what(), ": op ", full, " is not supported by this build");
    }
    if (auto* ins = n->inputs()) {
      for (flatbuffers::uoffset_t k = 0; k < ins->size(); ++k) {
        int32_t idx = ins->Get(k);
        auto in_what = [&] { return StrCat(what(), " input ", k); };
        OM_TRY(CheckIndex(idx, true), in_what());
        if (idx >= 0 && !dynamic_ && kinds_[idx] == fb::ValueKind::Activation &&
            m_->values()->Get(idx)->arena_offset() < 0)
          return InvalidFile(in_what(), ": activation value ", idx, " has no arena offset");
        if (idx >= 0 && packed_in_[idx] >= 0) {
          // A weight without raw data: only kernels that rebuild it may read it.
          const int32_t a = ins->Get(0);
          const DataType input0 = a < 0 ? DataType::kUndefined : static_cast<DataType>(m_->values()->Get(a)->dtype());
          if (!PackedOnlyReader(CanonicalDomain(domain), op, k, n->prepacked_size(), input0))
            return InvalidFile(in_what(), ": value ", idx, " is stored only in prepacked bytes, which ", op,
                               " input ", k, n->prepacked_size() == 0 ? " of a node without prepacked bytes" : "",
                               " cannot use");
          if (static_cast<int32_t>(ni) == packed_in_[idx]) packed_in_found[idx] = true;
        }
      }
    }
    if (auto* outs = n->outputs()) {
      for (flatbuffers::uoffset_t k = 0; k < outs->size(); ++k) {
        int32_t idx = outs->Get(k);
        auto out_what = [&] { return StrCat(what(), " output ", k); };
        OM_TRY(CheckIndex(idx, true), out_what());
        if (idx < 0) continue;
        fb::ValueKind kind = kinds_[idx];
        if (kind != fb::ValueKind::Activation && kind != fb::ValueKind::Output)
          return InvalidFile(out_what(), ": value ", idx, " is a graph input or constant");
        if (produced[idx]) return InvalidFile(out_what(), ": value ", idx, " is produced twice");
        produced[idx] = true;
        if (!dynamic_ && kind == fb::ValueKind::Activation && m_->values()->Get(idx)->arena_offset() < 0)
          return InvalidFile(out_what(), ": activation value ", idx, " has no arena offset");
      }
    }
    if (auto* attrs = n->attributes()) {
      // Names are stored strictly sorted, which makes duplicates cheap to spot.
      std::string_view prev;
      for (flatbuffers::uoffset_t k = 0; k < attrs->size(); ++k) {
        const fb::Attribute* a = attrs->Get(k);
        OC_RETURN_IF_ERROR(CheckAttribute(a, what));
        std::string_view name(a->name()->data(), a->name()->size());
        if (k > 0 && name == prev)
          return InvalidFile(what(), ": attribute '", name, "' appears twice");
        if (k > 0 && name < prev)
          return InvalidFile(what(), ": attribute '", name, "' is out of order (names are sorted)");
        prev = name;
      }
    }
    OM_TRY(CheckBlobRange(n->prepacked_offset(), n->prepacked_size()), what() + " prepacked weights");
  }
  for (size_t i = 0; i < num_values_; ++i)
    if (kinds_[i] == fb::ValueKind::Output && !produced[i])
      return InvalidFile("value ", i, " has kind Output but no node produces it");
  for (size_t i = 0; i < num_values_; ++i)
    if (packed_in_[i] >= 0 && !packed_in_found[i])
      return InvalidFile("value ", i, " says it is stored in the prepacked bytes of node ", packed_in_[i],
                         ", which does not read it");
  if (!subgraph_ && (h_.flags & kOmFlagPackedOnlyWeights) && packed_only_values_ == 0)
    return InvalidFile("header flags 0x1 (packed-only weights) are set but no constant is stored that way");
  if (!subgraph_ && h_.format_version == kOmFormatVersionSubgraphs && subgraphs_.empty()) {
    // The writer uses version 3 only when it must: anything else is a damaged header.
    bool non_tensor = false;
    for (size_t i = 0; i < num_values_ && !non_tensor; ++i)
      non_tensor = m_->values()->Get(static_cast<flatbuffers::uoffset_t>(i))->type_kind() != 0;
    if (!non_tensor)
      return InvalidFile("format version ", kOmFormatVersionSubgraphs,
                         " but the graph has no subgraph and no sequence/optional value");
  }
  return Status::Ok();
}

std::vector<int64_t> Ints(const Vector<int64_t>* v) {
  return v ? std::vector<int64_t>(v->begin(), v->end()) : std::vector<int64_t>();
}

Expected<OmModel> Reader::Build() {
  auto g = std::make_shared<Graph>();
  g->name = Str(m_->name());
  g->producer_name = Str(m_->source_producer());
  g->ir_version = m_->ir_version();
  g->arena_size = m_->arena_size();
  g->arena_size_no_reuse = m_->arena_size_no_reuse();
  if (auto* ops = m_->opset_imports())
    for (const fb::OpsetImport* o : *ops) g->opset_imports[CanonicalDomain(Str(o->domain()))] = o->version();
  if (auto* meta = m_->metadata())
    for (const fb::KeyValue* kv : *meta) g->metadata[Str(kv->key())] = Str(kv->value());

  std::vector<Value*> vals(num_values_);
  for (size_t i = 0; i < num_values_; ++i) {
    const fb::Value* fv = m_->values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    Value* v = g->AddValue(Str(fv->name()));
    v->dtype = static_cast<DataType>(fv->dtype());
    v->has_shape = !fv->rank_unknown();
    v->shape = Ints(fv->shape());
    v->dim_params.assign(v->shape.size(), "");
    if (auto* dp = fv->dim_params(); dp && dp->size() == v->shape.size())
      for (flatbuffers::uoffset_t k = 0; k < dp->size(); ++k) v->dim_params[k] = PoolString(dp->Get(k));
    v->arena_offset = fv->arena_offset();
    v->kind = static_cast<ValueKind>(fv->type_kind());
    if (packed_in_[i] >= 0)
      v->constant = TensorData::View(storage_, nullptr, bytes_[i]);  // see Kernel::PrepackedInputs
    else if (kinds_[i] == fb::ValueKind::Constant)
      v->constant = TensorData::View(storage_, blob_ + fv->data_offset(), fv->data_size());
    vals[i] = v;
  }
  auto ref = [&](int32_t idx) { return idx < 0 ? nullptr : vals[idx]; };

  OmModel out;
  if (auto* nodes = m_->nodes()) {
    for (const fb::Node* fn : *nodes) {
      std::vector<Value*> ins, outs;
      if (fn->inputs()) for (int32_t idx : *fn->inputs()) ins.push_back(ref(idx));
      if (fn->outputs()) for (int32_t idx : *fn->outputs()) outs.push_back(ref(idx));
      Node* n = g->AddNode(Str(fn->op_type()), Str(fn->name()), std::move(ins), std::move(outs),
                           Str(fn->domain()));
      n->opset = fn->opset();
      if (auto* attrs = fn->attributes()) {
        for (const fb::Attribute* fa : *attrs) {
          Attribute a;
          switch (fa->kind()) {
            case fb::AttrKind::Int: a.kind = Attribute::Kind::kInt; a.i = fa->i(); break;
            case fb::AttrKind::Float: a.kind = Attribute::Kind::kFloat; a.f = fa->f(); break;
            case fb::AttrKind::String: a.kind = Attribute::Kind::kString; a.s = Str(fa->s()); break;
            case fb::AttrKind::Ints: a.kind = Attribute::Kind::kInts; a.ints = Ints(fa->ints()); break;
            case fb::AttrKind::Floats:
              a.kind = Attribute::Kind::kFloats;
              if (fa->floats()) a.floats.assign(fa->floats()->begin(), fa->floats()->end());
              break;
            case fb::AttrKind::Strings:
              a.kind = Attribute::Kind::kStrings;
              if (fa->strings()) for (int32_t k : *fa->strings()) a.strings.push_back(PoolString(k));
              break;
            case fb::AttrKind::Tensor:
              a.kind = Attribute::Kind::kTensor;
              a.tensor_dtype = static_cast<DataType>(fa->tensor_dtype());
              a.tensor_shape = Ints(fa->tensor_shape());
              a.tensor = TensorData::View(storage_, blob_ + fa->tensor_offset(), fa->tensor_size());
              break;
            case fb::AttrKind::Graph:
              a.kind = Attribute::Kind::kGraph;
              a.graph = subgraphs_.at(fa);
              break;
          }
          n->attrs[Str(fa->name())] = std::move(a);
        }
      }
      out.prepacked.emplace_back(blob_ + fn->prepacked_offset(), fn->prepacked_size());
    }
  }
  if (auto* ins = m_->inputs()) for (int32_t idx : *ins) g->inputs.push_back(vals[idx]);
  if (auto* outs = m_->outputs()) for (int32_t idx : *outs) g->outputs.push_back(vals[idx]);
  if (auto* caps = m_->captures()) for (int32_t idx : *caps) g->captures.push_back(vals[idx]);

  // Ordering and producer invariants (topological order, no use before definition).
  if (Status st = g->Verify(); !st.ok())
    return InvalidFile("graph section is inconsistent: ", st.message());

  out.storage = storage_;
  out.graph = std::move(g);
  out.format_version = h_.format_version;
  out.dynamic = dynamic_;
  out.producer_version = Str(m_->producer_version());
  out.target = h_.target;
  out.source_framework = Str(m_->source_framework());
  out.weights_size = h_.blob_size;
  out.packed_only_values = packed_only_values_;
  out.packed_only_bytes = packed_only_bytes_;
  out.file_size = h_.file_size;
  return out;
}

Expected<OmModel> Reader::Run() {
  const uint8_t* fbuf = fbuf_;
  if (fb_size_ < 8 || !fb::ModelBufferHasIdentifier(fbuf))
    return InvalidFile("graph section at file offset ", Off(fbuf),
                       " lacks the FlatBuffers file identifier \"OCOM\"");
  // Every table starts with a 4-byte offset, so an unshared section holds at
  // most fb_size / 4 tables; the cap bounds the verifier's work on shared ones
  // (see the conventions in om_schema.fbs). A subgraph's buffer is verified
  // on its own when its attribute is checked, after its bytes were charged to
  // the enclosing graph's budget, so nesting keeps the work linear.
  size_t max_tables = fb_size_ / 4 + 16;
  flatbuffers::Verifier verifier(fbuf, fb_size_, /*max_depth=*/64, max_tables);
  if (!fb::VerifyModelBuffer(verifier))
    return InvalidFile("graph section (file offsets [", Off(fbuf), ", ",
                       Off(fbuf) + fb_size_, ")) fails FlatBuffers verification");
  m_ = fb::GetModel(fbuf);
  pool_size_ = m_->string_pool() ? m_->string_pool()->size() : 0;
  budget_ = fb_size_;
  OC_RETURN_IF_ERROR(CheckHeaderFields());
  OC_RETURN_IF_ERROR(CheckValues());
  OC_RETURN_IF_ERROR(CheckGraphIO());
  OC_RETURN_IF_ERROR(CheckNodes());
  return Build();
}

}  // namespace

namespace {

// Checksums the body. For a file mapping (`release`), the pages of each chunk
// are dropped from this process once summed: the kernels read the pre-packed
// panels, not the raw weights they were made from, so pages nobody touches
// again then stay out of the resident set (and out of the peak) instead of all
// of the file becoming resident. Dropped pages fault back from the page cache.
uint32_t BodyCrc(const uint8_t* data, size_t begin, size_t size, bool release) {
  constexpr size_t kChunk = size_t{8} << 20;  // a multiple of any page size
  uint32_t crc = 0;
  for (size_t pos = begin; pos < size;) {
    const size_t chunk_begin = pos / kChunk * kChunk;
    const size_t end = std::min(size, chunk_begin + kChunk);
    crc = Crc32c(data + pos, end - pos, crc);
    if (release && end == chunk_begin + kChunk)
      ::madvise(const_cast<uint8_t*>(data) + chunk_begin, kChunk, MADV_DONTNEED);
    pos = end;
  }
  return crc;
}

Expected<OmModel> LoadOmChecked(std::shared_ptr<const void> storage, const uint8_t* data, size_t size,
                                bool check_target, bool release_pages) {
  OC_ASSIGN_OR_RETURN(OmHeader h, DecodeHeader(data, size));
  if (check_target) {
    Status st = CheckTargetCompatible(h.target, HostTarget());
    if (!st.ok()) return st.WithContext(StrCat("header target (file offset ", kOffTarget, ")"));
  }
  OC_RETURN_IF_ERROR(CheckLayout(h, size));
  uint32_t crc = BodyCrc(data, h.header_size, size, release_pages);
  if (crc != h.body_crc)
    return InvalidFile("checksum mismatch: CRC-32C of file offsets [", h.header_size, ", ", size,
                       ") is 0x", std::hex, crc, ", the header (offset ", std::dec, kOffBodyCrc,
                       ") says 0x", std::hex, h.body_crc, std::dec,
                       ": the file is corrupt or was modified");
  Reader reader(data, h, std::move(storage));
  return reader.Run();
}

}  // namespace

Expected<OmModel> LoadOmImpl(std::shared_ptr<const void> storage, const uint8_t* data,
                             size_t size, bool check_target) {
  return LoadOmChecked(std::move(storage), data, size, check_target, /*release_pages=*/false);
}

}  // namespace om_internal

namespace {

struct AlignedDelete {
  void operator()(const void* p) const { ::operator delete(const_cast<void*>(p), std::align_val_t(64)); }
};

}  // namespace

Expected<OmModel> LoadOmMemory(const void* data, size_t size, bool copy) {
  if (!data && size) return InvalidArgument("LoadOmMemory: data is null but size is ", size);
  // In-place use needs 64-byte alignment for the weights; otherwise take a copy.
  if (!copy && reinterpret_cast<uintptr_t>(data) % om_internal::kOmBlobAlign == 0) {
    std::shared_ptr<const void> view(data, [](const void*) {});
    return om_internal::LoadOmImpl(std::move(view), static_cast<const uint8_t*>(data), size, true);
  }
  void* mem = ::operator new(size ? size : 1, std::align_val_t(64), std::nothrow);
  if (!mem) return ResourceExhausted("cannot allocate ", size, " bytes to copy the .om");
  std::shared_ptr<const void> owned(mem, AlignedDelete());
  if (size) std::memcpy(mem, data, size);
  return om_internal::LoadOmImpl(std::move(owned), static_cast<const uint8_t*>(mem), size, true);
}

Expected<OmModel> LoadOmFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '", path, "': ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError("cannot stat '", path, "': ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'", path, "' is not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return InvalidFile("'", path, "' is empty, not a .om file");
  }
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED) return IoError("cannot mmap '", path, "': ", std::strerror(err));
  std::shared_ptr<const void> mapping(addr, [size](const void* p) {
    ::munmap(const_cast<void*>(p), size);
  });
  auto model = om_internal::LoadOmChecked(mapping, static_cast<const uint8_t*>(addr), size, true,
                                          /*release_pages=*/true);
  if (!model.ok()) return model.status().WithContext(StrCat("while loading '", path, "'"));
  return model;
}

}  // namespace oc
