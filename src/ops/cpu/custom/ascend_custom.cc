// com.opencann::AscendCustom: a node that runs a custom operator of an Ascend C
// package (ops/custom_op.h). Its attributes name the op type, the package and
// the package's version; the others are the operator's own. Shapes and types
// come from the operator's InferShape / InferDataType, the launch from its
// tiling function, run once when the kernel is created (shapes are static
// then), and each run launches the operator's kernel on the calling thread.
#include <string>
#include <vector>

#include "ops/custom_op.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct Described {
  std::string op_type, package, version;
};

Described Describe(const Node& n) {
  return {n.GetString(kCustomTypeAttr, ""), n.GetString(kCustomPackageAttr, ""), n.GetString(kCustomVersionAttr, "")};
}

std::string PackageText(const Described& d) {
  return StrCat("package '", d.package, "'", d.version.empty() ? "" : StrCat(" version ", d.version));
}

// The table, once the package defining the node's op type has loaded (and it
// is the version the node was compiled against).
Expected<const OcCustomOps*> TableFor(const Node& n) {
  Described d = Describe(n);
  if (d.op_type.empty()) return InvalidArgument(n.Describe(), ": attribute ", kCustomTypeAttr, " is missing");
  const OcCustomOps* table = CustomOpTable();
  const CustomOpPackage* loaded = CustomOpPackageOf(d.op_type);
  if (!table || !table->has(d.op_type.c_str()))
    return NotFound(n.Describe(), " is the custom operator ", d.op_type, " of ", PackageText(d),
                    ", which is not loaded: set ASCEND_CUSTOM_OPP_PATH to the package's vendor folder "
                    "(vendors/", d.package, ")");
  if (loaded && !d.version.empty() && loaded->version != d.version)
    return FailedPrecondition(n.Describe(), " was compiled against ", d.op_type, " of ", PackageText(d),
                              "; the loaded package '", loaded->vendor, "' (", loaded->dir, ") is version ",
                              loaded->version.empty() ? "(none)" : loaded->version);
  return table;
}

struct Tensors {
  std::vector<std::vector<int64_t>> dims;
  std::vector<OcOpTensor> list;
};

Expected<Tensors> Describe(const Node& n, const std::vector<Value*>& values, const char* what) {
  Tensors t;
  t.dims.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    t.dims.push_back(v && v->has_shape ? v->shape : std::vector<int64_t>{});
    if (!v) {
      t.list.push_back(OcOpTensor{nullptr, 0, -1, 2, nullptr, 0});
      continue;
    }
    int acl = DataTypeToAcl(v->dtype);
    if (acl < 0)
      return NotSupported(n.Describe(), ": ", what, " ", i, " is ", DataTypeName(v->dtype),
                          ", which custom operators cannot take");
    if (t.dims.back().size() > OC_CUSTOM_OP_MAX_DIMS)
      return NotSupported(n.Describe(), ": ", what, " ", i, " has rank ", t.dims.back().size(), " (at most ",
                          OC_CUSTOM_OP_MAX_DIMS, ")");
    t.list.push_back(OcOpTensor{nullptr, t.dims.back().size(), acl, 2 /* ACL_FORMAT_ND */, nullptr, 0});
  }
  for (size_t i = 0; i < t.list.size(); ++i) t.list[i].dims = t.dims[i].data();
  return t;
}

Status InferAscendCustom(Node& node) {
  OC_ASSIGN_OR_RETURN(const OcCustomOps* table, TableFor(node));
  Described d = Describe(node);
  OC_ASSIGN_OR_RETURN(Tensors ins, Describe(node, node.inputs, "input"));
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] && !node.inputs[i]->has_shape)
      return NotSupported(node.Describe(), ": input ", i, " has no known rank; custom operators need ranked inputs");
  std::vector<OcOpAttr> attrs;
  OC_RETURN_IF_ERROR(ToCustomOpAttrs(node.attrs, d.op_type, &attrs));
  std::vector<OcOpInferred> outs(node.outputs.size());
  char msg[1024] = "";
  if (table->infer(d.op_type.c_str(), ins.list.data(), ins.list.size(), attrs.data(), attrs.size(), outs.data(),
                   outs.size(), msg, sizeof msg) != 0)
    return InvalidArgument(node.Describe(), " (custom operator ", d.op_type, "): ", msg);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!node.outputs[i]) continue;
    DataType t = DataTypeFromAcl(outs[i].dtype);
    if (t == DataType::kUndefined)
      return NotSupported(node.Describe(), ": ", d.op_type, " infers aclDataType ", outs[i].dtype, " for output ",
                          i, ", which the runtime cannot hold");
    SetOutput(node, i, t, std::vector<int64_t>(outs[i].dims, outs[i].dims + outs[i].num_dims));
  }
  return Status::Ok();
}

class AscendCustomKernel final : public Kernel {
 public:
  AscendCustomKernel(const OcCustomOps* table, void* prepared, uint64_t workspace, std::string what)
      : table_(table), prepared_(prepared), workspace_(workspace), what_(std::move(what)) {}
  ~AscendCustomKernel() override { table_->release(prepared_); }

  Status Run(const KernelIO& io) override {
    char msg[1024] = "";
    if (table_->launch(prepared_, io.inputs, io.num_inputs, io.outputs, io.num_outputs,
                       workspace_ ? io.scratch : nullptr, msg, sizeof msg) != 0)
      return Internal(what_, ": ", msg);
    return Status::Ok();
  }
  size_t ScratchBytes() const override { return static_cast<size_t>(workspace_); }

 private:
  const OcCustomOps* table_;
  void* prepared_;
  uint64_t workspace_;
  std::string what_;
};

Expected<KernelPtr> MakeAscendCustom(const KernelInit& init) {
  const Node& n = init.node;
  OC_ASSIGN_OR_RETURN(const OcCustomOps* table, TableFor(n));
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  Described d = Describe(n);
  OC_ASSIGN_OR_RETURN(Tensors ins, Describe(n, n.inputs, "input"));
  OC_ASSIGN_OR_RETURN(Tensors outs, Describe(n, n.outputs, "output"));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i]) return NotSupported(n.Describe(), ": output ", i, " is omitted; custom operators write all");
  std::vector<OcOpAttr> attrs;
  OC_RETURN_IF_ERROR(ToCustomOpAttrs(n.attrs, d.op_type, &attrs));
  uint64_t workspace = 0;
  char msg[1024] = "";
  void* prepared = table->prepare(d.op_type.c_str(), ins.list.data(), ins.list.size(), outs.list.data(),
                                  outs.list.size(), attrs.data(), attrs.size(), &workspace, msg, sizeof msg);
  if (!prepared) return InvalidArgument(n.Describe(), " (custom operator ", d.op_type, "): ", msg);
  return KernelPtr(new AscendCustomKernel(table, prepared, workspace,
                                          StrCat(n.Describe(), " (custom operator ", d.op_type, ")")));
}

}  // namespace

void RegisterAscendCustomOps(OpRegistry& r) {
  r.Register({.domain = kOpenCannDomain, .op_type = kAscendCustomOp, .infer = InferAscendCustom,
              .kernels = CpuKernel(MakeAscendCustom), .foldable = false, .native_types = kAllDataTypes});
}

}  // namespace oc
