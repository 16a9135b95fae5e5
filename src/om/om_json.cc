// OmToJson (atc --mode=1) and OmSummary (atc --mode=6): views of a loaded .om.
// The JSON carries the full structure but never the weight bytes; weights are
// given by their blob offset and size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "om/om_file.h"
#include "om/om_format.h"

namespace oc {
namespace {

using om_internal::JsonString;

std::string JsonFloat(double f) {
  if (std::isnan(f)) return "\"nan\"";
  if (std::isinf(f)) return f > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", f);
  return buf;
}

template <typename T, typename F>
std::string JsonArray(const std::vector<T>& items, F&& fmt) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ",";
    s += fmt(items[i]);
  }
  return s + "]";
}

std::string IntArray(const std::vector<int64_t>& v) {
  return JsonArray(v, [](int64_t x) { return std::to_string(x); });
}

const char* KindName(const Graph& g, const Value& v) {
  if (v.constant) return "constant";
  if (g.IsGraphInput(&v)) return "input";
  if (g.IsGraphOutput(&v)) return "output";
  return "activation";
}

// Locates weights inside the file image so the dump can give blob offsets.
class BlobLocator {
 public:
  explicit BlobLocator(const OmModel& m) {
    if (!m.storage || m.file_size < om_internal::kOmHeaderSize) return;
    const auto* base = static_cast<const uint8_t*>(m.storage.get());
    uint64_t off = om_internal::LoadLE64(base + om_internal::kOffBlobOffset);
    if (off > m.file_size) return;
    begin_ = base + off;
    size_ = m.file_size - off;
  }
  // ,"<prefix>offset":N,"<prefix>size":M  (offset omitted when not in the blob)
  std::string Fields(const std::string& prefix, const uint8_t* p, size_t n) const {
    std::string s;
    if (begin_ && p >= begin_ && p <= begin_ + size_)
      s += StrCat(",", JsonString(prefix + "offset"), ":", p - begin_);
    return s + StrCat(",", JsonString(prefix + "size"), ":", n);
  }

 private:
  const uint8_t* begin_ = nullptr;
  uint64_t size_ = 0;
};

std::string AttrJson(const Attribute& a, const BlobLocator& blob) {
  switch (a.kind) {
    case Attribute::Kind::kInt: return StrCat("{\"type\":\"int\",\"value\":", a.i, "}");
    case Attribute::Kind::kFloat: return StrCat("{\"type\":\"float\",\"value\":", JsonFloat(a.f), "}");
    case Attribute::Kind::kString: return StrCat("{\"type\":\"string\",\"value\":", JsonString(a.s), "}");
    case Attribute::Kind::kInts: return StrCat("{\"type\":\"ints\",\"value\":", IntArray(a.ints), "}");
    case Attribute::Kind::kFloats:
      return StrCat("{\"type\":\"floats\",\"value\":",
                    JsonArray(a.floats, [](float f) { return JsonFloat(f); }), "}");
    case Attribute::Kind::kStrings:
      return StrCat("{\"type\":\"strings\",\"value\":",
                    JsonArray(a.strings, [](const std::string& s) { return JsonString(s); }), "}");
    case Attribute::Kind::kTensor:
      return StrCat("{\"type\":\"tensor\",\"dtype\":", JsonString(DataTypeName(a.tensor_dtype)),
                    ",\"shape\":", IntArray(a.tensor_shape),
                    blob.Fields("data_", a.tensor.data(), a.tensor.size()), "}");
    case Attribute::Kind::kGraph:
      // A summary; the nested graph's own JSON would repeat the whole format.
      return a.graph ? StrCat("{\"type\":\"graph\",\"name\":", JsonString(a.graph->name), ",\"nodes\":",
                              a.graph->nodes().size(), ",\"captures\":", a.graph->captures.size(), "}")
                     : "null";
    case Attribute::Kind::kGraphs:
      return StrCat("{\"type\":\"graphs\",\"count\":", a.graphs.size(), "}");
  }
  return "null";
}

std::string ValueName(const Value* v) { return v ? JsonString(v->name) : "null"; }

}  // namespace

std::string OmToJson(const OmModel& model) {
  std::ostringstream os;
  BlobLocator blob(model);
  os << "{\n";
  os << "  \"format_version\": " << model.format_version << ",\n";
  if (model.dynamic) os << "  \"dynamic\": true,\n";
  os << "  \"producer_version\": " << JsonString(model.producer_version) << ",\n";
  os << "  \"target\": " << JsonString(model.target) << ",\n";
  os << "  \"source_framework\": " << JsonString(model.source_framework) << ",\n";
  os << "  \"file_size\": " << model.file_size << ",\n";
  os << "  \"weights_size\": " << model.weights_size;
  if (!model.graph) {
    os << "\n}\n";
    return os.str();
  }
  const Graph& g = *model.graph;
  os << ",\n  \"graph\": {\n";
  os << "    \"name\": " << JsonString(g.name) << ",\n";
  os << "    \"source_producer\": " << JsonString(g.producer_name) << ",\n";
  os << "    \"ir_version\": " << g.ir_version << ",\n";
  os << "    \"opset_imports\": [";
  bool first = true;
  for (const auto& [d, v] : g.opset_imports) {
    os << (first ? "" : ", ") << "{\"domain\": " << JsonString(d) << ", \"version\": " << v << "}";
    first = false;
  }
  os << "],\n    \"metadata\": {";
  first = true;
  for (const auto& [k, v] : g.metadata) {
    os << (first ? "" : ", ") << JsonString(k) << ": " << JsonString(v);
    first = false;
  }
  os << "},\n";
  os << "    \"arena_size\": " << g.arena_size << ",\n";
  os << "    \"arena_size_no_reuse\": " << g.arena_size_no_reuse << ",\n";
  os << "    \"inputs\": " << JsonArray(g.inputs, ValueName) << ",\n";
  os << "    \"outputs\": " << JsonArray(g.outputs, ValueName) << ",\n";
  os << "    \"values\": [";
  for (size_t i = 0; i < g.values().size(); ++i) {
    const Value& v = *g.values()[i];
    os << (i ? "," : "") << "\n      {\"index\": " << i << ", \"name\": " << JsonString(v.name)
       << ", \"kind\": \"" << KindName(g, v) << "\", \"dtype\": " << JsonString(DataTypeName(v.dtype))
       << ", \"shape\": " << (v.has_shape ? IntArray(v.shape) : std::string("null"));
    bool any_param = false;
    for (const std::string& p : v.dim_params) any_param |= !p.empty();
    if (any_param)
      os << ", \"dim_params\": "
         << JsonArray(v.dim_params, [](const std::string& s) { return JsonString(s); });
    if (v.constant && !v.constant->data()) {
      // Stored only in prepacked bytes: the first node reading it (the writer's choice too).
      size_t reader = 0;
      while (reader < g.nodes().size() &&
             std::find(g.nodes()[reader]->inputs.begin(), g.nodes()[reader]->inputs.end(), &v) ==
                 g.nodes()[reader]->inputs.end())
        ++reader;
      os << ", \"data_size\": " << v.constant->size() << ", \"packed_in_node\": " << reader;
    } else if (v.constant) {
      os << blob.Fields("data_", v.constant->data(), v.constant->size());
    } else {
      os << ", \"arena_offset\": " << v.arena_offset;
    }
    os << "}";
  }
  os << "\n    ],\n    \"nodes\": [";
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    os << (i ? "," : "") << "\n      {\"index\": " << i << ", \"name\": " << JsonString(n.name)
       << ", \"domain\": " << JsonString(n.domain) << ", \"op_type\": " << JsonString(n.op_type)
       << ", \"opset\": " << n.opset << ", \"inputs\": " << JsonArray(n.inputs, ValueName)
       << ", \"outputs\": " << JsonArray(n.outputs, ValueName) << ", \"attributes\": {";
    bool first_attr = true;
    for (const auto& [k, a] : n.attrs) {
      os << (first_attr ? "" : ", ") << JsonString(k) << ": " << AttrJson(a, blob);
      first_attr = false;
    }
    os << "}";
    if (i < model.prepacked.size() && !model.prepacked[i].empty())
      os << blob.Fields("prepacked_", model.prepacked[i].data(), model.prepacked[i].size());
    os << "}";
  }
  os << "\n    ]\n  }\n}\n";
  return os.str();
}

std::string OmSummary(const OmModel& model) {
  std::ostringstream os;
  os << "format version:   " << model.format_version << "\n";
  os << "producer version: OpenCANN " << model.producer_version << "\n";
  os << "target:           " << model.target << "\n";
  os << "source framework: " << model.source_framework << "\n";
  if (!model.graph) return os.str();
  const Graph& g = *model.graph;
  os << "model name:       " << g.name << "\n";
  auto io = [&](const char* title, const std::vector<Value*>& vs) {
    os << title << " (" << vs.size() << "):\n";
    for (size_t i = 0; i < vs.size(); ++i)
      os << "  [" << i << "] " << vs[i]->name << ": " << DataTypeName(vs[i]->dtype) << " "
         << vs[i]->ShapeString() << "\n";
  };
  io("inputs", g.inputs);
  io("outputs", g.outputs);
  std::map<std::string, int> by_op;
  for (const auto& n : g.nodes())
    ++by_op[n->domain.empty() ? n->op_type : n->domain + "::" + n->op_type];
  os << "nodes:            " << g.nodes().size() << "\n";
  for (const auto& [op, count] : by_op) os << "  " << op << ": " << count << "\n";
  if (model.dynamic)
    os << "arena size:       planned at run time per input shape (the model has unknown dims)\n";
  else os << "arena size:       " << g.arena_size << " bytes (without reuse: ";
  if (model.dynamic) {
  } else if (g.arena_size_no_reuse >= 0) os << g.arena_size_no_reuse << " bytes)\n";
  else os << "unknown)\n";
  size_t prepacked = 0;
  for (const auto& p : model.prepacked) prepacked += p.size();
  os << "weights size:     " << model.weights_size << " bytes (prepacked: " << prepacked
     << " bytes)\n";
  if (model.packed_only_values)
    os << "stored only prepacked: " << model.packed_only_values << " weights, " << model.packed_only_bytes
       << " raw bytes not stored\n";
  os << "file size:        " << model.file_size << " bytes\n";
  // Compile-time facts the run time acts on (atc's gears, shape ranges, AIPP, single-op type).
  static const std::pair<const char*, const char*> kShown[] = {
      {"dynamic_mode", "gears (flag):     "},       {"dynamic_gears", "gears:            "},
      {"input_shape_range", "shape ranges:     "}, {"aipp", "aipp (input:fmt): "},
      {"single_op_type", "single operator:  "}};
  for (const auto& [key, label] : kShown)
    if (auto it = g.metadata.find(key); it != g.metadata.end()) os << label << it->second << "\n";
  return os.str();
}

}  // namespace oc
