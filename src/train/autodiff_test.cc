// Every gradient rule against central finite differences at float64: a graph
// y = f(x1, x2, ...), the loss sum(y * r) for a fixed random r (so that every
// element of dy differs), its gradients from AppendGradients compiled and run
// like any model, and (L(x + e) - L(x - e)) / 2e from the forward graph alone.
#include "train/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "passes/pass_test_util.h"
#include "passes/passes.h"
#include "passes/pipeline.h"

namespace oc::train {
namespace {

using testing::Tensor;

struct Input {
  std::vector<int64_t> shape;
  double lo = -2, hi = 2;
  bool away_from_zero = false;  // |x| >= 0.2 (kinks at 0: Relu, Abs, ...)
  bool distinct = false;        // a shuffle of -n/2, -n/2 + 1, ...: maxima stay put under a step < 0.5
};

// Builds the forward computation on the graph's inputs; returns y.
using Build = std::function<Value*(Graph&, const std::vector<Value*>&)>;

// float64 by default; float32 for the ops whose kernels are float32 only
// (Conv, ConvTranspose, the pools): those are linear, or piecewise linear
// between kinks the inputs keep away from, so a large step stays exact.
struct Check {
  DataType dtype = DataType::kFloat64;
  double eps = 1e-6, atol = 1e-6, rtol = 1e-5;
};
const Check kFloat32Linear{DataType::kFloat32, 0.25, 2e-3, 2e-3};

Node* Add(Graph& g, const std::string& op, std::vector<Value*> in, size_t outs = 1, int opset = 18) {
  std::vector<Value*> o;
  for (size_t i = 0; i < outs; ++i) o.push_back(g.AddValue(g.UniqueName(op + "_out")));
  Node* n = g.AddNode(op, g.UniqueName(op), std::move(in), o);
  n->opset = opset;
  return n;
}
Value* Op(Graph& g, const std::string& op, std::vector<Value*> in) { return Add(g, op, std::move(in))->outputs[0]; }

Value* Ints(Graph& g, std::vector<int64_t> v) {
  return testing::Const<int64_t>(g, g.UniqueName("ints"), {static_cast<int64_t>(v.size())}, v);
}
Value* Doubles(Graph& g, std::vector<int64_t> shape, std::vector<double> v) {
  return testing::Const<double>(g, g.UniqueName("c"), std::move(shape), v);
}

std::vector<double> Random(size_t n, const Input& in, uint32_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  if (in.distinct) {
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) - static_cast<double>(n / 2);
    for (size_t i = n; i > 1; --i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(v[i - 1], v[(s >> 33) % i]);
    }
    return v;
  }
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
    x = in.lo + (in.hi - in.lo) * u;
    if (in.away_from_zero && std::fabs(x) < 0.2) x = x < 0 ? x - 0.2 : x + 0.2;
  }
  return v;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The loss graph: inputs x_i, y = build(x), loss = ReduceSum(y * r).
struct LossGraph {
  std::shared_ptr<Graph> graph;
  std::vector<Value*> inputs;
  Value* loss = nullptr;
};

// A constant of `dtype` from doubles.
Value* Typed(Graph& g, std::vector<int64_t> shape, const std::vector<double>& v, DataType dtype) {
  if (dtype == DataType::kFloat64) return Doubles(g, std::move(shape), v);
  std::vector<float> f(v.begin(), v.end());
  return testing::Const<float>(g, g.UniqueName("c"), std::move(shape), f);
}

Expected<LossGraph> MakeLoss(const Build& build, const std::vector<Input>& ins, DataType dtype) {
  LossGraph lg;
  lg.graph = std::make_shared<Graph>();
  Graph& g = *lg.graph;
  g.name = "f";
  g.opset_imports[""] = 23;
  for (size_t i = 0; i < ins.size(); ++i) {
    lg.inputs.push_back(Tensor(g, "x" + std::to_string(i), ins[i].shape, dtype));
    g.inputs.push_back(lg.inputs.back());
  }
  Value* y = build(g, lg.inputs);
  // y's shape, to size r.
  OC_RETURN_IF_ERROR(RunShapeInference(g, CompileOptions{}));
  if (!y->IsStatic()) return Internal("y has no static shape");
  Value* r = Typed(g, y->shape, Random(static_cast<size_t>(y->NumElements()), Input{{}, -1, 1}, 99), dtype);
  Node* sum = Add(g, "ReduceSum", {Op(g, "Mul", {y, r})});
  sum->SetInt("keepdims", 0);
  lg.loss = sum->outputs[0];
  return lg;
}

Expected<std::vector<std::vector<double>>> Run(std::shared_ptr<Graph> g, const std::vector<std::vector<double>>& in,
                                               DataType dtype) {
  CompileOptions opts;
  opts.verify_each_pass = true;
  OC_RETURN_IF_ERROR(RunPipeline(*g, opts));
  OC_ASSIGN_OR_RETURN(std::shared_ptr<Executable> exe, Executable::Create(g));
  OC_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionContext> ctx, exe->NewContext());
  const bool f32 = dtype == DataType::kFloat32;
  std::vector<std::vector<double>> out(exe->num_outputs());
  std::vector<std::vector<float>> in32, out32(out.size());
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (const auto& v : in) {
    if (f32) {
      in32.emplace_back(v.begin(), v.end());
      ip.push_back(in32.back().data());
    } else {
      ip.push_back(v.data());
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].resize(static_cast<size_t>(exe->output(i).NumElements()));
    out32[i].resize(out[i].size());
    op.push_back(f32 ? static_cast<void*>(out32[i].data()) : out[i].data());
  }
  ThreadPool pool(1);
  OC_RETURN_IF_ERROR(exe->Run(*ctx, ip, op, pool));
  if (f32)
    for (size_t i = 0; i < out.size(); ++i) out[i].assign(out32[i].begin(), out32[i].end());
  return out;
}

// Gradients by AppendGradients against central differences, every element.
void CheckGradients(const Build& build, const std::vector<Input>& ins, const Check& check = {}) {
  std::vector<std::vector<double>> x;
  for (size_t i = 0; i < ins.size(); ++i)
    x.push_back(Random(static_cast<size_t>(Count(ins[i].shape)), ins[i], static_cast<uint32_t>(i + 1)));

  auto with_grads = MakeLoss(build, ins, check.dtype);
  ASSERT_TRUE(with_grads.ok()) << with_grads.status().ToString();
  LossGraph lg = std::move(with_grads).value();
  auto grads = AppendGradients(*lg.graph, lg.loss, lg.inputs);
  ASSERT_TRUE(grads.ok()) << grads.status().ToString();
  lg.graph->outputs = {lg.loss};
  for (Value* gv : *grads) lg.graph->outputs.push_back(gv);
  auto got = Run(lg.graph, x, check.dtype);
  ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << lg.graph->Dump();

  auto loss_at = [&](const std::vector<std::vector<double>>& at) -> double {
    auto f = MakeLoss(build, ins, check.dtype);
    EXPECT_TRUE(f.ok());
    f->graph->outputs = {f->loss};
    auto r = Run(f->graph, at, check.dtype);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0][0] : NAN;
  };
  const double eps = check.eps;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ((*got)[i + 1].size(), x[i].size()) << "gradient " << i << " has the wrong size";
    for (size_t j = 0; j < x[i].size(); ++j) {
      auto plus = x, minus = x;
      plus[i][j] += eps;
      minus[i][j] -= eps;
      const double fd = (loss_at(plus) - loss_at(minus)) / (2 * eps);
      const double g = (*got)[i + 1][j];
      EXPECT_NEAR(g, fd, check.atol + check.rtol * std::fabs(fd)) << "d loss / d x" << i << "[" << j << "]";
    }
  }
}

Build Unary(const std::string& op, int opset = 18, std::function<void(Node*)> set = {}) {
  return [=](Graph& g, const std::vector<Value*>& x) {
    Node* n = Add(g, op, {x[0]}, 1, opset);
    if (set) set(n);
    return n->outputs[0];
  };
}
Build Binary(const std::string& op) {
  return [=](Graph& g, const std::vector<Value*>& x) { return Op(g, op, {x[0], x[1]}); };
}

TEST(Autodiff, BinaryWithBroadcasting) {
  CheckGradients(Binary("Add"), {{{2, 3, 4}}, {{3, 1}}});
  CheckGradients(Binary("Sub"), {{{2, 3}}, {{3}}});
  CheckGradients(Binary("Mul"), {{{4, 1, 3}}, {{1, 5, 3}}});
  CheckGradients(Binary("Div"), {{{3, 4}}, {{4}, 0.5, 2}});
  CheckGradients(Binary("Pow"), {{{3, 4}, 0.5, 2}, {{4}, -1, 2}});
}

TEST(Autodiff, VariadicAndSelect) {
  CheckGradients([](Graph& g, const std::vector<Value*>& x) { return Op(g, "Sum", {x[0], x[1], x[2]}); },
                 {{{2, 3}}, {{3}}, {{2, 1}}});
  CheckGradients(Binary("Max"), {{{3, 4}}, {{3, 4}}});
  CheckGradients(Binary("Min"), {{{3, 4}}, {{4}}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        std::vector<uint8_t> c = {1, 0, 0, 1, 1, 0};
        Value* cond = g.AddConstant("cond", DataType::kBool, {2, 3}, TensorData::Copy(c.data(), c.size()));
        return Op(g, "Where", {cond, x[0], x[1]});
      },
      {{{2, 3}}, {{3}}});
}

TEST(Autodiff, UnaryAndActivations) {
  const Input any{{2, 5}}, positive{{2, 5}, 0.5, 3}, kinked{{2, 5}, -2, 2, true};
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Neg", "Erf", "Sin", "Cos", "Softplus"})
    CheckGradients(Unary(op), {any});
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) CheckGradients(Unary(op), {positive});
  for (const char* op : {"Relu", "Abs", "Elu", "Floor"}) CheckGradients(Unary(op), {kinked});
  CheckGradients(Unary("LeakyRelu", 18, [](Node* n) { n->SetFloat("alpha", 0.3f); }), {kinked});
  CheckGradients(Unary("Gelu", 20), {any});
  CheckGradients(Unary("Gelu", 20, [](Node* n) { n->SetString("approximate", "tanh"); }), {any});
  // alpha x + beta away from 0 and 1 (the kinks): x in (-2, 2) minus a band
  CheckGradients(Unary("HardSigmoid", 18, [](Node* n) { n->SetFloat("alpha", 0.2f); }), {{{2, 5}, -1.8, 1.8}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Value* lo = Doubles(g, {}, {-0.5});
        Value* hi = Doubles(g, {}, {0.7});
        return Op(g, "Clip", {x[0], lo, hi});
      },
      {{{3, 4}, -1.5, 1.5}});
}

TEST(Autodiff, MatMulShapes) {
  CheckGradients(Binary("MatMul"), {{{3, 4}}, {{4, 5}}});
  CheckGradients(Binary("MatMul"), {{{2, 3, 4}}, {{4, 5}}});
  CheckGradients(Binary("MatMul"), {{{4}}, {{4, 5}}});
  CheckGradients(Binary("MatMul"), {{{3, 4}}, {{4}}});
  CheckGradients(Binary("MatMul"), {{{2, 1, 3, 4}}, {{3, 4, 2}}});
}

TEST(Autodiff, GemmEveryTransposition) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (std::vector<int64_t> c : {std::vector<int64_t>{5}, {3, 5}, {1, 5}}) {
        auto build = [=](Graph& g, const std::vector<Value*>& x) {
          Node* n = Add(g, "Gemm", {x[0], x[1], x[2]});
          n->SetInt("transA", ta);
          n->SetInt("transB", tb);
          n->SetFloat("alpha", 0.5f);
          n->SetFloat("beta", 2.f);
          return n->outputs[0];
        };
        std::vector<int64_t> a = ta ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4};
        std::vector<int64_t> bs = tb ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5};
        SCOPED_TRACE(::testing::Message() << "transA " << ta << " transB " << tb << " C rank " << c.size());
        CheckGradients(build, {{a}, {bs}, {c}});
      }
}

TEST(Autodiff, ShapeAndDataMovement) {
  CheckGradients([](Graph& g, const std::vector<Value*>& x) { return Op(g, "Reshape", {x[0], Ints(g, {4, -1})}); },
                 {{{2, 3, 2}}});
  CheckGradients(Unary("Flatten", 18, [](Node* n) { n->SetInt("axis", 2); }), {{{2, 3, 2, 2}}});
  CheckGradients([](Graph& g, const std::vector<Value*>& x) { return Op(g, "Squeeze", {x[0], Ints(g, {1})}); },
                 {{{3, 1, 4}}});
  CheckGradients([](Graph& g, const std::vector<Value*>& x) { return Op(g, "Unsqueeze", {x[0], Ints(g, {0, 3})}); },
                 {{{3, 4}}});
  CheckGradients(Unary("Transpose", 18, [](Node* n) { n->SetInts("perm", {2, 0, 1}); }), {{{2, 3, 4}}});
  CheckGradients(Unary("Identity"), {{{3}}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Node* n = Add(g, "Concat", {x[0], x[1], x[2]});
        n->SetInt("axis", 1);
        return n->outputs[0];
      },
      {{{2, 1, 3}}, {{2, 4, 3}}, {{2, 2, 3}}});
  // Split with an output the loss does not use (its gradient is zeros).
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Node* s = Add(g, "Split", {x[0], Ints(g, {1, 2, 1})}, 3);
        s->SetInt("axis", 1);
        Node* c = Add(g, "Concat", {s->outputs[2], s->outputs[0]});
        c->SetInt("axis", 1);
        return c->outputs[0];
      },
      {{{2, 4, 3}}});
  CheckGradients([](Graph& g, const std::vector<Value*>& x) { return Op(g, "Expand", {x[0], Ints(g, {2, 3, 4})}); },
                 {{{3, 1}}});
}

Build Reduce(const std::string& op, std::vector<int64_t> axes, int keepdims) {
  return [=](Graph& g, const std::vector<Value*>& x) {
    Node* n = Add(g, op, {x[0], Ints(g, axes)});
    n->SetInt("keepdims", keepdims);
    return n->outputs[0];
  };
}

TEST(Autodiff, ReductionsAndSoftmax) {
  const Input in{{2, 3, 4}};
  CheckGradients(Reduce("ReduceSum", {1}, 0), {in});
  CheckGradients(Reduce("ReduceMean", {0, 2}, 1), {in});
  CheckGradients(Reduce("ReduceMax", {2}, 0), {in});
  CheckGradients(Reduce("ReduceMin", {-1}, 1), {in});
  CheckGradients(Reduce("ReduceSumSquare", {0}, 0), {in});
  CheckGradients(Reduce("ReduceL2", {1, 2}, 0), {in});
  CheckGradients(Reduce("ReduceLogSumExp", {1}, 1), {in});
  CheckGradients(Unary("Softmax", 18, [](Node* n) { n->SetInt("axis", 1); }), {in});
  CheckGradients(Unary("LogSoftmax", 18), {in});
  // Before opset 13 the softmax normalises the 2-D view at `axis`.
  CheckGradients(Unary("Softmax", 11, [](Node* n) { n->SetInt("axis", 1); }), {in});
  CheckGradients(Unary("LogSoftmax", 11, [](Node* n) { n->SetInt("axis", 1); }), {in});
}

// A value read by several nodes gets the sum of their gradients; a small MLP
// with a log-softmax cross-entropy end to end.
TEST(Autodiff, SharedValuesAndAnMlp) {
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        return Op(g, "Add", {Op(g, "Mul", {x[0], x[0]}), Op(g, "Tanh", {x[0]})});
      },
      {{{3, 2}}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Value* h = Op(g, "Relu", {Op(g, "Gemm", {x[0], x[1], x[2]})});
        Value* logits = Op(g, "Gemm", {h, x[3], x[4]});
        Node* ls = Add(g, "LogSoftmax", {logits});
        ls->SetInt("axis", 1);
        std::vector<double> onehot = {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1};
        Value* labels = Doubles(g, {4, 3}, onehot);
        Node* mean = Add(g, "ReduceMean", {Op(g, "Mul", {ls->outputs[0], labels})});
        mean->SetInt("keepdims", 0);
        return Op(g, "Neg", {mean->outputs[0]});
      },
      {{{4, 5}}, {{5, 6}}, {{6}}, {{6, 3}}, {{3}}});
}

Build WithAttrs(const std::string& op, size_t inputs, std::function<void(Node*)> set, int opset = 18) {
  return [=](Graph& g, const std::vector<Value*>& x) {
    std::vector<Value*> in(x.begin(), x.begin() + static_cast<long>(inputs));
    Node* n = Add(g, op, in, 1, opset);
    set(n);
    return n->outputs[0];
  };
}

TEST(Autodiff, ConvEveryGeometry) {
  struct Geo {
    std::vector<int64_t> x, w;
    std::vector<int64_t> strides, pads, dilations;
    int64_t group;
    std::string auto_pad;
  };
  const Geo geos[] = {
      {{2, 3, 6, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, ""},
      {{1, 2, 7, 7}, {3, 2, 3, 2}, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1, ""},
      {{1, 4, 6, 6}, {4, 2, 3, 3}, {1, 2}, {0, 0, 0, 0}, {2, 1}, 2, ""},
      {{2, 3, 5, 5}, {3, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3, ""},  // depthwise
      {{1, 2, 5, 6}, {2, 2, 2, 2}, {2, 2}, {}, {1, 1}, 1, "SAME_UPPER"},
      {{2, 2, 9}, {3, 2, 3}, {2}, {1, 1}, {1}, 1, ""},  // 1-D
  };
  for (const Geo& geo : geos) {
    SCOPED_TRACE(::testing::Message() << "x rank " << geo.x.size() << " group " << geo.group << " stride "
                                      << geo.strides[0]);
    auto set = [&](Node* n) {
      n->SetInts("strides", geo.strides);
      n->SetInts("dilations", geo.dilations);
      n->SetInt("group", geo.group);
      if (!geo.auto_pad.empty()) n->SetString("auto_pad", geo.auto_pad);
      else n->SetInts("pads", geo.pads);
    };
    CheckGradients(WithAttrs("Conv", 3, set), {{geo.x}, {geo.w}, {{geo.w[0]}}}, kFloat32Linear);
  }
}

TEST(Autodiff, ConvTranspose) {
  struct Geo {
    std::vector<int64_t> x, w, strides, pads, dilations, output_padding;
    int64_t group;
  };
  const Geo geos[] = {
      {{2, 3, 4, 3}, {3, 2, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, {0, 0}, 1},
      {{1, 2, 3, 4}, {2, 3, 3, 2}, {2, 2}, {1, 0, 0, 1}, {1, 1}, {1, 0}, 1},
      {{1, 4, 3, 3}, {4, 1, 3, 3}, {2, 1}, {0, 0, 0, 0}, {1, 2}, {0, 0}, 2},
      {{2, 2, 5}, {2, 3, 3}, {2}, {1, 1}, {1}, {1}, 1},
  };
  for (const Geo& geo : geos) {
    SCOPED_TRACE(::testing::Message() << "x rank " << geo.x.size() << " group " << geo.group);
    auto set = [&](Node* n) {
      n->SetInts("strides", geo.strides);
      n->SetInts("dilations", geo.dilations);
      n->SetInts("pads", geo.pads);
      n->SetInts("output_padding", geo.output_padding);
      n->SetInt("group", geo.group);
    };
    CheckGradients(WithAttrs("ConvTranspose", 3, set), {{geo.x}, {geo.w}, {{geo.w[1] * geo.group}}}, kFloat32Linear);
  }
}

TEST(Autodiff, Pools) {
  auto pool = [](const char* op, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                 int include_pad = 0) {
    return WithAttrs(op, 1, [=](Node* n) {
      n->SetInts("kernel_shape", k);
      n->SetInts("strides", s);
      n->SetInts("pads", p);
      if (include_pad) n->SetInt("count_include_pad", 1);
    });
  };
  const Input distinct{{2, 3, 6, 5}, -2, 2, false, true};
  CheckGradients(pool("MaxPool", {2, 2}, {2, 2}, {0, 0, 0, 1}), {distinct}, kFloat32Linear);
  CheckGradients(pool("MaxPool", {3, 3}, {1, 1}, {1, 1, 1, 1}), {distinct}, kFloat32Linear);  // overlapping
  CheckGradients(pool("AveragePool", {3, 2}, {2, 1}, {1, 0, 1, 1}), {{{2, 3, 6, 5}}}, kFloat32Linear);
  CheckGradients(pool("AveragePool", {3, 3}, {2, 2}, {1, 1, 1, 1}, 1), {{{1, 2, 5, 5}}}, kFloat32Linear);
  CheckGradients(Unary("GlobalAveragePool"), {{{2, 3, 4, 5}}}, kFloat32Linear);
  CheckGradients(Unary("GlobalMaxPool"), {distinct}, kFloat32Linear);
}

TEST(Autodiff, Normalisations) {
  // BatchNormalization with running statistics (every input) and with batch statistics.
  CheckGradients(WithAttrs("BatchNormalization", 5, [](Node* n) { n->SetFloat("epsilon", 1e-3f); }),
                 {{{2, 3, 4, 2}}, {{3}}, {{3}}, {{3}}, {{3}, 0.5, 2}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Value* mean = Doubles(g, {3}, {0.1, -0.2, 0.3});
        Value* var = Doubles(g, {3}, {1.0, 0.5, 2.0});
        Node* n = Add(g, "BatchNormalization", {x[0], x[1], x[2], mean, var}, 1, 15);
        n->SetInt("training_mode", 1);
        return n->outputs[0];
      },
      {{{4, 3, 2, 2}}, {{3}}, {{3}}});
  CheckGradients(WithAttrs("LayerNormalization", 3, [](Node* n) { n->SetInt("axis", -1); }),
                 {{{2, 3, 5}}, {{5}}, {{5}}});
  CheckGradients(WithAttrs("LayerNormalization", 3, [](Node* n) { n->SetInt("axis", 1); }),
                 {{{2, 3, 4}}, {{3, 4}}, {{4}}});
  CheckGradients(WithAttrs("RMSNormalization", 2, [](Node* n) { n->SetInt("axis", -1); }, 23),
                 {{{2, 3, 5}}, {{5}}});
  CheckGradients(WithAttrs("RMSNormalization", 2, [](Node* n) { n->SetInt("axis", 1); }, 23),
                 {{{2, 3, 4}}, {{3, 4}}});
}

TEST(Autodiff, Losses) {
  for (const char* reduction : {"mean", "sum", "none"})
    for (bool weighted : {false, true})
      for (bool ignore : {false, true}) {
        SCOPED_TRACE(::testing::Message() << reduction << (weighted ? " weighted" : "") << (ignore ? " ignore" : ""));
        auto loss = [=](const char* op) {
          return [=](Graph& g, const std::vector<Value*>& x) {
            std::vector<int64_t> labels = {2, 0, 1, 2, 1, 0};  // [3, 2]
            Value* t = testing::Const<int64_t>(g, "labels", {3, 2}, labels);
            std::vector<Value*> in = {x[0], t};
            if (weighted) in.push_back(Doubles(g, {4}, {0.5, 2.0, 1.0, 3.0}));
            Node* n = Add(g, op, in, 1, 13);
            n->SetString("reduction", reduction);
            if (ignore) n->SetInt("ignore_index", 1);
            return n->outputs[0];
          };
        };
        CheckGradients(loss("SoftmaxCrossEntropyLoss"), {{{3, 4, 2}}});
        CheckGradients(loss("NegativeLogLikelihoodLoss"), {{{3, 4, 2}}});
      }
  // Through the log-probabilities output as well.
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Value* t = testing::Const<int64_t>(g, "labels", {3}, std::vector<int64_t>{1, 0, 3});
        Node* n = Add(g, "SoftmaxCrossEntropyLoss", {x[0], t}, 2, 13);
        return Op(g, "Add", {Op(g, "ReduceSum", {n->outputs[1]}), n->outputs[0]});
      },
      {{{3, 4}}});
}

TEST(Autodiff, GatherSliceDropout) {
  auto gather = [](int64_t axis, std::vector<int64_t> ishape, std::vector<int64_t> idx) {
    return [=](Graph& g, const std::vector<Value*>& x) {
      Value* i = testing::Const<int64_t>(g, "idx", ishape, idx);
      Node* n = Add(g, "Gather", {x[0], i});
      n->SetInt("axis", axis);
      return n->outputs[0];
    };
  };
  CheckGradients(gather(0, {2, 3}, {4, 0, 4, -1, 2, 0}), {{{5, 3}}});  // repeated and negative rows
  CheckGradients(gather(1, {2}, {2, 0}), {{{2, 3, 4}}});
  CheckGradients(gather(2, {3}, {1, 1, 3}), {{{2, 3, 4}}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        return Op(g, "Slice", {x[0], Ints(g, {1, -3}), Ints(g, {3, 100}), Ints(g, {0, 2})});
      },
      {{{4, 2, 5}}});
  CheckGradients(Unary("Dropout"), {{{3, 4}}});
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Value* ratio = Doubles(g, {}, {0.25});
        std::vector<uint8_t> on = {1};
        Value* mode = g.AddConstant("mode", DataType::kBool, {}, TensorData::Copy(on.data(), 1));
        Node* n = Add(g, "Dropout", {x[0], ratio, mode}, 2);
        n->SetInt("seed", 7);  // the same mask in every run
        return n->outputs[0];
      },
      {{{3, 4}}});
}

TEST(Autodiff, RefusesWhatItCannotDifferentiate) {
  Graph g;
  g.opset_imports[""] = 18;
  Value* x = Tensor(g, "x", {2, 3}, DataType::kFloat64);
  g.inputs = {x};
  Value* y = Op(g, "Softsign", {x});
  Node* s = Add(g, "ReduceSum", {y});
  s->SetInt("keepdims", 0);
  auto r = AppendGradients(g, s->outputs[0], {x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("no gradient rule for Softsign"), std::string::npos) << r.status().message();

  // A loss with more than one element needs a seed.
  Graph h;
  h.opset_imports[""] = 18;
  Value* z = Tensor(h, "z", {2, 3}, DataType::kFloat64);
  h.inputs = {z};
  Value* t = Op(h, "Tanh", {z});
  auto e = AppendGradients(h, t, {z});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("must have one element"), std::string::npos) << e.status().message();

  // Integer values are not differentiable by.
  Graph k;
  k.opset_imports[""] = 18;
  Value* i = Tensor(k, "i", {2}, DataType::kInt64);
  k.inputs = {i};
  Node* cast = Add(k, "Cast", {i});
  cast->SetInt("to", static_cast<int64_t>(DataType::kFloat64));
  Value* c = cast->outputs[0];
  auto q = AppendGradients(k, c, {i});
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("cannot differentiate by 'i'"), std::string::npos) << q.status().message();
}

// Paths the loss does not take need no rules: an op without one off the path is fine.
TEST(Autodiff, OnlyThePathToTheLossIsDifferentiated) {
  CheckGradients(
      [](Graph& g, const std::vector<Value*>& x) {
        Op(g, "Softsign", {x[0]});  // dead: no rule needed
        return Op(g, "Mul", {x[0], x[1]});
      },
      {{{2, 2}}, {{2, 2}}});
}

}  // namespace
}  // namespace oc::train
