#include "io_types.h"

#include <algorithm>
#include <sstream>

#include "passes/passes.h"
#include <vector>

namespace oc::atc {
namespace {

std::optional<DataType> TypeOf(const std::string& t) {
  if (t == "FP32") return DataType::kFloat32;
  if (t == "FP16") return DataType::kFloat16;
  if (t == "UINT8") return DataType::kUInt8;
  return std::nullopt;
}

std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ';');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// A Cast at the graph's edge; returns the new edge value. It takes v's name
// (v, now internal, gets a new one) unless `keep_name` says v must keep it (a
// graph input that is also an output, an output listed twice).
Value* CastEdge(Graph& g, Value* v, DataType to, bool output, bool keep_name = false) {
  const std::string name = v->name;
  if (!keep_name) g.RenameValue(v, g.UniqueName(name + (output ? "_before_output_type" : "_from_fp16")));
  Value* edge = NewValueLike(g, *v, name + "_" + DataTypeName(to), to);
  if (!keep_name) g.RenameValue(edge, name);
  if (output) AddCast(g, v, edge, to, "output_type_cast");
  else AddCast(g, edge, v, DataType::kFloat32, "input_fp16_cast");
  return edge;
}

}  // namespace

std::optional<AtcError> ApplyIoTypes(Graph& g, const std::string& output_type, const std::string& input_fp16_nodes) {
  for (const std::string& name : Items(input_fp16_nodes)) {
    size_t k = 0;
    while (k < g.inputs.size() && g.inputs[k]->name != name) ++k;
    if (k == g.inputs.size()) return Invalid("input_fp16_nodes", name, "'" + name + "' is not an input of the model");
    if (g.IsGraphOutput(g.inputs[k]))
      return Invalid("input_fp16_nodes", name, "input '" + name + "' is also a model output");
    if (g.inputs[k]->dtype != DataType::kFloat32)
      return Invalid("input_fp16_nodes", name, "input '" + name + "' is " + DataTypeName(g.inputs[k]->dtype) +
                                                   ", not float32");
    Value* edge = CastEdge(g, g.inputs[k], DataType::kFloat16, false);
    g.inputs[k] = edge;
  }
  if (!output_type.empty()) {
    std::vector<std::pair<size_t, DataType>> casts;  // graph output index, type
    if (output_type.find(':') == std::string::npos) {
      auto t = TypeOf(output_type);
      if (!t) return Invalid("output_type", output_type, "expected FP32, FP16 or UINT8");
      for (size_t k = 0; k < g.outputs.size(); ++k) casts.emplace_back(k, *t);
    } else {
      for (const std::string& item : Items(output_type)) {
        const size_t colon = item.rfind(':');
        auto t = colon == std::string::npos ? std::nullopt : TypeOf(item.substr(colon + 1));
        if (!t) return Invalid("output_type", item, "expected node:index:TYPE or tensor:TYPE with FP32, FP16 or UINT8");
        const std::string spec = item.substr(0, colon);
        const Value* target = g.FindValue(spec);
        const size_t c2 = spec.rfind(':');
        if (c2 != std::string::npos) {
          const std::string node = spec.substr(0, c2), index = spec.substr(c2 + 1);
          for (const auto& n : g.nodes())
            if (n->name == node && index.find_first_not_of("0123456789") == std::string::npos && !index.empty() &&
                index.size() < 9 && std::stoul(index) < n->outputs.size())
              target = n->outputs[std::stoul(index)];
        }
        size_t k = 0;
        while (k < g.outputs.size() && g.outputs[k] != target) ++k;
        if (!target || k == g.outputs.size())
          return Invalid("output_type", item, "'" + spec + "' is not a model output (node:index or tensor name)");
        casts.emplace_back(k, *t);
      }
    }
    std::vector<const Value*> done;
    for (const auto& [k, t] : casts) {
      Value* v = g.outputs[k];
      if (v->dtype == t) continue;
      if (v->dtype != DataType::kFloat32 && v->dtype != DataType::kFloat16)
        return Invalid("output_type", output_type, "output '" + v->name + "' is " + DataTypeName(v->dtype) +
                                                       ": only float outputs can change type");
      const bool keep = g.IsGraphInput(v) || std::count(done.begin(), done.end(), v) > 0;
      done.push_back(v);
      if (t == DataType::kUInt8) {
        // Saturating, as an image or mask output wants: Clip to 0..255 in float32, then Cast (truncating).
        auto bound = [&](float f) {
          return g.AddConstant(g.UniqueName("output_type_bound"), DataType::kFloat32, {}, TensorData::Copy(&f, sizeof f));
        };
        Value* src = v;
        if (v->dtype == DataType::kFloat16) {  // Clip's bounds share the input's type
          src = NewValueLike(g, *v, v->name + "_fp32", DataType::kFloat32);
          AddCast(g, v, src, DataType::kFloat32, "output_type_cast");
        }
        Value* clipped = NewValueLike(g, *v, v->name + "_clipped", DataType::kFloat32);
        Node* clip = g.AddNode("Clip", g.UniqueName("output_type_clip"), {src, bound(0.f), bound(255.f)}, {clipped});
        clip->opset = 13;
        // The Cast's output takes the name (or a fresh one) as for other types.
        Value* edge = CastEdge(g, clipped, t, true, true);
        if (!keep) {
          const std::string name = v->name;
          g.RenameValue(v, g.UniqueName(name + "_before_output_type"));
          g.RenameValue(edge, name);
        }
        g.outputs[k] = edge;
        continue;
      }
      g.outputs[k] = CastEdge(g, v, t, true, keep);
    }
  }
  if (Status st = g.TopologicalSort(); !st.ok()) return AtcError{"E12001", st.message()};
  return std::nullopt;
}

}  // namespace oc::atc
