#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Straight transcription of the ONNX equations, one batch row and direction at
// a time, with W/R used untransposed (dot products over rows), layout 0 only;
// layout 1 is tested by transposing inputs/outputs around it.
struct RefConfig {
  std::string cell;  // RNN, GRU, LSTM
  int64_t seq, batch, input, hidden, dirs;
  bool reverse = false, lbr = false, input_forget = false;
  double clip = 0;
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

struct RefOut { std::vector<float> y, yh, yc; };

RefOut RefRnn(const RefConfig& c) {
  const int64_t H = c.hidden, I = c.input;
  const int64_t G = c.cell == "LSTM" ? 4 : c.cell == "GRU" ? 3 : 1;
  RefOut o;
  o.y.assign(c.seq * c.dirs * c.batch * H, 0.f);
  o.yh.assign(c.dirs * c.batch * H, 0.f);
  o.yc.assign(c.dirs * c.batch * H, 0.f);
  auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
  for (int64_t d = 0; d < c.dirs; ++d) {
    for (int64_t bt = 0; bt < c.batch; ++bt) {
      std::vector<double> h(H, 0), cs(H, 0);
      for (int64_t k = 0; k < H; ++k) {
        if (!c.h0.empty()) h[k] = c.h0[(d * c.batch + bt) * H + k];
        if (!c.c0.empty()) cs[k] = c.c0[(d * c.batch + bt) * H + k];
      }
      int64_t len = c.lens.empty() ? c.seq : c.lens[bt];
      bool rev = c.reverse || d == 1;
      for (int64_t s = 0; s < len; ++s) {
        int64_t t = rev ? len - 1 - s : s;
        const float* x = &c.x[(t * c.batch + bt) * I];
        // xw[g*H+k] = x . W[g*H+k,:] + Wb ; hr = h . R[...] + Rb
        auto xw = [&](int64_t row) {
          double v = c.b.empty() ? 0 : c.b[d * 2 * G * H + row];
          for (int64_t i = 0; i < I; ++i) v += x[i] * c.w[(d * G * H + row) * I + i];
          return v;
        };
        auto hr = [&](int64_t row, const std::vector<double>& hv) {
          double v = c.b.empty() ? 0 : c.b[d * 2 * G * H + G * H + row];
          for (int64_t i = 0; i < H; ++i) v += hv[i] * c.r[(d * G * H + row) * H + i];
          return v;
        };
        std::vector<double> hn(H);
        if (c.cell == "RNN") {
          for (int64_t k = 0; k < H; ++k) hn[k] = std::tanh(clip(xw(k) + hr(k, h)));
        } else if (c.cell == "GRU") {
          std::vector<double> z(H), r(H), rh(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = Sigmoid(clip(xw(k) + hr(k, h)));
            r[k] = Sigmoid(clip(xw(H + k) + hr(H + k, h)));
            rh[k] = r[k] * h[k];
          }
          for (int64_t k = 0; k < H; ++k) {
            double pre = c.lbr ? xw(2 * H + k) + r[k] * hr(2 * H + k, h) : xw(2 * H + k) + hr(2 * H + k, rh);
            double cand = std::tanh(clip(pre));
            hn[k] = (1 - z[k]) * cand + z[k] * h[k];
          }
        } else {
          std::vector<double> cn(H);
          auto P = [&](int64_t which, int64_t k) { return c.p.empty() ? 0.0 : c.p[d * 3 * H + which * H + k]; };
          for (int64_t k = 0; k < H; ++k) {
            double it = Sigmoid(clip(xw(k) + hr(k, h) + P(0, k) * cs[k]));
            double ft = Sigmoid(clip(xw(2 * H + k) + hr(2 * H + k, h) + P(2, k) * cs[k]));
            if (c.input_forget) ft = 1 - it;
            double ct = std::tanh(clip(xw(3 * H + k) + hr(3 * H + k, h)));
            cn[k] = ft * cs[k] + it * ct;
            double ot = Sigmoid(clip(xw(H + k) + hr(H + k, h) + P(1, k) * cn[k]));
            hn[k] = ot * std::tanh(cn[k]);
          }
          cs = cn;
        }
        h = hn;
        for (int64_t k = 0; k < H; ++k) o.y[((t * c.dirs + d) * c.batch + bt) * H + k] = static_cast<float>(h[k]);
      }
      for (int64_t k = 0; k < H; ++k) {
        o.yh[(d * c.batch + bt) * H + k] = static_cast<float>(h[k]);
        o.yc[(d * c.batch + bt) * H + k] = static_cast<float>(cs[k]);
      }
    }
  }
  return o;
}

RefConfig MakeConfig(const std::string& cell, int64_t dirs, uint32_t seed) {
  RefConfig c;
  c.cell = cell;
  c.seq = 4; c.batch = 3; c.input = 5; c.hidden = 6; c.dirs = dirs;
  int64_t G = cell == "LSTM" ? 4 : cell == "GRU" ? 3 : 1;
  c.x = RandomFloats(c.seq * c.batch * c.input, seed);
  c.w = RandomFloats(dirs * G * c.hidden * c.input, seed + 1, -0.6f, 0.6f);
  c.r = RandomFloats(dirs * G * c.hidden * c.hidden, seed + 2, -0.6f, 0.6f);
  c.b = RandomFloats(dirs * 2 * G * c.hidden, seed + 3, -0.3f, 0.3f);
  c.h0 = RandomFloats(dirs * c.batch * c.hidden, seed + 4);
  return c;
}

void AddInputs(OpTester& t, const RefConfig& c, bool with_lens) {
  int64_t G = c.cell == "LSTM" ? 4 : c.cell == "GRU" ? 3 : 1;
  t.InputF({c.seq, c.batch, c.input}, c.x)
      .InputF({c.dirs, G * c.hidden, c.input}, c.w)
      .InputF({c.dirs, G * c.hidden, c.hidden}, c.r);
  if (c.b.empty()) t.NoInput(); else t.InputF({c.dirs, 2 * G * c.hidden}, c.b);
  if (with_lens) t.Input<int32_t>({c.batch}, c.lens); else t.NoInput();
  if (c.h0.empty()) t.NoInput(); else t.InputF({c.dirs, c.batch, c.hidden}, c.h0);
  if (c.cell == "LSTM") {
    if (c.c0.empty()) t.NoInput(); else t.InputF({c.dirs, c.batch, c.hidden}, c.c0);
    if (!c.p.empty()) t.InputF({c.dirs, 3 * c.hidden}, c.p);
  }
}

TEST(RnnTest, BidirectionalLstmWithPeepholesSequenceLensAndAllOutputs) {
  RefConfig c = MakeConfig("LSTM", 2, 10);
  c.c0 = RandomFloats(2 * c.batch * c.hidden, 20);
  c.p = RandomFloats(2 * 3 * c.hidden, 21, -0.5f, 0.5f);
  c.lens = {4, 2, 3};
  OpTester t("LSTM", 14);
  AddInputs(t, c, true);
  t.Outputs(3);
  t.node().SetInt("hidden_size", c.hidden);
  t.node().SetString("direction", "bidirectional");
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RefOut want = RefRnn(c);
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{4, 2, 3, 6}));
  EXPECT_EQ(r->shapes[2], (std::vector<int64_t>{2, 3, 6}));
  ExpectNear(r->F(0), want.y, 1e-5f, "Y");
  ExpectNear(r->F(1), want.yh, 1e-5f, "Y_h");
  ExpectNear(r->F(2), want.yc, 1e-5f, "Y_c");
}

TEST(RnnTest, LstmReverseClipInputForgetAndOptionalOutputs) {
  RefConfig c = MakeConfig("LSTM", 1, 30);
  c.reverse = true;
  c.clip = 0.5;
  c.input_forget = true;
  c.b.clear();
  c.h0.clear();
  OpTester t("LSTM", 7);
  AddInputs(t, c, false);
  t.NoOutput().Outputs(2);
  t.node().SetInt("hidden_size", c.hidden);
  t.node().SetString("direction", "reverse");
  t.node().SetFloat("clip", 0.5f);
  t.node().SetInt("input_forget", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RefOut want = RefRnn(c);
  ExpectNear(r->F(1), want.yh, 1e-5f, "Y_h");
  ExpectNear(r->F(2), want.yc, 1e-5f, "Y_c");
}

TEST(RnnTest, GruLinearBeforeResetZeroAndOne) {
  for (int lbr = 0; lbr < 2; ++lbr) {
    RefConfig c = MakeConfig("GRU", 2, 40 + lbr);
    c.lbr = lbr;
    c.lens = {1, 4, 3};
    OpTester t("GRU", 14);
    AddInputs(t, c, true);
    t.Outputs(2);
    t.node().SetInt("hidden_size", c.hidden);
    t.node().SetString("direction", "bidirectional");
    t.node().SetInt("linear_before_reset", lbr);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    RefOut want = RefRnn(c);
    ExpectNear(r->F(0), want.y, 1e-5f, "Y lbr=" + std::to_string(lbr));
    ExpectNear(r->F(1), want.yh, 1e-5f, "Y_h lbr=" + std::to_string(lbr));
  }
}

TEST(RnnTest, PlainRnnForwardWithoutBias) {
  RefConfig c = MakeConfig("RNN", 1, 50);
  c.b.clear();
  OpTester t("RNN", 14);
  AddInputs(t, c, false);
  t.Outputs(2);
  t.node().SetInt("hidden_size", c.hidden);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RefOut want = RefRnn(c);
  ExpectNear(r->F(0), want.y, 1e-5f, "Y");
  ExpectNear(r->F(1), want.yh, 1e-5f, "Y_h");
}

// layout=1 is layout 0 with X/Y/Y_h/initial states transposed.
TEST(RnnTest, BatchFirstLayoutMatchesTransposedLayoutZero) {
  RefConfig c = MakeConfig("GRU", 2, 60);
  const int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, D = 2;
  std::vector<float> xb(S * B * I), h0b(D * B * H);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < I; ++i) xb[(b * S + t) * I + i] = c.x[(t * B + b) * I + i];
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k) h0b[(b * D + d) * H + k] = c.h0[(d * B + b) * H + k];
  OpTester t("GRU", 14);
  t.InputF({B, S, I}, xb).InputF({D, 3 * H, I}, c.w).InputF({D, 3 * H, H}, c.r).InputF({D, 6 * H}, c.b)
      .NoInput().InputF({B, D, H}, h0b).Outputs(2);
  t.node().SetInt("hidden_size", H);
  t.node().SetString("direction", "bidirectional");
  t.node().SetInt("layout", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{B, S, D, H}));
  RefOut want = RefRnn(c);
  std::vector<float> yb(want.y.size()), yhb(want.yh.size());
  for (int64_t t2 = 0; t2 < S; ++t2)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < H; ++k) yb[((b * S + t2) * D + d) * H + k] = want.y[((t2 * D + d) * B + b) * H + k];
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k) yhb[(b * D + d) * H + k] = want.yh[(d * B + b) * H + k];
  ExpectNear(r->F(0), yb, 1e-5f, "Y");
  ExpectNear(r->F(1), yhb, 1e-5f, "Y_h");
}

TEST(RnnTest, CustomActivationsWithAlpha) {
  // RNN with LeakyRelu(alpha=0.2): h = LeakyRelu(x.W^T + h.R^T + Wb + Rb).
  RefConfig c = MakeConfig("RNN", 1, 70);
  c.seq = 1;
  c.x.resize(c.batch * c.input);
  OpTester t("RNN", 14);
  AddInputs(t, c, false);
  t.Outputs(2);
  t.node().SetInt("hidden_size", c.hidden);
  t.node().attrs["activations"].kind = Attribute::Kind::kStrings;
  t.node().attrs["activations"].strings = {"LeakyRelu"};
  t.node().SetFloats("activation_alpha", {0.2f});
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> want;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t k = 0; k < c.hidden; ++k) {
      double v = c.b[k] + c.b[c.hidden + k];
      for (int64_t i = 0; i < c.input; ++i) v += c.x[b * c.input + i] * c.w[k * c.input + i];
      for (int64_t i = 0; i < c.hidden; ++i) v += c.h0[b * c.hidden + i] * c.r[k * c.hidden + i];
      want.push_back(static_cast<float>(v >= 0 ? v : 0.2 * v));
    }
  ExpectNear(r->F(1), want, 1e-5f);
}

TEST(RnnTest, ErrorsNameTheProblem) {
  RefConfig c = MakeConfig("LSTM", 1, 80);
  OpTester t("LSTM", 14);
  AddInputs(t, c, false);
  t.Outputs(1);
  t.node().SetInt("hidden_size", c.hidden + 1);
  auto r = t.Run();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("W"), std::string::npos) << r.status().message();

  OpTester a("GRU", 14);
  RefConfig g = MakeConfig("GRU", 1, 81);
  AddInputs(a, g, false);
  a.Outputs(1);
  a.node().SetInt("hidden_size", g.hidden);
  a.node().attrs["activations"].kind = Attribute::Kind::kStrings;
  a.node().attrs["activations"].strings = {"Sigmoid", "Gelu"};
  auto ra = a.Run();
  EXPECT_EQ(ra.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ra.status().message().find("Gelu"), std::string::npos) << ra.status().message();

  OpTester s("RNN", 14);
  RefConfig sc = MakeConfig("RNN", 1, 82);
  sc.lens = {4, 9, 1};
  AddInputs(s, sc, true);
  s.Outputs(1);
  s.node().SetInt("hidden_size", sc.hidden);
  auto rs = s.Run();
  EXPECT_EQ(rs.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(rs.status().message().find("sequence_lens"), std::string::npos) << rs.status().message();
}

}  // namespace
}  // namespace oc
