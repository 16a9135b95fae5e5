#include "passes/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "ops/infer_util.h"
#include "passes/fusion/fusion_util.h"
#include "passes/pipeline.h"

namespace oc::quant {
namespace {

// The passes that must have run for the graph to show the Conv / MatMul nodes
// the quantized ops will replace: BatchNormalization folded into Conv weights
// (its scale would otherwise land after the Q), constants and shapes resolved.
constexpr const char* kPreparePasses[] = {"inline-constant-if", "shape-inference",  "legalize-types",
                                          "constant-folding",   "remove-identity", "fold-conv-batchnorm"};

const PassInfo* FindPass(const char* name) {
  for (const PassInfo& p : Passes())
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

using fusion::IsOp;
using fusion::NewValue;

bool ConstF32(const Value* v) { return fusion::IsF32Static(v) && v->constant; }

// Gemm(A, B, C) with constant B, alpha = beta = 1 and no transA is MatMul(A, B')
// + C: the form fuse-qdq knows (classifier heads are usually Gemm).
void SplitGemms(Graph& g) {
  std::vector<Node*> gemms;
  for (auto& n : g.nodes())
    if (IsOp(n.get(), "Gemm")) gemms.push_back(n.get());
  for (Node* gemm : gemms) {
    Value* a = gemm->input(0);
    Value* b = gemm->input(1);
    Value* c = gemm->input(2);
    Value* y = gemm->output(0);
    if (!a || !y || a->dtype != DataType::kFloat32 || !ConstF32(b) || b->shape.size() != 2) continue;
    if (gemm->GetInt("transA", 0) != 0 || gemm->GetFloat("alpha", 1.f) != 1.f || gemm->GetFloat("beta", 1.f) != 1.f)
      continue;
    if (c && !ConstF32(c)) continue;
    Value* w = b;
    if (gemm->GetInt("transB", 0) != 0) {
      const int64_t n = b->shape[0], k = b->shape[1];
      std::vector<float> src = *ConstFloats(b);
      TensorData t = TensorData::Allocate(src.size() * sizeof(float));
      float* dst = reinterpret_cast<float*>(t.mutable_data());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[static_cast<size_t>(i * k + j)];
      w = g.AddConstant(g.UniqueName(b->name + "_kn"), DataType::kFloat32, {k, n}, std::move(t));
    }
    const std::string name = gemm->name;
    const int opset = gemm->opset;
    g.RemoveNode(gemm);
    Value* mm_out = y;
    if (c) {
      mm_out = g.AddValue(g.UniqueName(name + "_matmul"));
      mm_out->dtype = DataType::kFloat32;
      mm_out->has_shape = y->has_shape;
      mm_out->shape = y->shape;
      mm_out->dim_params.assign(y->shape.size(), "");
    }
    Node* mm = g.AddNode("MatMul", g.UniqueName(name + "_matmul"), {a, w}, {mm_out});
    mm->opset = std::max(opset, 13);
    if (c) {
      Node* add = g.AddNode("Add", g.UniqueName(name + "_bias"), {mm_out, c}, {y});
      add->opset = std::max(opset, 14);
    }
  }
}

// A Conv / MatMul that gets QDQ form: x enters quantized, `out` (the op's
// output, or the Relu after a Conv) leaves quantized.
struct QuantOp {
  Node* op;
  Value* x;
  Value* out;
};

std::vector<QuantOp> FindQuantOps(const Graph& g, int* skipped) {
  std::vector<QuantOp> ops;
  *skipped = 0;
  for (auto& up : g.nodes()) {
    Node* n = up.get();
    const bool conv = IsOp(n, "Conv"), matmul = IsOp(n, "MatMul");
    if (!conv && !matmul && !IsOp(n, "Gemm")) continue;
    Value* x = n->input(0);
    Value* w = n->input(1);
    Value* y = n->output(0);
    bool ok = (conv || matmul) && x && y && x->dtype == DataType::kFloat32 && x->IsStatic() && y->IsStatic() &&
              ConstF32(w) && !g.IsGraphOutput(x) && !x->constant;
    if (ok && conv) ok = w->shape.size() >= 3 && (!n->input(2) || ConstF32(n->input(2)));
    if (ok && matmul) ok = w->shape.size() == 2 && x->shape.size() >= 2;
    Value* out = y;
    if (ok && conv) {
      auto cons = g.Consumers(y);
      if (cons.size() == 1 && IsOp(cons[0], "Relu") && !g.IsGraphOutput(y) && cons[0]->output(0))
        out = cons[0]->output(0);
    }
    if (ok) ok = !g.IsGraphOutput(out);
    if (!ok) {
      ++*skipped;
      continue;
    }
    ops.push_back({n, x, out});
  }
  return ops;
}

// `disabled`: the passes atc's --fusion_switch_file switched off (the
// optimisation passes among these are skipped here too).
Status Prepare(Graph& g, const std::vector<std::string>& disabled) {
  CompileOptions opts;
  for (const char* name : kPreparePasses) {
    if (std::find(disabled.begin(), disabled.end(), name) != disabled.end()) continue;
    const PassInfo* p = FindPass(name);
    if (!p) return Internal("int8 calibration: pass '", name, "' is not in the pipeline");
    Status st = p->run(g, opts);
    if (!st.ok()) return st.WithContext(StrCat("pass ", name, " (int8 preparation)"));
  }
  SplitGemms(g);
  return g.TopologicalSort();
}

struct Range {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  std::vector<int64_t> hist;  // kPercentile second pass
};

constexpr int kBins = 4096;

void Observe(Range& r, const float* p, size_t n, bool histogram) {
  if (!histogram) {
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(p[i])) continue;
      r.lo = std::min(r.lo, p[i]);
      r.hi = std::max(r.hi, p[i]);
    }
    return;
  }
  if (r.hist.empty()) r.hist.assign(kBins, 0);
  const float width = r.hi > r.lo ? (r.hi - r.lo) / kBins : 1.f;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i])) continue;
    int b = static_cast<int>((p[i] - r.lo) / width);
    r.hist[static_cast<size_t>(std::clamp(b, 0, kBins - 1))]++;
  }
}

// Clips the recorded [lo, hi] to the central `pct` percent of the histogram.
void ApplyPercentile(Range& r, double pct) {
  int64_t total = 0;
  for (int64_t c : r.hist) total += c;
  if (total == 0 || !(r.hi > r.lo)) return;
  const double tail = total * (100.0 - pct) / 100.0;
  const float width = (r.hi - r.lo) / kBins;
  int lo_bin = 0, hi_bin = kBins - 1;
  for (double acc = 0; lo_bin < kBins - 1 && acc + r.hist[lo_bin] <= tail; ++lo_bin) acc += r.hist[lo_bin];
  for (double acc = 0; hi_bin > 0 && acc + r.hist[hi_bin] <= tail; --hi_bin) acc += r.hist[hi_bin];
  const float lo = r.lo + lo_bin * width, hi = r.lo + (hi_bin + 1) * width;
  if (hi > lo) r.lo = lo, r.hi = hi;
}

// Runs the float32 model over the samples and returns the ranges of `names`
// (by value name), plus the model's outputs per sample.
Status Calibrate(const GraphFactory& fresh_copy, const std::vector<std::string>& names,
                 const CalibrationSet& samples, const Int8Options& options, std::map<std::string, Range>* ranges,
                 Int8Report* report) {
  auto copy = fresh_copy();
  if (!copy.ok()) return copy.status().WithContext("int8 calibration: re-reading the model");
  std::shared_ptr<Graph> g(std::move(copy).value());
  OC_RETURN_IF_ERROR(Prepare(*g, options.disabled_passes));
  const size_t num_model_outputs = g->outputs.size();
  // Graph inputs are observed from the samples; the rest become extra outputs.
  std::vector<std::pair<std::string, int>> input_targets;  // name, input index
  std::vector<std::string> output_targets;
  for (const std::string& name : names) {
    Value* v = g->FindValue(name);
    if (!v) return Internal("int8 calibration: value '", name, "' is missing from the float32 copy");
    auto it = std::find(g->inputs.begin(), g->inputs.end(), v);
    if (it != g->inputs.end()) {
      input_targets.emplace_back(name, static_cast<int>(it - g->inputs.begin()));
    } else {
      g->outputs.push_back(v);
      output_targets.push_back(name);
    }
  }
  CompileOptions copts;
  OC_RETURN_IF_ERROR(RunPipeline(*g, copts).WithContext("int8 calibration: compiling the float32 model"));
  auto exe = Executable::Create(g);
  if (!exe.ok()) return exe.status().WithContext("int8 calibration: creating the float32 kernels");
  auto ctx = (*exe)->NewContext();
  if (!ctx.ok()) return ctx.status();
  ThreadPool pool(1);
  std::vector<std::vector<float>> outs(g->outputs.size());
  std::vector<void*> out_ptrs(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].resize(static_cast<size_t>(g->outputs[i]->NumElements()));
    out_ptrs[i] = outs[i].data();
  }
  const int passes = options.method == CalibrationMethod::kPercentile ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const bool histogram = pass == 1;
    for (const auto& sample : samples) {
      std::vector<const void*> in_ptrs;
      for (const auto& s : sample) in_ptrs.push_back(s.data());
      OC_RETURN_IF_ERROR(
          (*exe)->Run(**ctx, in_ptrs, out_ptrs, pool).WithContext("int8 calibration: running the float32 model"));
      for (const auto& [name, idx] : input_targets) {
        const auto& s = sample[static_cast<size_t>(idx)];
        Observe((*ranges)[name], s.data(), s.size(), histogram);
      }
      for (size_t k = 0; k < output_targets.size(); ++k) {
        const auto& o = outs[num_model_outputs + k];
        Observe((*ranges)[output_targets[k]], o.data(), o.size(), histogram);
      }
      if (pass == 0)
        report->reference_outputs.emplace_back(outs.begin(), outs.begin() + static_cast<long>(num_model_outputs));
    }
  }
  if (passes == 2)
    for (auto& [name, r] : *ranges) ApplyPercentile(r, options.percentile);
  return Status::Ok();
}

// uint8 asymmetric parameters covering [lo, hi] and 0.
std::pair<float, uint8_t> ActivationParams(const Range& r) {
  float lo = std::min(std::isfinite(r.lo) ? r.lo : 0.f, 0.f);
  float hi = std::max(std::isfinite(r.hi) ? r.hi : 0.f, 0.f);
  if (!(hi > lo)) return {1.f, 0};
  const float scale = (hi - lo) / 255.f;
  const float zp = std::nearbyint(-lo / scale);
  return {scale, static_cast<uint8_t>(std::clamp(zp, 0.f, 255.f))};
}

Value* ScalarConst(Graph& g, const std::string& hint, DataType t, const void* data, size_t bytes) {
  return g.AddConstant(g.UniqueName(hint), t, {}, TensorData::Copy(data, bytes));
}

Node* AddQdqNode(Graph& g, const char* op, const std::string& name, std::vector<Value*> ins, Value* out,
                 int64_t axis) {
  Node* n = g.AddNode(op, g.UniqueName(name), std::move(ins), {out});
  n->opset = std::max(n->opset, 13);  // per-axis scales
  if (axis >= 0) n->SetInt("axis", axis);
  return n;
}

// Per-output-channel symmetric int8 weights behind a DequantizeLinear; returns
// the float value that replaces `w` and the per-channel scales.
Value* QuantizeWeights(Graph& g, Value* w, int64_t axis, std::vector<float>* scales) {
  const std::vector<float> src = *ConstFloats(w);
  const auto& shape = w->shape;
  const int64_t channels = shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  auto chan = [&](size_t i) { return static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels); };
  std::vector<float> amax(static_cast<size_t>(channels), 0.f);
  for (size_t i = 0; i < src.size(); ++i) amax[chan(i)] = std::max(amax[chan(i)], std::fabs(src[i]));
  scales->resize(amax.size());
  for (size_t c = 0; c < amax.size(); ++c) (*scales)[c] = amax[c] > 0.f ? amax[c] / 127.f : 1.f;
  TensorData q = TensorData::Allocate(src.size());
  int8_t* qd = reinterpret_cast<int8_t*>(q.mutable_data());
  for (size_t i = 0; i < src.size(); ++i)
    qd[i] = static_cast<int8_t>(std::clamp(std::nearbyint(src[i] / (*scales)[chan(i)]), -127.f, 127.f));
  Value* wq = g.AddConstant(g.UniqueName(w->name + "_int8"), DataType::kInt8, shape, std::move(q));
  Value* ws = g.AddConstant(g.UniqueName(w->name + "_scale"), DataType::kFloat32, {channels},
                            TensorData::Copy(scales->data(), scales->size() * sizeof(float)));
  TensorData z = TensorData::Allocate(static_cast<size_t>(channels));
  std::memset(z.mutable_data(), 0, z.size());
  Value* wz = g.AddConstant(g.UniqueName(w->name + "_zero_point"), DataType::kInt8, {channels}, std::move(z));
  Value* wf = NewValue(g, w->name + "_dequantized", DataType::kFloat32, shape);
  AddQdqNode(g, "DequantizeLinear", w->name + "_dequantize", {wq, ws, wz}, wf, axis);
  return wf;
}

// An int32 bias at scale x_scale * w_scale[c] (the product fuse-qdq checks).
Value* QuantizeBias(Graph& g, Value* b, float x_scale, const std::vector<float>& w_scales) {
  const std::vector<float> src = *ConstFloats(b);
  std::vector<float> scales(src.size());
  TensorData q = TensorData::Allocate(src.size() * sizeof(int32_t));
  int32_t* qd = reinterpret_cast<int32_t*>(q.mutable_data());
  for (size_t c = 0; c < src.size(); ++c) {
    scales[c] = x_scale * w_scales[w_scales.size() == 1 ? 0 : c];
    const double v = std::nearbyint(static_cast<double>(src[c]) / scales[c]);
    qd[c] = static_cast<int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
  }
  const std::vector<int64_t> shape = {static_cast<int64_t>(src.size())};
  Value* bq = g.AddConstant(g.UniqueName(b->name + "_int32"), DataType::kInt32, shape, std::move(q));
  Value* bs = g.AddConstant(g.UniqueName(b->name + "_scale"), DataType::kFloat32, shape,
                            TensorData::Copy(scales.data(), scales.size() * sizeof(float)));
  Value* bf = NewValue(g, b->name + "_dequantized", DataType::kFloat32, shape);
  AddQdqNode(g, "DequantizeLinear", b->name + "_dequantize", {bq, bs}, bf, 0);
  return bf;
}

}  // namespace

Status QuantizeInt8(Graph& graph, const GraphFactory& fresh_copy, const CalibrationSet& samples,
                    const Int8Options& options, Int8Report* report) {
  if (samples.empty()) return InvalidArgument("int8 calibration needs at least one sample");
  for (const Value* in : graph.inputs)
    if (!in->IsStatic())
      return NotSupported("int8 calibration needs static input shapes; input '", in->name, "' is ",
                          in->ShapeString(), " (fix it with --input_shape)");
  // The samples are handed to the executable as raw pointers: check their sizes here.
  for (size_t k = 0; k < samples.size(); ++k) {
    if (samples[k].size() != graph.inputs.size())
      return InvalidArgument("int8 calibration sample ", k, " has ", samples[k].size(), " inputs, the model ",
                             graph.inputs.size());
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (static_cast<int64_t>(samples[k][i].size()) != graph.inputs[i]->NumElements())
        return InvalidArgument("int8 calibration sample ", k, ", input '", graph.inputs[i]->name, "': ",
                               samples[k][i].size(), " floats, its shape ", graph.inputs[i]->ShapeString(),
                               " needs ", graph.inputs[i]->NumElements());
  }
  OC_RETURN_IF_ERROR(Prepare(graph, options.disabled_passes));
  int skipped = 0;
  std::vector<QuantOp> ops = FindQuantOps(graph, &skipped);
  report->skipped_ops = skipped;
  report->samples = static_cast<int>(samples.size());
  if (ops.empty()) return Status::Ok();
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const QuantOp& q : ops)
    for (const Value* v : {q.x, q.out})
      if (seen.insert(v->name).second) names.push_back(v->name);
  std::map<std::string, Range> ranges;
  OC_RETURN_IF_ERROR(Calibrate(fresh_copy, names, samples, options, &ranges, report));

  // One Q/DQ pair per activation; every float reader moves to the DQ.
  std::map<const Value*, float> act_scale;
  for (const std::string& name : names) {
    Value* t = graph.FindValue(name);
    const auto [scale, zp] = ActivationParams(ranges[name]);
    act_scale[t] = scale;
    std::vector<Node*> readers = graph.Consumers(t);
    Value* s = ScalarConst(graph, name + "_scale", DataType::kFloat32, &scale, sizeof scale);
    Value* z = ScalarConst(graph, name + "_zero_point", DataType::kUInt8, &zp, 1);
    Value* q = NewValue(graph, name + "_quantized", DataType::kUInt8, t->shape);
    Value* dq = NewValue(graph, name + "_dequantized", DataType::kFloat32, t->shape);
    AddQdqNode(graph, "QuantizeLinear", name + "_quantize", {t, s, z}, q, -1);
    AddQdqNode(graph, "DequantizeLinear", name + "_dequantize", {q, s, z}, dq, -1);
    for (Node* r : readers)
      for (Value*& in : r->inputs)
        if (in == t) in = dq;
    ++report->quantized_tensors;
  }
  for (const QuantOp& q : ops) {
    const bool conv = IsOp(q.op, "Conv");
    std::vector<float> w_scales;
    q.op->inputs[1] = QuantizeWeights(graph, q.op->input(1), conv ? 0 : 1, &w_scales);
    if (conv && q.op->input(2)) q.op->inputs[2] = QuantizeBias(graph, q.op->input(2), act_scale[q.x], w_scales);
    ++report->quantized_ops;
  }
  OC_RETURN_IF_ERROR(graph.TopologicalSort());
  graph.Compact();
  return graph.Verify();
}

Status ReadNpyFloat(const std::string& path, std::vector<int64_t>* shape, std::vector<float>* data) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot open '", path, "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return InvalidArgument("'", path, "' is not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, off = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    off = 10;
  } else {
    if (bytes.size() < 12) return InvalidArgument("'", path, "': truncated .npy header");
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    off = 12;
  }
  if (off + header_len > bytes.size()) return InvalidArgument("'", path, "': truncated .npy header");
  const std::string header(bytes.data() + off, header_len);
  off += header_len;
  auto field = [&](const std::string& key) -> std::string {
    size_t p = header.find("'" + key + "'");
    if (p == std::string::npos) return "";
    p = header.find(':', p);
    return p == std::string::npos ? "" : header.substr(p + 1);
  };
  const std::string descr = field("descr"), order = field("fortran_order"), shp = field("shape");
  size_t elem = 0;
  if (descr.find("'<f4'") != std::string::npos) elem = 4;
  else if (descr.find("'<f8'") != std::string::npos) elem = 8;
  else return InvalidArgument("'", path, "': calibration data must be float32 or float64 (descr ", descr.substr(0, 8), ")");
  if (order.find("False") == std::string::npos) return InvalidArgument("'", path, "': Fortran-order arrays are not supported");
  const size_t open = shp.find('('), close = shp.find(')');
  if (open == std::string::npos || close == std::string::npos) return InvalidArgument("'", path, "': no shape in the header");
  shape->clear();
  int64_t count = 1;
  std::string dims = shp.substr(open + 1, close - open - 1);
  for (size_t p = 0; p < dims.size();) {
    size_t q = dims.find(',', p);
    std::string d = dims.substr(p, q == std::string::npos ? std::string::npos : q - p);
    d.erase(std::remove(d.begin(), d.end(), ' '), d.end());
    if (!d.empty()) {
      shape->push_back(std::stoll(d));
      count *= shape->back();
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }
  if (bytes.size() - off < static_cast<size_t>(count) * elem)
    return InvalidArgument("'", path, "': holds fewer bytes than its shape needs");
  data->resize(static_cast<size_t>(count));
  for (size_t i = 0; i < data->size(); ++i) {
    if (elem == 4) {
      std::memcpy(&(*data)[i], bytes.data() + off + 4 * i, 4);
    } else {
      double d;
      std::memcpy(&d, bytes.data() + off + 8 * i, 8);
      (*data)[i] = static_cast<float>(d);
    }
  }
  return Status::Ok();
}

Expected<CalibrationSet> SplitSamples(
    const Graph& graph,
    const std::vector<std::vector<std::pair<std::vector<int64_t>, std::vector<float>>>>& arrays) {
  CalibrationSet samples;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value* in = graph.inputs[i];
    if (in->dtype != DataType::kFloat32)
      return NotSupported("int8 calibration: input '", in->name, "' is not float32");
    if (!in->IsStatic())
      return NotSupported("int8 calibration needs static input shapes; input '", in->name, "' is ", in->ShapeString());
    if (i >= arrays.size() || arrays[i].empty())
      return InvalidArgument("no calibration data for input '", in->name, "'");
    const auto& s = in->shape;
    const size_t n = static_cast<size_t>(in->NumElements());
    std::vector<std::vector<float>> chunks;
    for (const auto& [shape, data] : arrays[i]) {
      const bool same = shape == s;
      const bool leading = shape.size() == s.size() + 1 && std::equal(s.begin(), s.end(), shape.begin() + 1);
      const bool batched = !s.empty() && shape.size() == s.size() && s[0] > 0 && shape[0] % s[0] == 0 &&
                           std::equal(s.begin() + 1, s.end(), shape.begin() + 1);
      if (!same && !leading && !batched) {
        std::string got;
        for (int64_t d : shape) got += (got.empty() ? "" : ",") + std::to_string(d);
        return InvalidArgument("calibration data for input '", in->name, "' has shape [", got,
                               "]; expected the input's shape ", in->ShapeString(),
                               ", [N] + that shape, or that shape with a multiple of its first dim");
      }
      for (size_t off = 0; off + n <= data.size(); off += n)
        chunks.emplace_back(data.begin() + static_cast<long>(off), data.begin() + static_cast<long>(off + n));
    }
    if (i == 0) samples.resize(chunks.size());
    if (chunks.size() != samples.size())
      return InvalidArgument("calibration data: input '", in->name, "' has ", chunks.size(), " samples but input '",
                             graph.inputs[0]->name, "' has ", samples.size());
    for (size_t k = 0; k < chunks.size(); ++k) samples[k].push_back(std::move(chunks[k]));
  }
  return samples;
}

}  // namespace oc::quant
