#include "runtime/dynamic_gears.h"

#include <algorithm>
#include <cstdlib>

namespace oc {
namespace {

constexpr char kModeKey[] = "dynamic_mode";
constexpr char kGearsKey[] = "dynamic_gears";
constexpr char kShapesKey[] = "dynamic_gear_shapes";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

bool ParseDims(const std::string& text, std::vector<int64_t>* out) {
  out->clear();
  if (text.empty()) return true;
  for (const std::string& d : Split(text, ',')) {
    if (d.empty() || d.size() > 18 || d.find_first_not_of("0123456789-") != std::string::npos) return false;
    char* end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (*end != '\0') return false;
    out->push_back(v);
  }
  return true;
}

GearMode ModeFromName(const std::string& s) {
  if (s == "dynamic_batch_size") return GearMode::kBatch;
  if (s == "dynamic_image_size") return GearMode::kImageSize;
  if (s == "dynamic_dims") return GearMode::kDims;
  return GearMode::kNone;
}

// Checks a gear's shapes against the graph inputs: rank, fixed dims, and the
// -1 dims filled with values >= 1.
Status CheckGearShapes(const Graph& g, const std::vector<std::vector<int64_t>>& shapes, size_t gear) {
  if (shapes.size() != g.inputs.size())
    return InvalidFile("gear ", gear, " lists ", shapes.size(), " input shapes, the model has ", g.inputs.size(),
                       " inputs");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Value& in = *g.inputs[i];
    if (!in.has_shape || in.shape.size() != shapes[i].size())
      return InvalidFile("gear ", gear, ": input '", in.name, "' has shape ", in.ShapeString(), ", the gear gives rank ",
                         shapes[i].size());
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      int64_t want = in.shape[d], got = shapes[i][d];
      if (want >= 0 ? got != want : got < 1)
        return InvalidFile("gear ", gear, ": input '", in.name, "' dim ", d, " is ", got, " (model shape ",
                           in.ShapeString(), ")");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* GearModeName(GearMode mode) {
  switch (mode) {
    case GearMode::kBatch: return "dynamic_batch_size";
    case GearMode::kImageSize: return "dynamic_image_size";
    case GearMode::kDims: return "dynamic_dims";
    case GearMode::kNone: break;
  }
  return "";
}

Expected<GearSet> MakeGears(const Graph& graph, GearMode mode, const OrderedInputShapes& input_shape,
                            const std::vector<std::vector<int64_t>>& values) {
  const std::string flag = StrCat("--", GearModeName(mode));
  if (mode == GearMode::kNone) return InvalidArgument("no gear mode given");
  if (values.size() < kMinGears || values.size() > kMaxGears)
    return InvalidArgument(flag, " lists ", values.size(), " gears; between ", kMinGears, " and ", kMaxGears,
                           " are needed");
  for (size_t k = 0; k < values.size(); ++k) {
    for (int64_t v : values[k])
      if (v < 1) return InvalidArgument(flag, ": gear ", k, " has value ", v, " (every value must be >= 1)");
    for (size_t j = 0; j < k; ++j)
      if (values[j] == values[k]) return InvalidArgument(flag, ": gear ", k, " repeats gear ", j, " (", Join(values[k]), ")");
  }
  // Placeholders (input index in the graph, dim) in --input_shape order.
  std::vector<std::pair<size_t, size_t>> holes;
  for (const auto& [name, dims] : input_shape) {
    size_t idx = graph.inputs.size();
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (graph.inputs[i]->name == name) idx = i;
    if (idx == graph.inputs.size())
      return InvalidArgument("--input_shape names '", name, "', which is not an input of the model");
    size_t count = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] != -1) continue;
      ++count;
      if (mode == GearMode::kBatch && d != 0)
        return InvalidArgument(flag, ": input '", name, "' has -1 at dim ", d,
                               "; with dynamic batch only the first (batch) dim may be -1");
      holes.emplace_back(idx, d);
    }
    if (mode == GearMode::kImageSize && count != 0 && count != 2)
      return InvalidArgument(flag, ": input '", name, "' has ", count,
                             " dims of -1; with dynamic image size an input has two (height and width)");
  }
  if (holes.empty())
    return InvalidArgument(flag, " needs --input_shape with -1 for the dims that vary");
  for (const Value* in : graph.inputs) {
    bool listed = false;
    for (const auto& e : input_shape) listed |= e.first == in->name;
    if (!listed && !in->IsStatic())
      return InvalidArgument(flag, ": input '", in->name, "' has shape ", in->ShapeString(),
                             "; give all its dims in --input_shape (-1 only for the dims the gears set)");
  }
  GearSet set;
  set.mode = mode;
  set.values = values;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::vector<int64_t>& v = values[k];
    size_t want = mode == GearMode::kBatch ? 1 : mode == GearMode::kImageSize ? 2 : holes.size();
    if (v.size() != want)
      return InvalidArgument(flag, ": gear ", k, " (", Join(v), ") has ", v.size(), " values, expected ", want,
                             mode == GearMode::kDims ? " (one per -1 in --input_shape)" : "");
    std::vector<std::vector<int64_t>> shapes;
    for (const Value* in : graph.inputs) shapes.push_back(in->shape);
    for (size_t h = 0; h < holes.size(); ++h) {
      int64_t fill = mode == GearMode::kBatch ? v[0] : mode == GearMode::kDims ? v[h] : 0;
      if (mode == GearMode::kImageSize) {
        // The first -1 of an input is its height, the second its width.
        bool first = h == 0 || holes[h - 1].first != holes[h].first;
        fill = first ? v[0] : v[1];
      }
      shapes[holes[h].first][holes[h].second] = fill;
    }
    Status st = CheckGearShapes(graph, shapes, k);
    if (!st.ok()) return InvalidArgument(flag, ": ", st.message());
    set.shapes.push_back(std::move(shapes));
  }
  return set;
}

void StoreGears(Graph& graph, const GearSet& gears) {
  graph.metadata[kModeKey] = GearModeName(gears.mode);
  std::string values, shapes;
  for (size_t k = 0; k < gears.values.size(); ++k) {
    values += (k ? ";" : "") + Join(gears.values[k]);
    shapes += k ? ";" : "";
    for (size_t i = 0; i < gears.shapes[k].size(); ++i) shapes += (i ? "|" : "") + Join(gears.shapes[k][i]);
  }
  graph.metadata[kGearsKey] = values;
  graph.metadata[kShapesKey] = shapes;
}

Expected<GearSet> LoadGears(const Graph& graph) {
  GearSet set;
  auto mode = graph.metadata.find(kModeKey);
  auto values = graph.metadata.find(kGearsKey);
  auto shapes = graph.metadata.find(kShapesKey);
  if (mode == graph.metadata.end() && values == graph.metadata.end() && shapes == graph.metadata.end()) return set;
  if (mode == graph.metadata.end() || values == graph.metadata.end() || shapes == graph.metadata.end())
    return InvalidFile("model metadata has only some of the gear keys (", kModeKey, ", ", kGearsKey, ", ", kShapesKey,
                       ")");
  set.mode = ModeFromName(mode->second);
  if (set.mode == GearMode::kNone)
    return InvalidFile("model metadata ", kModeKey, " is '", mode->second, "' (expected dynamic_batch_size, ",
                       "dynamic_image_size or dynamic_dims)");
  std::vector<std::string> gv = Split(values->second, ';'), gs = Split(shapes->second, ';');
  if (gv.size() != gs.size() || gv.size() < kMinGears || gv.size() > kMaxGears)
    return InvalidFile("model metadata lists ", gv.size(), " gear values and ", gs.size(), " gear shapes (between ",
                       kMinGears, " and ", kMaxGears, " gears, the same number of each)");
  for (size_t k = 0; k < gv.size(); ++k) {
    std::vector<int64_t> v;
    if (!ParseDims(gv[k], &v) || v.empty())
      return InvalidFile("model metadata ", kGearsKey, ": gear ", k, " '", gv[k], "' is not a list of integers");
    size_t want = set.mode == GearMode::kBatch ? 1 : set.mode == GearMode::kImageSize ? 2 : v.size();
    if (v.size() != want)
      return InvalidFile("model metadata ", kGearsKey, ": gear ", k, " has ", v.size(), " values, ", mode->second,
                         " needs ", want);
    for (int64_t x : v)
      if (x < 1) return InvalidFile("model metadata ", kGearsKey, ": gear ", k, " has value ", x);
    for (size_t j = 0; j < set.values.size(); ++j)
      if (set.values[j] == v) return InvalidFile("model metadata ", kGearsKey, ": gear ", k, " repeats gear ", j);
    std::vector<std::string> ins = Split(gs[k], '|');
    std::vector<std::vector<int64_t>> shape;
    for (const std::string& t : ins) {
      std::vector<int64_t> dims;
      if (!ParseDims(t, &dims))
        return InvalidFile("model metadata ", kShapesKey, ": gear ", k, " shape '", t, "' is not a list of integers");
      shape.push_back(std::move(dims));
    }
    if (graph.inputs.empty() && shape.size() == 1 && shape[0].empty()) shape.clear();
    OC_RETURN_IF_ERROR(CheckGearShapes(graph, shape, k).WithContext("model metadata"));
    set.values.push_back(std::move(v));
    set.shapes.push_back(std::move(shape));
  }
  return set;
}

}  // namespace oc
