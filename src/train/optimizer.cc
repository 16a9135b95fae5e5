#include "train/optimizer.h"

#include <cmath>

#include "ops/grad.h"
#include "ops/op_registry.h"

namespace oc::train {

size_t OptimizerSpec::StatesPerParam() const {
  switch (kind) {
    case Kind::kSgd: return momentum != 0 ? 1 : 0;
    case Kind::kAdam: return 2;
    case Kind::kNone: return 0;
  }
  return 0;
}

std::vector<std::string> OptimizerSpec::StatePrefixes() const {
  if (!state_prefixes.empty()) return state_prefixes;
  if (kind == Kind::kAdam) return {"moment1.", "moment2."};
  if (StatesPerParam() == 1) return {"moments."};
  return {};
}

Status OptimizerSpec::Validate(size_t num_params) const {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  if (kind == Kind::kNone) return InvalidArgument("optimizer: no optimizer kind given (sgd or adam)");
  if (!finite_nonneg(momentum)) return InvalidArgument("optimizer: momentum must be >= 0, got ", momentum);
  if (!(dampening >= 0 && dampening <= 1)) return InvalidArgument("optimizer: dampening must be in [0, 1], got ", dampening);
  if (nesterov && (momentum <= 0 || dampening != 0))
    return InvalidArgument("optimizer: Nesterov momentum requires momentum > 0 and dampening 0 (got momentum ",
                           momentum, ", dampening ", dampening, ")");
  if (!(beta1 >= 0 && beta1 < 1)) return InvalidArgument("optimizer: beta1 must be in [0, 1), got ", beta1);
  if (!(beta2 >= 0 && beta2 < 1)) return InvalidArgument("optimizer: beta2 must be in [0, 1), got ", beta2);
  if (!(epsilon > 0) || !std::isfinite(epsilon)) return InvalidArgument("optimizer: epsilon must be > 0, got ", epsilon);
  if (epsilon_mode != "corrected" && epsilon_mode != "raw")
    return InvalidArgument("optimizer: epsilon_mode must be \"corrected\" or \"raw\", got \"", epsilon_mode, "\"");
  if (!weight_decay.empty() && weight_decay.size() != num_params)
    return InvalidArgument("optimizer: ", weight_decay.size(), " weight_decay values for ", num_params, " parameters");
  for (double wd : weight_decay)
    if (!finite_nonneg(wd)) return InvalidArgument("optimizer: weight_decay must be >= 0, got ", wd);
  if (!finite_nonneg(max_grad_norm)) return InvalidArgument("optimizer: max_grad_norm must be >= 0, got ", max_grad_norm);
  if (!state_prefixes.empty() && state_prefixes.size() != StatesPerParam())
    return InvalidArgument("optimizer: ", state_prefixes.size(), " state name prefixes for ", StatesPerParam(),
                           " state tensors per parameter");
  if (step_name.empty()) return InvalidArgument("optimizer: the step counter needs a name");
  return Status::Ok();
}

namespace {

Value* Input(Graph& g, const std::string& name, DataType dtype, const std::vector<int64_t>& shape) {
  Value* v = g.AddValue(name);
  v->dtype = dtype;
  v->has_shape = true;
  v->shape = shape;
  v->dim_params.assign(shape.size(), "");
  g.inputs.push_back(v);
  return v;
}

// The gradients scaled so that their global L2 norm is at most max_norm.
std::vector<Value*> ClipByGlobalNorm(GradBuilder& b, const std::vector<Value*>& grads, double max_norm) {
  std::vector<Value*> squares;
  for (Value* g : grads) {
    Value* s = b.Op("ReduceSumSquare", {g}, {{"keepdims", GradBuilder::Int(0)}});
    if (g->dtype != DataType::kFloat32)
      s = b.Op("Cast", {s}, {{"to", GradBuilder::Int(static_cast<int64_t>(DataType::kFloat32))}});
    squares.push_back(s);
  }
  Value* total = squares.size() == 1 ? squares[0] : b.Op("Sum", squares);
  Value* norm = b.Op("Sqrt", {total});
  Value* ratio = b.Op("Div", {b.Scalar(max_norm, DataType::kFloat32),
                              b.Op("Add", {norm, b.Scalar(1e-6, DataType::kFloat32)})});
  Value* coef = b.Op("Min", {ratio, b.Scalar(1.0, DataType::kFloat32)});
  std::vector<Value*> out;
  for (Value* g : grads) {
    Value* c = coef;
    if (g->dtype != DataType::kFloat32)
      c = b.Op("Cast", {coef}, {{"to", GradBuilder::Int(static_cast<int64_t>(g->dtype))}});
    out.push_back(b.Op("Mul", {g, c}));
  }
  return out;
}

}  // namespace

Expected<UpdateGraph> BuildUpdateGraph(const std::vector<ParamInfo>& params, const OptimizerSpec& spec) {
  OC_RETURN_IF_ERROR(spec.Validate(params.size()));
  UpdateGraph ug;
  ug.graph = std::make_shared<Graph>();
  Graph& g = *ug.graph;
  g.name = "optimizer";
  g.opset_imports[""] = GradBuilder::kOpset;
  g.opset_imports[kOpenCannDomain] = 1;
  Value* lr = Input(g, "lr", DataType::kFloat32, {});
  Value* step = Input(g, spec.step_name, DataType::kInt64, {});
  const std::vector<std::string> prefixes = spec.StatePrefixes();
  const size_t k = spec.StatesPerParam();
  std::vector<Value*> xs, grads;
  std::vector<std::vector<Value*>> states(params.size());
  for (size_t p = 0; p < params.size(); ++p) {
    const ParamInfo& pi = params[p];
    if (pi.dtype != DataType::kFloat32 && pi.dtype != DataType::kFloat64)
      return NotSupported("optimizer: parameter '", pi.name, "' is ", DataTypeName(pi.dtype),
                          " (trained parameters are float32 or float64)");
    xs.push_back(Input(g, pi.name, pi.dtype, pi.shape));
    grads.push_back(Input(g, "grad." + pi.name, pi.dtype, pi.shape));
    for (size_t s = 0; s < k; ++s) states[p].push_back(Input(g, prefixes[s] + pi.name, pi.dtype, pi.shape));
  }
  GradBuilder b(g, "optimizer/");
  if (spec.max_grad_norm > 0 && !grads.empty()) grads = ClipByGlobalNorm(b, grads, spec.max_grad_norm);
  const bool adam = spec.kind == OptimizerSpec::Kind::kAdam;
  for (size_t p = 0; p < params.size(); ++p) {
    std::vector<Value*> in = {lr, step, xs[p], grads[p]};
    std::vector<Value*> out = {g.AddValue(g.UniqueName(params[p].name + "/updated"))};
    for (Value* s : states[p]) {
      in.push_back(s);
      out.push_back(g.AddValue(g.UniqueName(s->name + "/updated")));
    }
    Node* n = g.AddNode(adam ? "AdamUpdate" : "SGDUpdate", g.UniqueName("optimizer/" + params[p].name), in, out,
                        kOpenCannDomain);
    n->opset = 1;
    n->SetFloat("weight_decay", static_cast<float>(spec.weight_decay.empty() ? 0.0 : spec.weight_decay[p]));
    if (adam) {
      n->SetFloat("beta1", static_cast<float>(spec.beta1));
      n->SetFloat("beta2", static_cast<float>(spec.beta2));
      n->SetFloat("epsilon", static_cast<float>(spec.epsilon));
      n->SetInt("decoupled", spec.decoupled_weight_decay ? 1 : 0);
      n->SetInt("bias_correction", spec.bias_correction ? 1 : 0);
      n->SetString("epsilon_mode", spec.epsilon_mode);
    } else {
      n->SetFloat("momentum", static_cast<float>(spec.momentum));
      n->SetFloat("dampening", static_cast<float>(spec.dampening));
      n->SetInt("nesterov", spec.nesterov ? 1 : 0);
    }
    // Output j overwrites x_p (j = 0) or state j - 1: inputs 2 + p * (2 + k) + (0, then 2 + s).
    const size_t base = 2 + p * (2 + k);
    for (size_t j = 0; j < out.size(); ++j) {
      g.outputs.push_back(out[j]);
      ug.aliases.push_back(j == 0 ? base : base + 1 + j);
    }
  }
  return ug;
}

}  // namespace oc::train
