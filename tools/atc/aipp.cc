#include "aipp.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace oc::atc {
namespace {

AtcError Bad(const std::string& path, const std::string& what) {
  return {"E10001", "--insert_op_conf '" + path + "': " + what};
}

// Words, numbers and the punctuation { } :, with # comments removed.
std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  bool comment = false;
  for (char c : text) {
    if (comment) {
      if (c == '\n') comment = false;
      continue;
    }
    if (c == '#') {
      flush();
      comment = true;
    } else if (c == '{' || c == '}' || c == ':') {
      flush();
      out.push_back(std::string(1, c));
    } else if (std::isspace(static_cast<unsigned char>(c)) || c == '"') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

bool ToInt(const std::string& s, int* v) {
  char* end = nullptr;
  long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || x < -100000 || x > 100000) return false;
  *v = static_cast<int>(x);
  return true;
}

bool ToFloat(const std::string& s, float* v) {
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(x)) return false;
  *v = static_cast<float>(x);
  return true;
}

bool ToBool(const std::string& s, bool* v) {
  if (s == "true" || s == "1") return *v = true, true;
  if (s == "false" || s == "0") return *v = false, true;
  return false;
}

std::optional<std::string> Set(AippConfig& c, const std::string& key, const std::string& value) {
  static const std::map<std::string, std::string> kUnsupported = {
      {"padding", "padding"}, {"left_padding_size", "padding"}, {"right_padding_size", "padding"},
      {"top_padding_size", "padding"}, {"bottom_padding_size", "padding"}, {"padding_value", "padding"},
      {"resize", "resizing"}, {"resize_output_w", "resizing"}, {"resize_output_h", "resizing"},
      {"ax_swap_switch", "the RGBA/ARGB swap"}, {"single_line_mode", "single-line mode"},
      {"max_src_image_size", "dynamic AIPP"}, {"support_rotation", "rotation"}};
  auto expect_int = [&](int* dst) -> std::optional<std::string> {
    if (!ToInt(value, dst)) return key + ": '" + value + "' is not an integer";
    return std::nullopt;
  };
  auto expect_float = [&](float* dst) -> std::optional<std::string> {
    if (!ToFloat(value, dst)) return key + ": '" + value + "' is not a number";
    return std::nullopt;
  };
  auto expect_bool = [&](bool* dst) -> std::optional<std::string> {
    if (!ToBool(value, dst)) return key + ": '" + value + "' is not true or false";
    return std::nullopt;
  };
  if (key == "aipp_mode") {
    if (value == "dynamic") return std::string("aipp_mode dynamic is not supported yet (static only)");
    if (value != "static") return "aipp_mode: '" + value + "' is not static or dynamic";
    return std::nullopt;
  }
  if (key == "input_format") {
    if (value != "RGB888_U8" && value != "YUV420SP_U8" && value != "YUV400_U8")
      return "input_format " + value + " is not supported (RGB888_U8, YUV420SP_U8 and YUV400_U8 are)";
    c.input_format = value;
    return std::nullopt;
  }
  if (auto it = kUnsupported.find(key); it != kUnsupported.end()) {
    bool off = false;
    float zero = 1;
    if ((ToBool(value, &off) && !off) || (ToFloat(value, &zero) && zero == 0)) return std::nullopt;  // off: fine
    return key + ": " + it->second + " is not supported yet";
  }
  if (key == "related_input_rank") return expect_int(&c.related_input_rank);
  if (key == "src_image_size_w") return expect_int(&c.src_image_size_w);
  if (key == "src_image_size_h") return expect_int(&c.src_image_size_h);
  if (key == "crop") return expect_bool(&c.crop);
  if (key == "load_start_pos_w") return expect_int(&c.load_start_pos_w);
  if (key == "load_start_pos_h") return expect_int(&c.load_start_pos_h);
  if (key == "crop_size_w") return expect_int(&c.crop_size_w);
  if (key == "crop_size_h") return expect_int(&c.crop_size_h);
  if (key == "csc_switch") return expect_bool(&c.csc_switch);
  if (key == "rbuv_swap_switch") return expect_bool(&c.rbuv_swap_switch);
  if (key.rfind("matrix_r", 0) == 0 && key.size() == 11 && key[9] == 'c' && key[8] >= '0' && key[8] <= '2' &&
      key[10] >= '0' && key[10] <= '2')
  {
    c.matrix_set = true;
    return expect_int(&c.matrix[key[8] - '0'][key[10] - '0']);
  }
  for (int k = 0; k < 3; ++k) {
    if (key == "input_bias_" + std::to_string(k)) return expect_int(&c.input_bias[k]);
    if (key == "output_bias_" + std::to_string(k)) return expect_int(&c.output_bias[k]);
  }
  for (int k = 0; k < 4; ++k) {
    if (key == "mean_chn_" + std::to_string(k)) return expect_float(&c.mean_chn[k]);
    if (key == "min_chn_" + std::to_string(k)) return expect_float(&c.min_chn[k]);
    if (key == "var_reci_chn_" + std::to_string(k)) return expect_float(&c.var_reci_chn[k]);
  }
  return "unknown parameter '" + key + "'";
}

// ---- Graph building ---------------------------------------------------------------------------

class Builder {
 public:
  explicit Builder(Graph& g) : g_(g) {}
  Value* Node1(const std::string& op, std::vector<Value*> ins, int opset = 18) {
    Value* out = g_.AddValue(g_.UniqueName("aipp_" + op));
    Node* n = g_.AddNode(op, g_.UniqueName("aipp_" + op), std::move(ins), {out});
    n->opset = opset;
    last_ = n;
    return out;
  }
  Node* last() const { return last_; }
  Value* Ints(const std::vector<int64_t>& v) {
    return g_.AddConstant(g_.UniqueName("aipp_const"), DataType::kInt64, {static_cast<int64_t>(v.size())},
                          TensorData::Copy(v.data(), v.size() * sizeof(int64_t)));
  }
  Value* Floats(const std::vector<float>& v, std::vector<int64_t> shape) {
    return g_.AddConstant(g_.UniqueName("aipp_const"), DataType::kFloat32, std::move(shape),
                          TensorData::Copy(v.data(), v.size() * sizeof(float)));
  }
  Value* Slice(Value* x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes) {
    return Node1("Slice", {x, Ints(starts), Ints(ends), Ints(axes)});
  }
  Value* Reshape(Value* x, const std::vector<int64_t>& shape) { return Node1("Reshape", {x, Ints(shape)}); }
  Value* Cast(Value* x, DataType to) {
    Value* y = Node1("Cast", {x});
    last_->SetInt("to", static_cast<int64_t>(to));
    return y;
  }

 private:
  Graph& g_;
  Node* last_ = nullptr;
};

}  // namespace

std::optional<AtcError> ParseAippConfig(const std::string& path, std::vector<AippConfig>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return AtcError{"E11001", "cannot read --insert_op_conf '" + path + "'"};
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<std::string> t = Tokens(ss.str());
  size_t i = 0;
  while (i < t.size()) {
    if (t[i] != "aipp_op" || i + 1 >= t.size() || t[i + 1] != "{")
      return Bad(path, "expected 'aipp_op {', found '" + t[i] + "'");
    i += 2;
    AippConfig c;
    while (i < t.size() && t[i] != "}") {
      if (i + 2 >= t.size() || t[i + 1] != ":") return Bad(path, "expected 'name : value' at '" + t[i] + "'");
      if (auto err = Set(c, t[i], t[i + 2])) return Bad(path, *err);
      i += 3;
    }
    if (i >= t.size()) return Bad(path, "an aipp_op block is not closed with '}'");
    ++i;
    if (c.input_format.empty()) return Bad(path, "input_format is required in every aipp_op");
    for (const AippConfig& other : *out)
      if (other.related_input_rank == c.related_input_rank)
        return Bad(path, "two aipp_op blocks for input " + std::to_string(c.related_input_rank));
    out->push_back(c);
  }
  if (out->empty()) return Bad(path, "no aipp_op block");
  return std::nullopt;
}

std::optional<AtcError> InsertAipp(Graph& g, const std::vector<AippConfig>& configs) {
  std::string summary;
  for (const AippConfig& c : configs) {
    const std::string where = "AIPP for input " + std::to_string(c.related_input_rank);
    if (c.related_input_rank < 0 || static_cast<size_t>(c.related_input_rank) >= g.inputs.size())
      return AtcError{"E10001", where + ": the model has " + std::to_string(g.inputs.size()) + " inputs"};
    Value* model_in = g.inputs[c.related_input_rank];
    if (!model_in->IsStatic() || model_in->shape.size() != 4 || model_in->dtype != DataType::kFloat32)
      return AtcError{"E10001", where + ": the input '" + model_in->name + "' must be a float32 NCHW tensor of known "
                                "shape (give --input_shape); it is " + std::string(DataTypeName(model_in->dtype)) +
                                " " + model_in->ShapeString()};
    const int64_t n = model_in->shape[0], ch = model_in->shape[1], h = model_in->shape[2], w = model_in->shape[3];
    const bool yuv420 = c.input_format == "YUV420SP_U8", gray = c.input_format == "YUV400_U8";
    const int64_t want_c = gray ? 1 : 3;
    if (ch != want_c)
      return AtcError{"E10001", where + ": " + c.input_format + " gives " + std::to_string(want_c) +
                                " channels, the input '" + model_in->name + "' has " + std::to_string(ch)};
    if (gray && (c.csc_switch || c.rbuv_swap_switch))
      return AtcError{"E10001", where + ": YUV400_U8 has one channel: csc_switch and rbuv_swap_switch must be false"};
    const int64_t out_h = c.crop && c.crop_size_h ? c.crop_size_h : h, out_w = c.crop && c.crop_size_w ? c.crop_size_w : w;
    if (out_h != h || out_w != w)
      return AtcError{"E10001", where + ": the crop is " + std::to_string(out_w) + "x" + std::to_string(out_h) +
                                " (w x h) but the model input is " + std::to_string(w) + "x" + std::to_string(h) +
                                " (resizing is not supported)"};
    const int64_t src_h = c.src_image_size_h ? c.src_image_size_h : h, src_w = c.src_image_size_w ? c.src_image_size_w : w;
    if (!c.crop && (src_h != h || src_w != w))
      return AtcError{"E10001", where + ": the source image is " + std::to_string(src_w) + "x" + std::to_string(src_h) +
                                " (w x h) but the model input is " + std::to_string(w) + "x" + std::to_string(h) +
                                "; without crop they must agree (resizing is not supported)"};
    const int64_t y0 = c.crop ? c.load_start_pos_h : 0, x0 = c.crop ? c.load_start_pos_w : 0;
    if (y0 < 0 || x0 < 0 || y0 + out_h > src_h || x0 + out_w > src_w)
      return AtcError{"E10001", where + ": the crop window (" + std::to_string(x0) + "," + std::to_string(y0) + ") + " +
                                std::to_string(out_w) + "x" + std::to_string(out_h) + " leaves the " +
                                std::to_string(src_w) + "x" + std::to_string(src_h) + " source image"};
    if (yuv420 && (src_h % 2 || src_w % 2 || y0 % 2 || x0 % 2))
      return AtcError{"E10001", where + ": YUV420SP_U8 needs even image sizes and crop offsets"};

    // The new uint8 input: NHWC, or the NV12/NV21 buffer as rows for YUV420SP.
    // The uint8 image keeps the input's name (applications look inputs up by
    // name); the float tensor AIPP produces takes a new one.
    const std::string input_name = model_in->name;
    g.RenameValue(model_in, g.UniqueName(input_name + "_after_aipp"));
    Value* img = g.AddValue(input_name);
    img->dtype = DataType::kUInt8;
    img->has_shape = true;
    img->shape = yuv420 ? std::vector<int64_t>{n, src_h * 3 / 2, src_w, 1} : std::vector<int64_t>{n, src_h, src_w, want_c};
    img->dim_params.assign(4, "");
    Builder b(g);
    Value* x;
    if (yuv420) {
      // Y plane, then interleaved chroma at half resolution, repeated over 2x2 blocks.
      Value* y = b.Slice(img, {0}, {src_h}, {1});
      Value* uv = b.Slice(img, {src_h}, {src_h * 3 / 2}, {1});
      uv = b.Reshape(uv, {n, src_h / 2, 1, src_w / 2, 1, 2});
      uv = b.Node1("Expand", {uv, b.Ints({n, src_h / 2, 2, src_w / 2, 2, 2})});
      uv = b.Reshape(uv, {n, src_h, src_w, 2});
      x = b.Node1("Concat", {y, uv});
      b.last()->SetInt("axis", 3);
    } else {
      x = img;
    }
    if (c.rbuv_swap_switch) {  // R<->B for RGB, U<->V for YUV
      x = b.Node1("Gather", {x, b.Ints(yuv420 ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{2, 1, 0})});
      b.last()->SetInt("axis", 3);
    }
    if (c.crop && (y0 || x0 || out_h != src_h || out_w != src_w)) x = b.Slice(x, {y0, x0}, {y0 + out_h, x0 + out_w}, {1, 2});
    x = b.Cast(x, DataType::kFloat32);
    if (c.csc_switch) {
      // YUV input: RGB = (M (p - input_bias)) >> 8; RGB input: YUV = ((M p) >> 8) + output_bias; clipped to 0..255.
      const bool from_yuv = c.input_format != "RGB888_U8";
      if (from_yuv)
        x = b.Node1("Sub", {x, b.Floats({float(c.input_bias[0]), float(c.input_bias[1]), float(c.input_bias[2])}, {3})});
      // GE's defaults: YUV -> BGR for YUV inputs (the struct's), RGB -> YUV for RGB inputs.
      static const int kRgbToYuv[3][3] = {{66, 129, 25}, {-38, -74, 112}, {112, -94, -18}};
      std::vector<float> m(9);
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k)
          m[r * 3 + k] = static_cast<float>(!from_yuv && !c.matrix_set ? kRgbToYuv[r][k] : c.matrix[r][k]);
      // sum_k m[r][k] * p[k] as Mul + ReduceSum, not MatMul: exact in float32
      // (integers below 2^24) and kept out of the bf16 precision modes, which
      // take MatMul. Ascend's AIPP is integer hardware whatever the mode.
      x = b.Reshape(x, {n, out_h, out_w, 1, 3});
      x = b.Node1("Mul", {x, b.Floats(m, {3, 3})});
      x = b.Node1("ReduceSum", {x, b.Ints({4})});
      b.last()->SetInt("keepdims", 0);
      x = b.Node1("Div", {x, b.Floats({256.f}, {})});
      x = b.Node1("Floor", {x});
      if (!from_yuv)
        x = b.Node1("Add", {x, b.Floats({float(c.output_bias[0]), float(c.output_bias[1]), float(c.output_bias[2])}, {3})});
      x = b.Node1("Clip", {x, b.Floats({0.f}, {}), b.Floats({255.f}, {})});
    }
    // (p - mean - min) * var_reci, per channel.
    std::vector<float> sub, mul;
    for (int64_t k = 0; k < want_c; ++k) {
      sub.push_back(c.mean_chn[k] + c.min_chn[k]);
      mul.push_back(c.var_reci_chn[k]);
    }
    x = b.Node1("Sub", {x, b.Floats(sub, {want_c})});
    x = b.Node1("Mul", {x, b.Floats(mul, {want_c})});
    // NHWC -> NCHW, into the original input's consumers.
    g.inputs[c.related_input_rank] = img;
    Node* t = g.AddNode("Transpose", g.UniqueName("aipp_Transpose"), {x}, {model_in});
    t->opset = 18;
    t->SetInts("perm", {0, 3, 1, 2});
    if (!summary.empty()) summary += ';';
    summary += std::to_string(c.related_input_rank);
    summary += ':';
    summary += c.input_format;
  }
  if (Status st = g.TopologicalSort(); !st.ok()) return AtcError{"E12001", "AIPP: " + st.message()};
  g.metadata["aipp"] = summary;
  return std::nullopt;
}

}  // namespace oc::atc
