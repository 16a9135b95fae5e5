// Attention / FlexAttention against a plain reference written from the ONNX
// spec: full score matrix in double, additive bias built element by element,
// softmax per row, fully masked rows zero. Shapes cross the kernel's query and
// key block edges (64 / 256) and the GEMM tile edges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "executor/executable.h"
#include "base/cpu_features.h"
#include "ops/cpu/attention/attention_core.h"
#include "ops/cpu/attention/attention_core_isa.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/cpu/elementwise/elementwise_math.h"
#include "ops/op_registry.h"
#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::T;

struct Case {
  std::string name;
  bool is3d = false;
  int64_t batch = 1, q_heads = 2, kv_heads = 2, q_len = 4, kv_len = 6, past = -1;  // past -1: no past inputs
  int64_t head = 8, v_head = 8;
  std::vector<int64_t> mask_shape;  // empty: none
  bool bool_mask = false;
  bool causal = false;
  float scale = 0.f;  // 0: default
  float softcap = 0.f;
  int64_t left = -1, right = -1;
  bool nonpad = false;
  int qk_mode = -1;  // -1: no qk output
  bool want_present = true;
  int opset = 25;
};

struct Inputs {
  std::vector<double> q, k, v, mask, past_k, past_v;
  std::vector<uint8_t> bmask;
  std::vector<int64_t> nonpad;
};

std::vector<double> Random(size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Element (b, h, s, d) of a 3-D or 4-D Q/K/V tensor.
double At(const std::vector<double>& x, bool is3d, int64_t heads, int64_t seq, int64_t dim, int64_t b, int64_t h,
          int64_t s, int64_t d) {
  if (is3d) return x[((b * seq + s) * heads + h) * dim + d];
  return x[((b * heads + h) * seq + s) * dim + d];
}

struct RefOut {
  std::vector<double> y, present_k, present_v, qk;
};

RefOut Reference(const Case& c, const Inputs& in) {
  const int64_t past = std::max<int64_t>(c.past, 0), total = past + c.kv_len;
  const double inf = std::numeric_limits<double>::infinity();
  // Full K / V as [b, kvh, total, dim].
  std::vector<double> K(c.batch * c.kv_heads * total * c.head), V(c.batch * c.kv_heads * total * c.v_head);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.kv_heads; ++h)
      for (int64_t j = 0; j < total; ++j) {
        for (int64_t d = 0; d < c.head; ++d)
          K[((b * c.kv_heads + h) * total + j) * c.head + d] =
              j < past ? in.past_k[((b * c.kv_heads + h) * past + j) * c.head + d]
                       : At(in.k, c.is3d, c.kv_heads, c.kv_len, c.head, b, h, j - past, d);
        for (int64_t d = 0; d < c.v_head; ++d)
          V[((b * c.kv_heads + h) * total + j) * c.v_head + d] =
              j < past ? in.past_v[((b * c.kv_heads + h) * past + j) * c.v_head + d]
                       : At(in.v, c.is3d, c.kv_heads, c.kv_len, c.v_head, b, h, j - past, d);
      }
  RefOut r;
  r.present_k = K;
  r.present_v = V;
  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.head));
  r.y.assign(c.batch * c.q_heads * c.q_len * c.v_head, 0.0);
  r.qk.assign(c.batch * c.q_heads * c.q_len * total, 0.0);
  std::vector<int64_t> ms = c.mask_shape;
  while (!ms.empty() && ms.size() < 4) ms.insert(ms.begin(), 1);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.q_heads; ++h) {
      const int64_t hk = h / (c.q_heads / c.kv_heads);
      for (int64_t i = 0; i < c.q_len; ++i) {
        std::vector<double> raw(total), bias(total, 0.0), s(total);
        const int64_t offset = c.nonpad ? in.nonpad[b] - c.q_len : past;
        for (int64_t j = 0; j < total; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < c.head; ++d)
            acc += At(in.q, c.is3d, c.q_heads, c.q_len, c.head, b, h, i, d) *
                   K[((b * c.kv_heads + hk) * total + j) * c.head + d];
          raw[j] = acc * scale;
          if (!ms.empty()) {
            if (j >= ms[3]) {
              bias[j] = -inf;
            } else {
              int64_t idx = (((ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : h)) * ms[2] + (ms[2] == 1 ? 0 : i)) *
                                ms[3] + j;
              bias[j] = c.bool_mask ? (in.bmask[idx] ? 0.0 : -inf) : in.mask[idx];
            }
          }
          const int64_t p = i + offset;
          if (c.causal && j > p) bias[j] = -inf;
          if (c.left >= 0 && p - j > c.left) bias[j] = -inf;
          if (c.right >= 0 && j - p > c.right) bias[j] = -inf;
          if (c.nonpad && j >= in.nonpad[b]) bias[j] = -inf;
        }
        double m = -inf;
        for (int64_t j = 0; j < total; ++j) {
          double x = raw[j];
          if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
          double* qk = &r.qk[((b * c.q_heads + h) * c.q_len + i) * total + j];
          if (c.qk_mode == 0) *qk = raw[j];
          if (c.qk_mode == 1) *qk = x;
          s[j] = x + bias[j];
          if (c.qk_mode == 2) *qk = s[j];
          m = std::max(m, bias[j] == -inf ? -inf : s[j]);
        }
        double* y = &r.y[((b * c.q_heads + h) * c.q_len + i) * c.v_head];
        if (m == -inf) continue;  // fully masked: zero row, zero probabilities
        double sum = 0;
        for (int64_t j = 0; j < total; ++j) sum += s[j] = std::exp(s[j] - m);
        for (int64_t j = 0; j < total; ++j) {
          const double pj = s[j] / sum;
          if (c.qk_mode == 3) r.qk[((b * c.q_heads + h) * c.q_len + i) * total + j] = pj;
          for (int64_t d = 0; d < c.v_head; ++d) y[d] += pj * V[((b * c.kv_heads + hk) * total + j) * c.v_head + d];
        }
      }
    }
  if (c.is3d) {  // [b, h, s, d] -> [b, s, h * d]
    std::vector<double> y3(r.y.size());
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.q_heads; ++h)
        for (int64_t i = 0; i < c.q_len; ++i)
          for (int64_t d = 0; d < c.v_head; ++d)
            y3[((b * c.q_len + i) * c.q_heads + h) * c.v_head + d] =
                r.y[((b * c.q_heads + h) * c.q_len + i) * c.v_head + d];
    r.y = y3;
  }
  return r;
}

template <typename E>
T ToTensor(std::vector<int64_t> shape, const std::vector<double>& v) {
  std::vector<E> e(v.begin(), v.end());
  return tt::Make<E>(std::move(shape), e);
}

template <typename E>
std::vector<T> RunAttention(const Case& c, const Inputs& in, Status* status, const std::string& domain = "",
                            const std::string& op = "Attention") {
  Graph g;
  g.opset_imports[domain] = domain.empty() ? c.opset : 1;
  std::vector<std::optional<T>> inputs;
  auto qkv_shape = [&](int64_t heads, int64_t seq, int64_t dim) {
    return c.is3d ? std::vector<int64_t>{c.batch, seq, heads * dim} : std::vector<int64_t>{c.batch, heads, seq, dim};
  };
  inputs.push_back(ToTensor<E>(qkv_shape(c.q_heads, c.q_len, c.head), in.q));
  inputs.push_back(ToTensor<E>(qkv_shape(c.kv_heads, c.kv_len, c.head), in.k));
  inputs.push_back(ToTensor<E>(qkv_shape(c.kv_heads, c.kv_len, c.v_head), in.v));
  if (op == "Attention") {
    if (c.mask_shape.empty()) inputs.push_back(std::nullopt);
    else if (c.bool_mask) inputs.push_back(tt::Make<uint8_t>(c.mask_shape, in.bmask, DataType::kBool));
    else inputs.push_back(ToTensor<E>(c.mask_shape, in.mask));
    if (c.past >= 0) {
      inputs.push_back(ToTensor<E>({c.batch, c.kv_heads, c.past, c.head}, in.past_k));
      inputs.push_back(ToTensor<E>({c.batch, c.kv_heads, c.past, c.v_head}, in.past_v));
    } else {
      inputs.push_back(std::nullopt);
      inputs.push_back(std::nullopt);
    }
    if (c.nonpad) inputs.push_back(tt::Make<int64_t>({c.batch}, in.nonpad));
  }
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) { ins.push_back(nullptr); continue; }
    ins.push_back(g.AddConstant("in" + std::to_string(i), inputs[i]->dtype, inputs[i]->shape,
                                TensorData::Copy(inputs[i]->bytes.data(), inputs[i]->bytes.size())));
  }
  std::vector<Value*> outs{g.AddValue("y")};
  if (op == "Attention") {
    outs.push_back(c.want_present ? g.AddValue("pk") : nullptr);
    outs.push_back(c.want_present ? g.AddValue("pv") : nullptr);
    if (c.qk_mode >= 0) outs.push_back(g.AddValue("qk"));
  }
  while (!outs.back()) outs.pop_back();
  Node* node = g.AddNode(op, "attn", ins, outs, domain);
  node->opset = domain.empty() ? c.opset : 1;
  if (c.is3d) {
    node->SetInt("q_num_heads", c.q_heads);
    node->SetInt("kv_num_heads", c.kv_heads);
  }
  if (c.scale > 0) node->SetFloat("scale", c.scale);
  if (c.softcap > 0) node->SetFloat("softcap", c.softcap);
  if (c.causal) node->SetInt("is_causal", 1);
  if (c.left >= 0) node->SetInt("left_window_size", c.left);
  if (c.right >= 0) node->SetInt("right_window_size", c.right);
  if (c.qk_mode > 0) node->SetInt("qk_matmul_output_mode", c.qk_mode);
  const OpDef* def = OpRegistry::Global().Find(domain, op, node->opset);
  if (!def) {
    *status = NotFound("no OpDef");
    return {};
  }
  *status = def->infer(*node);
  if (!status->ok()) return {};
  auto data = EvaluateNode(*node);
  if (!data.ok()) {
    *status = data.status();
    return {};
  }
  std::vector<T> r;
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    T t;
    if (node->outputs[i]) {
      t.dtype = node->outputs[i]->dtype;
      t.shape = node->outputs[i]->shape;
      t.bytes.assign((*data)[i].data(), (*data)[i].data() + (*data)[i].size());
    }
    r.push_back(std::move(t));
  }
  return r;
}

Inputs MakeInputs(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Inputs in;
  const int64_t past = std::max<int64_t>(c.past, 0);
  in.q = Random(c.batch * c.q_heads * c.q_len * c.head, rng, -2, 2);
  in.k = Random(c.batch * c.kv_heads * c.kv_len * c.head, rng, -2, 2);
  in.v = Random(c.batch * c.kv_heads * c.kv_len * c.v_head, rng);
  in.past_k = Random(c.batch * c.kv_heads * past * c.head, rng, -2, 2);
  in.past_v = Random(c.batch * c.kv_heads * past * c.v_head, rng);
  if (!c.mask_shape.empty()) {
    const int64_t n = tt::Numel(c.mask_shape);
    in.mask = Random(n, rng, -3, 1);
    std::bernoulli_distribution keep(0.7);
    for (int64_t i = 0; i < n; ++i) {
      in.bmask.push_back(keep(rng));
      if (i % 7 == 3) in.mask[i] = -std::numeric_limits<double>::infinity();
    }
  }
  std::uniform_int_distribution<int64_t> np(0, c.kv_len);
  for (int64_t b = 0; b < c.batch; ++b) in.nonpad.push_back(b == 0 ? c.kv_len : np(rng));
  return in;
}

template <typename E>
void Check(const Case& c, double tol) {
  Inputs in = MakeInputs(c, 1234u + static_cast<uint32_t>(c.q_len * 31 + c.kv_len));
  RefOut ref = Reference(c, in);
  Status st;
  auto out = RunAttention<E>(c, in, &st);
  ASSERT_TRUE(st.ok()) << c.name << ": " << st.ToString();
  auto cmp = [&](const char* what, const T& t, const std::vector<double>& want) {
    auto got = t.as<E>();
    ASSERT_EQ(got.size(), want.size()) << c.name << " " << what;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isinf(want[i])) {
        ASSERT_EQ(double(got[i]), want[i]) << c.name << " " << what << " at " << i;
        continue;
      }
      ASSERT_NEAR(double(got[i]), want[i], tol * std::max(1.0, std::fabs(want[i])))
          << c.name << " " << what << " at " << i;
    }
  };
  cmp("Y", out[0], ref.y);
  if (c.want_present && out.size() > 2) {
    cmp("present_key", out[1], ref.present_k);
    cmp("present_value", out[2], ref.present_v);
  }
  if (c.qk_mode >= 0) cmp("qk_matmul_output", out[3], ref.qk);
}

std::vector<Case> Cases() {
  std::vector<Case> cs;
  auto add = [&](std::string name, auto f) {
    Case c;
    c.name = std::move(name);
    f(c);
    cs.push_back(c);
  };
  add("4d_basic", [](Case&) {});
  add("3d_basic", [](Case& c) { c.is3d = true; c.batch = 2; c.q_heads = c.kv_heads = 3; });
  add("4d_gqa", [](Case& c) { c.q_heads = 6; c.kv_heads = 2; });
  add("3d_gqa_causal", [](Case& c) { c.is3d = true; c.q_heads = 4; c.kv_heads = 1; c.causal = true; });
  add("diff_head_sizes", [](Case& c) { c.head = 8; c.v_head = 10; c.scale = 0.05f; });
  add("softcap", [](Case& c) { c.softcap = 2.f; });
  add("float_mask_2d", [](Case& c) { c.mask_shape = {4, 6}; });
  add("float_mask_4d_causal", [](Case& c) { c.batch = 2; c.mask_shape = {2, 1, 4, 6}; c.causal = true; });
  add("bool_mask_3d", [](Case& c) { c.mask_shape = {2, 4, 6}; c.bool_mask = true; });
  add("bool_mask_rank1_short", [](Case& c) { c.mask_shape = {4}; c.bool_mask = true; });
  add("past_present_mask", [](Case& c) { c.batch = 2; c.past = 5; c.mask_shape = {4, 11}; });
  add("past_causal_3d", [](Case& c) { c.is3d = true; c.past = 3; c.causal = true; c.v_head = 6; });
  add("past_without_present", [](Case& c) { c.past = 3; c.want_present = false; });
  add("nonpad_causal", [](Case& c) { c.batch = 3; c.nonpad = true; c.causal = true; c.q_len = 2; });
  add("window", [](Case& c) { c.q_len = 5; c.kv_len = 5; c.left = 1; c.right = 2; });
  add("window_causal_past", [](Case& c) { c.past = 4; c.causal = true; c.left = 2; });
  add("qk_mode0", [](Case& c) { c.qk_mode = 0; c.mask_shape = {4, 6}; c.softcap = 1.5f; });
  add("qk_mode1", [](Case& c) { c.qk_mode = 1; c.mask_shape = {4, 6}; c.softcap = 1.5f; });
  add("qk_mode2", [](Case& c) { c.qk_mode = 2; c.mask_shape = {4, 6}; c.causal = true; });
  add("qk_mode3", [](Case& c) { c.qk_mode = 3; c.mask_shape = {4, 6}; c.bool_mask = true; });
  add("fully_masked_rows", [](Case& c) { c.causal = true; c.nonpad = true; c.batch = 2; c.q_len = 6; c.kv_len = 4; });
  // Block and tile edges: query block 64, key block 256, MR 14 / 6 / 4, NR 32 / 16 / 8.
  add("long_kv_blocks", [](Case& c) { c.q_len = 70; c.kv_len = 600; c.head = 33; c.v_head = 40; });
  add("long_causal_blocks", [](Case& c) { c.q_len = 300; c.kv_len = 300; c.causal = true; c.head = 64; c.v_head = 64; });
  add("long_window_mask", [](Case& c) {
    c.q_len = 130; c.kv_len = 520; c.past = 7; c.left = 100; c.causal = true; c.mask_shape = {130, 527};
  });
  add("long_qk_mode3", [](Case& c) { c.q_len = 65; c.kv_len = 257; c.qk_mode = 3; c.causal = true; });
  add("decode_gqa", [](Case& c) { c.q_len = 1; c.kv_len = 1; c.past = 300; c.q_heads = 8; c.kv_heads = 2; c.causal = true; });
  // Blocks of at most 4 query rows take the unpacked path (4 keys per step, 64 columns per register group).
  add("few_rows_odd_dims", [](Case& c) {
    c.q_len = 3; c.kv_len = 67; c.past = 2; c.head = 37; c.v_head = 70; c.causal = true; c.mask_shape = {3, 69};
  });
  add("few_rows_gqa_softcap", [](Case& c) { c.q_len = 2; c.kv_len = 9; c.q_heads = 4; c.kv_heads = 2; c.softcap = 1.f; c.head = 16; c.v_head = 16; });
  // Single-query steps over grouped heads: query heads batched as rows (groups of 6 = 4 + 2).
  add("decode_gqa_group6_mask_qk", [](Case& c) {
    c.batch = 2; c.q_len = 1; c.kv_len = 1; c.past = 40; c.q_heads = 12; c.kv_heads = 2; c.causal = true;
    c.mask_shape = {2, 12, 1, 41}; c.qk_mode = 2; c.left = 30;
  });
  add("decode_gqa_3d_nonpad", [](Case& c) {
    c.is3d = true; c.batch = 3; c.q_len = 1; c.kv_len = 50; c.q_heads = 8; c.kv_heads = 2; c.nonpad = true; c.causal = true;
  });
  add("bert_shape", [](Case& c) { c.is3d = true; c.q_heads = c.kv_heads = 12; c.q_len = c.kv_len = 128; c.head = c.v_head = 64; c.mask_shape = {1, 1, 1, 128}; });
  return cs;
}

TEST(Attention, Float32MatchesSpecReference) {
  for (const Case& c : Cases()) Check<float>(c, 2e-5);
}

TEST(Attention, Float64MatchesSpecReference) {
  for (const Case& c : Cases()) Check<double>(c, 1e-11);
}

TEST(Attention, RejectsBadShapesAndMissingHeads) {
  Case c;
  c.is3d = true;
  Inputs in = MakeInputs(c, 1);
  Status st;
  Graph g;
  auto good = RunAttention<float>(c, in, &st);
  EXPECT_TRUE(st.ok()) << st.ToString();
  c.q_heads = 3;  // 3 q heads over 2 kv heads
  in = MakeInputs(c, 1);
  RunAttention<float>(c, in, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("multiple of kv heads"), std::string::npos) << st.ToString();
  c = Case();
  c.mask_shape = {3, 4, 6};  // 3 does not broadcast to 2 heads
  in = MakeInputs(c, 1);
  RunAttention<float>(c, in, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("attn_mask"), std::string::npos) << st.ToString();
}

TEST(FlexAttention, PlainAndGroupedQueryMatchReference) {
  for (auto [hq, hkv] : {std::pair{2, 2}, {4, 2}}) {
    Case c;
    c.q_heads = hq;
    c.kv_heads = hkv;
    c.q_len = 5;
    c.kv_len = 7;
    c.v_head = 6;
    Inputs in = MakeInputs(c, 7);
    RefOut ref = Reference(c, in);
    Status st;
    auto out = RunAttention<float>(c, in, &st, "ai.onnx.preview", "FlexAttention");
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto y = out[0].as<float>();
    ASSERT_EQ(y.size(), ref.y.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref.y[i], 2e-5) << i;
  }
}

// The online softmax relies on exp(-inf - m) being exactly 0 in every math table.
TEST(Attention, ExpSumMapsNegativeInfinityToZero) {
  float x[20];
  for (int i = 0; i < 20; ++i) x[i] = i % 3 ? -std::numeric_limits<float>::infinity() : 0.5f * i;
  float y[20];
  const float sum = ew::MathKernels().exp_sum(x, y, 20, 9.f);
  double want = 0;
  for (int i = 0; i < 20; ++i) {
    if (i % 3) {
      EXPECT_EQ(y[i], 0.f) << i;
    } else {
      want += std::exp(0.5 * i - 9.0);
    }
  }
  EXPECT_NEAR(sum, want, 1e-5 * want);
}

#if defined(__x86_64__)
// The AVX-512 row passes and K^T packer against plain loops, below, at and
// above their vector widths (16 lanes, 32-column panels, 64-element unroll).
TEST(Attention, Avx512RowPassesAndPackerMatchScalar) {
  if (!gemm::IsaSupported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512 here";
  std::mt19937 rng(3);
  for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257}) {
    std::vector<double> src = Random(n, rng, -30, 30);
    std::vector<float> x(src.begin(), src.end());
    for (int64_t i = 0; i < n; i += 5) x[i] = -std::numeric_limits<float>::infinity();
    float want_max = -std::numeric_limits<float>::infinity();
    for (float v : x) want_max = std::max(want_max, v);
    EXPECT_EQ(attn::f32_attn_row_max_avx512(x.data(), n), want_max) << n;
    // The kernel is never called on a row whose max is -inf.
    const float shift = std::isinf(want_max) ? 0.f : want_max;
    double want_sum = 0;
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want_sum += want[i] = std::exp(double(x[i]) - shift);
    const float sum = attn::f32_attn_exp_sum_avx512(x.data(), n, shift);
    EXPECT_NEAR(sum, want_sum, 1e-6 * std::max(1.0, want_sum)) << n;
    for (int64_t i = 0; i < n; ++i) {
      if (want[i] == 0) EXPECT_EQ(x[i], 0.f) << n << " " << i;
      else  // plus the float rounding of x - shift (half an ulp of the argument)
        EXPECT_NEAR(x[i], want[i], want[i] * (4e-7 + 6e-8 * std::fabs(std::log(want[i])))) << n << " " << i;
    }
  }
  for (int64_t n : {1, 15, 16, 17, 32, 33, 70}) {
    std::vector<double> src = Random(2 * n, rng, -5, 5);
    std::vector<float> x(src.begin(), src.begin() + n), add(src.begin() + n, src.end()), x2 = x;
    std::vector<uint8_t> keep(n);
    for (int64_t i = 0; i < n; ++i) keep[i] = (i * 7 + n) % 3 != 0 ? 1 : 0;
    float want = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) want = std::max(want, x[i] + add[i]);
    EXPECT_EQ(attn::f32_attn_add_max_avx512(x.data(), add.data(), n), want) << n;
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(x[i], float(src[i]) + add[i]) << n << " " << i;
    want = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) if (keep[i]) want = std::max(want, x2[i]);
    EXPECT_EQ(attn::f32_attn_select_max_avx512(x2.data(), keep.data(), n), want) << n;
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(x2[i], keep[i] ? float(src[i]) : -std::numeric_limits<float>::infinity()) << n << " " << i;
  }
  const gemm::GemmUkernel* uk = gemm::UkernelForIsa(Isa::kAvx512);
  ASSERT_TRUE(uk && uk->nr == 32);
  for (int64_t n : {1, 16, 17, 32, 33, 70}) {
    for (int64_t d : {1, 8, 64}) {
      const int64_t ld = d + 3;
      std::vector<double> src = Random(n * ld, rng);
      std::vector<float> k(src.begin(), src.end());
      std::vector<float> got(gemm::PackedBSize(*uk, n, d), -1.f), want(got.size(), -2.f);
      attn::f32_attn_pack_kt32_avx512(k.data(), ld, n, d, got.data());
      gemm::PackB(*uk, k.data(), ld, true, n, d, want.data());
      EXPECT_EQ(got, want) << n << "x" << d;
    }
  }
}

TEST(Attention, Avx2RowPassesMatchScalar) {
  if (!gemm::IsaSupported(Isa::kAvx2)) GTEST_SKIP() << "no AVX2 here";
  std::mt19937 rng(4);
  for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100}) {
    std::vector<double> src = Random(2 * n, rng, -30, 30);
    std::vector<float> x(src.begin(), src.begin() + n), add(src.begin() + n, src.end());
    for (int64_t i = 0; i < n; i += 5) x[i] = -std::numeric_limits<float>::infinity();
    float want_max = -std::numeric_limits<float>::infinity();
    for (float v : x) want_max = std::max(want_max, v);
    EXPECT_EQ(attn::f32_attn_row_max_avx2(x.data(), n), want_max) << n;
    const float shift = std::isinf(want_max) ? 0.f : want_max;
    std::vector<double> want(n);
    double want_sum = 0;
    for (int64_t i = 0; i < n; ++i) want_sum += want[i] = std::exp(double(x[i]) - shift);
    std::vector<float> e = x;
    EXPECT_NEAR(attn::f32_attn_exp_sum_avx2(e.data(), n, shift), want_sum, 1e-6 * std::max(1.0, want_sum)) << n;
    for (int64_t i = 0; i < n; ++i) {
      if (want[i] == 0) EXPECT_EQ(e[i], 0.f) << n << " " << i;
      else EXPECT_NEAR(e[i], want[i], want[i] * (4e-7 + 6e-8 * std::fabs(std::log(want[i])))) << n << " " << i;
    }
    std::vector<float> y = x;
    float want_add = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) want_add = std::max(want_add, x[i] + add[i]);
    EXPECT_EQ(attn::f32_attn_add_max_avx2(y.data(), add.data(), n), want_add) << n;
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] + add[i]) << n << " " << i;
  }
}
#endif

}  // namespace
}  // namespace oc
