// Programs over the tensor store: a linear model y = x W + b with a mean
// squared error, trained by each optimiser; every step's parameters against
// the optimiser's rule applied here in double to gradients derived by hand.
#include "train/program.h"

#include <gtest/gtest.h>

#include <cmath>

#include "passes/pass_test_util.h"

namespace oc::train {
namespace {

using testing::Pattern;
using testing::Tensor;

constexpr int64_t kN = 8, kIn = 5, kOut = 3;

Status RunOn(Program& p, std::vector<const void*> feeds, std::vector<void*> fetches, float lr, ThreadPool& pool) {
  return p.Run(feeds, fetches, lr, pool);
}

// loss = mean((x W + b - t)^2); W, b stored, x and t fed. Also fetches y.
std::unique_ptr<Graph> LinearMse() {
  auto g = std::make_unique<Graph>();
  g->opset_imports[""] = 18;
  Value* x = Tensor(*g, "x", {kN, kIn});
  Value* w = Tensor(*g, "w", {kIn, kOut});
  Value* b = Tensor(*g, "b", {kOut});
  Value* t = Tensor(*g, "t", {kN, kOut});
  g->inputs = {x, w, b, t};
  auto op = [&](const std::string& type, std::vector<Value*> in, const std::string& out) {
    Value* o = g->AddValue(out);
    Node* n = g->AddNode(type, out + "_node", std::move(in), {o});
    n->opset = 18;
    return n;
  };
  Value* y = op("Add", {op("MatMul", {x, w}, "xw")->outputs[0], b}, "y")->outputs[0];
  Value* d = op("Sub", {y, t}, "d")->outputs[0];
  Node* mean = op("ReduceMean", {op("Mul", {d, d}, "sq")->outputs[0]}, "loss");
  mean->SetInt("keepdims", 0);
  g->outputs = {mean->outputs[0]};
  return g;
}

struct Data {
  std::vector<float> x = Pattern(kN * kIn, -1, 1, 1), t = Pattern(kN * kOut, -1, 1, 2);
  std::vector<float> w0 = Pattern(kIn * kOut, -0.5f, 0.5f, 3), b0 = Pattern(kOut, -0.1f, 0.1f, 4);
};

// d loss / dW and d loss / db at (w, b), in double.
void Gradients(const Data& d, const std::vector<double>& w, const std::vector<double>& b, std::vector<double>& gw,
               std::vector<double>& gb) {
  gw.assign(w.size(), 0);
  gb.assign(b.size(), 0);
  const double scale = 2.0 / (kN * kOut);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t o = 0; o < kOut; ++o) {
      double y = b[o];
      for (int64_t i = 0; i < kIn; ++i) y += d.x[n * kIn + i] * w[i * kOut + o];
      const double r = scale * (y - d.t[n * kOut + o]);
      gb[o] += r;
      for (int64_t i = 0; i < kIn; ++i) gw[i * kOut + o] += r * d.x[n * kIn + i];
    }
}

struct Reference {
  // One update of x from g with the rule of `spec`, t the 1-based step.
  static void Step(const OptimizerSpec& s, double wd, int64_t t, double lr, std::vector<double>& x,
                   const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (s.kind == OptimizerSpec::Kind::kSgd) {
        double gi = g[i] + wd * x[i];
        if (s.momentum != 0) {
          m[i] = t == 1 ? gi : s.momentum * m[i] + (1 - s.dampening) * gi;
          gi = s.nesterov ? gi + s.momentum * m[i] : m[i];
        }
        x[i] -= lr * gi;
      } else {
        double gi = g[i];
        if (s.decoupled_weight_decay)
          x[i] *= 1 - lr * wd;
        else
          gi += wd * x[i];
        m[i] = s.beta1 * m[i] + (1 - s.beta1) * gi;
        v[i] = s.beta2 * v[i] + (1 - s.beta2) * gi * gi;
        const double c1 = s.bias_correction ? 1 - std::pow(s.beta1, t) : 1;
        const double c2 = s.bias_correction ? 1 - std::pow(s.beta2, t) : 1;
        if (s.epsilon_mode == "raw")
          x[i] -= lr * std::sqrt(c2) / c1 * m[i] / (std::sqrt(v[i]) + s.epsilon);
        else
          x[i] -= lr / c1 * m[i] / (std::sqrt(v[i] / c2) + s.epsilon);
      }
    }
  }
};

std::vector<float> Get(const TensorStore& store, const std::string& name) {
  const StoredTensor* t = store.Find(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return {};
  const float* p = t->data.as<float>();
  return std::vector<float>(p, p + t->bytes() / sizeof(float));
}

void TrainAndCompare(const OptimizerSpec& opt, int steps = 12) {
  Data d;
  TensorStore store;
  ASSERT_TRUE(store.Set("w", DataType::kFloat32, {kIn, kOut}, d.w0.data()).ok());
  ASSERT_TRUE(store.Set("b", DataType::kFloat32, {kOut}, d.b0.data()).ok());
  ProgramSpec spec;
  spec.loss = "loss";
  spec.params = {"w", "b"};
  spec.fetches = {"loss"};
  spec.optimizer = opt;
  auto prog = Program::Compile(LinearMse(), spec, store);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ((*prog)->feeds().size(), 2u);  // x, t
  EXPECT_EQ((*prog)->feeds()[0].name, "x");
  EXPECT_EQ((*prog)->feeds()[1].name, "t");

  std::vector<double> w(d.w0.begin(), d.w0.end()), b(d.b0.begin(), d.b0.end());
  std::vector<double> mw(w.size()), vw(w.size()), mb(b.size()), vb(b.size()), gw, gb;
  const double wd_w = opt.weight_decay.empty() ? 0 : opt.weight_decay[0];
  const double wd_b = opt.weight_decay.empty() ? 0 : opt.weight_decay[1];
  ThreadPool pool(2);
  float first_loss = 0, loss = 0;
  for (int step = 1; step <= steps; ++step) {
    const float lr = 0.05f * (step % 3 + 1);  // a schedule: lr is an input
    ASSERT_TRUE(RunOn(**prog, {d.x.data(), d.t.data()}, {&loss}, lr, pool).ok());
    if (step == 1) first_loss = loss;
    Gradients(d, w, b, gw, gb);
    if (opt.max_grad_norm > 0) {
      double sq = 0;
      for (double g : gw) sq += g * g;
      for (double g : gb) sq += g * g;
      const double c = std::min(1.0, opt.max_grad_norm / (std::sqrt(sq) + 1e-6));
      for (double& g : gw) g *= c;
      for (double& g : gb) g *= c;
    }
    Reference::Step(opt, wd_w, step, lr, w, gw, mw, vw);
    Reference::Step(opt, wd_b, step, lr, b, gb, mb, vb);
    const std::vector<float> got_w = Get(store, "w"), got_b = Get(store, "b");
    for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(got_w[i], w[i], 2e-5) << "w[" << i << "] at step " << step;
    for (size_t i = 0; i < b.size(); ++i) ASSERT_NEAR(got_b[i], b[i], 2e-5) << "b[" << i << "] at step " << step;
  }
  EXPECT_LT(loss, first_loss);
  const StoredTensor* counter = store.Find(opt.step_name);
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(*counter->data.as<int64_t>(), steps);
  if (opt.kind == OptimizerSpec::Kind::kAdam) {
    const std::vector<float> m = Get(store, "moment1.w");
    for (size_t i = 0; i < m.size(); ++i) ASSERT_NEAR(m[i], mw[i], 1e-5) << "moment1.w[" << i << "]";
  }
}

TEST(ProgramTest, PlainSgd) {
  OptimizerSpec s;
  s.kind = OptimizerSpec::Kind::kSgd;
  TrainAndCompare(s);
}

TEST(ProgramTest, MomentumDampeningWeightDecay) {
  OptimizerSpec s;
  s.kind = OptimizerSpec::Kind::kSgd;
  s.momentum = 0.9;
  s.dampening = 0.3;
  s.weight_decay = {0.01, 0.0};
  TrainAndCompare(s);
}

TEST(ProgramTest, NesterovWithClipping) {
  OptimizerSpec s;
  s.kind = OptimizerSpec::Kind::kSgd;
  s.momentum = 0.8;
  s.nesterov = true;
  s.max_grad_norm = 0.05;  // below the gradients' norm: every step is clipped
  TrainAndCompare(s);
}

TEST(ProgramTest, AdamEveryForm) {
  for (const char* mode : {"corrected", "raw"})
    for (bool decoupled : {false, true})
      for (bool bias : {true, false}) {
        SCOPED_TRACE(std::string(mode) + (decoupled ? " decoupled" : " l2") + (bias ? " bias-corrected" : ""));
        OptimizerSpec s;
        s.kind = OptimizerSpec::Kind::kAdam;
        s.epsilon_mode = mode;
        s.decoupled_weight_decay = decoupled;
        s.bias_correction = bias;
        s.epsilon = 1e-3;  // large enough that the two epsilon forms differ
        s.weight_decay = {0.1, 0.02};
        TrainAndCompare(s);
      }
}

TEST(ProgramTest, ReturnGradsThenUpdateOnly) {
  Data d;
  TensorStore store;
  ASSERT_TRUE(store.Set("w", DataType::kFloat32, {kIn, kOut}, d.w0.data()).ok());
  ASSERT_TRUE(store.Set("b", DataType::kFloat32, {kOut}, d.b0.data()).ok());
  ProgramSpec gspec;
  gspec.loss = "loss";
  gspec.params = {"w", "b"};
  gspec.fetches = {"loss", "y"};
  gspec.return_grads = true;
  auto grads = Program::Compile(LinearMse(), gspec, store);
  ASSERT_TRUE(grads.ok()) << grads.status().ToString();
  ASSERT_EQ((*grads)->fetches().size(), 4u);
  EXPECT_EQ((*grads)->fetches()[2].name, "grad.w");
  ProgramSpec uspec;
  uspec.params = {"w", "b"};
  uspec.optimizer.kind = OptimizerSpec::Kind::kSgd;
  uspec.optimizer.momentum = 0.5;
  auto update = Program::Compile(nullptr, uspec, store);
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  ASSERT_EQ((*update)->feeds().size(), 2u);

  float loss;
  std::vector<float> y(kN * kOut), gw(kIn * kOut), gb(kOut);
  ThreadPool pool(1);
  ASSERT_TRUE(RunOn(**grads, {d.x.data(), d.t.data()}, {&loss, y.data(), gw.data(), gb.data()}, 0, pool).ok());
  std::vector<double> w(d.w0.begin(), d.w0.end()), b(d.b0.begin(), d.b0.end()), rw, rb;
  Gradients(d, w, b, rw, rb);
  for (size_t i = 0; i < rw.size(); ++i) EXPECT_NEAR(gw[i], rw[i], 1e-5);
  for (size_t i = 0; i < rb.size(); ++i) EXPECT_NEAR(gb[i], rb[i], 1e-5);
  ASSERT_TRUE(RunOn(**update, {gw.data(), gb.data()}, {}, 0.1f, pool).ok());
  const std::vector<float> w1 = Get(store, "w");
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w1[i], w[i] - 0.1 * rw[i], 1e-6);
}

TEST(ProgramTest, StateUpdatesWriteBack) {
  // s <- s + x after every run (how batch norm's running statistics are kept).
  auto g = std::make_unique<Graph>();
  g->opset_imports[""] = 18;
  Value* x = Tensor(*g, "x", {4});
  Value* s = Tensor(*g, "s", {4});
  g->inputs = {x, s};
  Value* sum = g->AddValue("sum");
  g->AddNode("Add", "add", {s, x}, {sum})->opset = 18;
  g->outputs = {sum};
  TensorStore store;
  ASSERT_TRUE(store.Set("s", DataType::kFloat32, {4}, nullptr).ok());
  ProgramSpec spec;
  spec.state_updates = {{"sum", "s"}};
  auto p = Program::Compile(std::move(g), spec, store);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<float> in = {1, 2, 3, 4};
  ThreadPool pool(1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunOn(**p, {in.data()}, {}, 0, pool).ok());
  EXPECT_EQ(Get(store, "s"), (std::vector<float>{3, 6, 9, 12}));
}

TEST(ProgramTest, ErrorsNameWhatIsWrong) {
  Data d;
  TensorStore store;
  ASSERT_TRUE(store.Set("w", DataType::kFloat32, {kOut, kIn}, d.w0.data()).ok());  // transposed
  ASSERT_TRUE(store.Set("b", DataType::kFloat32, {kOut}, d.b0.data()).ok());
  ProgramSpec spec;
  spec.loss = "loss";
  spec.params = {"w", "b"};
  spec.optimizer.kind = OptimizerSpec::Kind::kSgd;
  auto bad_shape = Program::Compile(LinearMse(), spec, store);
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_NE(bad_shape.status().message().find("'w' has shape [5,3] but the stored tensor is float32 [3,5]"),
            std::string::npos)
      << bad_shape.status().ToString();

  ASSERT_TRUE(store.Set("w", DataType::kFloat32, {kIn, kOut}, d.w0.data()).ok());
  ProgramSpec unknown = spec;
  unknown.fetches = {"nope"};
  auto no_fetch = Program::Compile(LinearMse(), unknown, store);
  ASSERT_FALSE(no_fetch.ok());
  EXPECT_NE(no_fetch.status().message().find("fetch 'nope'"), std::string::npos);

  ProgramSpec bad_opt = spec;
  bad_opt.optimizer.nesterov = true;  // without momentum
  auto nesterov = Program::Compile(LinearMse(), bad_opt, store);
  ASSERT_FALSE(nesterov.ok());
  EXPECT_NE(nesterov.status().message().find("Nesterov"), std::string::npos);

  // A stored tensor re-shaped after compiling: the run refuses, naming it.
  auto p = Program::Compile(LinearMse(), spec, store);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(store.Set("b", DataType::kFloat32, {kOut + 1}, nullptr).ok());
  ThreadPool pool(1);
  Status st = RunOn(**p, {d.x.data(), d.t.data()}, {}, 0.1f, pool);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("stored tensor 'b' is now float32 [4]"), std::string::npos) << st.ToString();
  ASSERT_TRUE(store.Remove("b").ok());
  st = RunOn(**p, {d.x.data(), d.t.data()}, {}, 0.1f, pool);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'b'"), std::string::npos) << st.ToString();
  // Wrong number of feeds.
  EXPECT_FALSE(RunOn(**p, {d.x.data()}, {}, 0.1f, pool).ok());
}

}  // namespace
}  // namespace oc::train
