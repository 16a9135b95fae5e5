// Custom operators from Ascend C packages: aclInit loads the packages named by
// ASCEND_CUSTOM_OPP_PATH (ops/custom_op.h), and aclopExecuteV2 & co. hand the
// op types they define to the table libascendc.so installed (acl_hooks.h).
#include "acl/acl_custom_op.h"

#include "acl/acl_hooks.h"
#include "acl/acl_internal.h"
#include "ops/custom_op.h"

using oc::StrCat;

namespace oc::acl {

void LoadCustomOpPackages() {
  std::vector<std::string> warnings, loaded;
  oc::LoadCustomOpPackages(&warnings, &loaded);
  for (const std::string& w : warnings) Log(kLogWarning, w);
  for (const std::string& p : loaded) Log(kLogInfo, StrCat("loaded the custom operator package ", p));
}

bool IsCustomOp(const char* op_type) { return op_type && oc::IsCustomOpType(op_type); }

namespace {

// The table's tensors from aclop's descriptions and, when given, buffers.
aclError Tensors(int n, const aclTensorDesc* const* d, const aclDataBuffer* const* buffers, bool with_buffers,
                 const char* what, std::vector<OcOpTensor>* out) {
  if (n < 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the number of ", what, "s is negative"));
  if (n && (!d || (with_buffers && !buffers)))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " descriptions or buffers are NULL"));
  for (int i = 0; i < n; ++i) {
    if (!d[i] || (with_buffers && !buffers[i])) return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, " is NULL"));
    out->push_back(OcOpTensor{d[i]->dims.data(), d[i]->dims.size(), static_cast<int32_t>(d[i]->dtype),
                              static_cast<int32_t>(d[i]->format), with_buffers ? buffers[i]->data : nullptr,
                              with_buffers ? buffers[i]->size : 0});
  }
  return ACL_SUCCESS;
}

aclError Attrs(const char* op_type, const std::map<std::string, oc::Attribute>* attrs, std::vector<OcOpAttr>* out) {
  static const std::map<std::string, oc::Attribute> kNone;
  oc::Status st = oc::ToCustomOpAttrs(attrs ? *attrs : kNone, op_type, out);
  return st.ok() ? ACL_SUCCESS : Fail(ACL_ERROR_INVALID_PARAM, st.message());
}

const OcCustomOps* Table(const char* op_type) {
  const OcCustomOps* c = oc::CustomOpTable();
  if (!c) Fail(ACL_ERROR_OP_TYPE_NOT_MATCH, StrCat("custom operator ", op_type, ": no package is loaded"));
  return c;
}

}  // namespace

aclError CompileCustomOp(const char* op_type, int ni, const aclTensorDesc* const* in_desc, int no,
                         const aclTensorDesc* const* out_desc, const std::map<std::string, oc::Attribute>* attrs) {
  const OcCustomOps* c = Table(op_type);
  if (!c) return ACL_ERROR_OP_TYPE_NOT_MATCH;
  std::vector<OcOpTensor> ins, outs;
  std::vector<OcOpAttr> as;
  if (aclError e = Tensors(ni, in_desc, nullptr, false, "input", &ins)) return e;
  if (aclError e = Tensors(no, out_desc, nullptr, false, "output", &outs)) return e;
  if (aclError e = Attrs(op_type, attrs, &as)) return e;
  char msg[1024] = "";
  uint64_t workspace = 0;
  void* prepared = c->prepare(op_type, ins.data(), ins.size(), outs.data(), outs.size(), as.data(), as.size(),
                              &workspace, msg, sizeof msg);
  if (!prepared) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("custom operator ", op_type, ": ", msg));
  c->release(prepared);
  return ACL_SUCCESS;
}

aclError RunCustomOp(const char* op_type, int ni, const aclTensorDesc* const* in_desc,
                     const aclDataBuffer* const* inputs, int no, const aclTensorDesc* const* out_desc,
                     aclDataBuffer* const* outputs, const std::map<std::string, oc::Attribute>* attrs,
                     aclrtStream stream) {
  const OcCustomOps* c = Table(op_type);
  if (!c) return ACL_ERROR_OP_TYPE_NOT_MATCH;
  std::vector<OcOpTensor> ins, outs;
  std::vector<OcOpAttr> as;
  if (aclError e = Tensors(ni, in_desc, inputs, true, "input", &ins)) return e;
  if (aclError e = Tensors(no, out_desc, outputs, true, "output", &outs)) return e;
  if (aclError e = Attrs(op_type, attrs, &as)) return e;
  char msg[1024] = "";
  int32_t rc = c->run(op_type, ins.data(), ins.size(), outs.data(), outs.size(), as.data(), as.size(), stream, msg,
                      sizeof msg);
  if (rc != 0) return Fail(rc, StrCat("custom operator ", op_type, ": ", msg));
  return ACL_SUCCESS;
}

}  // namespace oc::acl

void aclrtOcSetCustomOps(const OcCustomOps* ops) { oc::SetCustomOpTable(ops); }
