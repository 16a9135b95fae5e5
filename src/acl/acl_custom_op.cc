// Custom operators from Ascend C packages: at aclInit the packages named by
// ASCEND_CUSTOM_OPP_PATH (vendor folders, ':'-separated) are loaded, and
// aclopExecuteV2 & co. hand the op types they define to the handler
// libascendc.so installed (acl_hooks.h).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>

#include "acl/acl_custom_op.h"
#include "acl/acl_hooks.h"
#include "acl/acl_internal.h"

using oc::StrCat;

namespace oc::acl {
namespace {
std::atomic<const aclrtOcCustomOps*> g_custom{nullptr};
}

void LoadCustomOpPackages() {
  const char* env = std::getenv("ASCEND_CUSTOM_OPP_PATH");
  if (!env || !*env) return;
  std::string all = env;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string dir = all.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    std::string lib = dir + "/op_api/lib/libcust_opapi.so";
    if (access(lib.c_str(), R_OK) != 0) {
      Log(kLogWarning, StrCat("ASCEND_CUSTOM_OPP_PATH: ", dir, " holds no operator package (no ", lib, ")"));
      continue;
    }
    dlerror();
    if (!dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      Log(kLogWarning, StrCat("ASCEND_CUSTOM_OPP_PATH: cannot load ", lib, ": ", why ? why : "dlopen failed"));
      continue;
    }
    Log(kLogInfo, StrCat("loaded the custom operator package ", dir));
  }
}

bool IsCustomOp(const char* op_type) {
  const aclrtOcCustomOps* c = g_custom.load();
  return c && op_type && c->has(op_type);
}

aclError RunCustomOp(const char* op_type, int ni, const aclTensorDesc* const* in_desc,
                     const aclDataBuffer* const* inputs, int no, const aclTensorDesc* const* out_desc,
                     aclDataBuffer* const* outputs, const std::map<std::string, oc::Attribute>* attrs,
                     aclrtStream stream) {
  const aclrtOcCustomOps* c = g_custom.load();
  if (ni < 0 || no < 0) return Fail(ACL_ERROR_INVALID_PARAM, "numInputs / numOutputs is negative");
  auto tensors = [&](int n, const aclTensorDesc* const* d, auto buffers, const char* what,
                     std::vector<aclrtOcOpTensor>* out) -> aclError {
    if (n && (!d || !buffers)) return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " descriptions or buffers are NULL"));
    for (int i = 0; i < n; ++i) {
      if (!d[i] || !buffers[i]) return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, " is NULL"));
      out->push_back(aclrtOcOpTensor{d[i]->dims.data(), d[i]->dims.size(), static_cast<int32_t>(d[i]->dtype),
                                     static_cast<int32_t>(d[i]->format), buffers[i]->data, buffers[i]->size});
    }
    return ACL_SUCCESS;
  };
  std::vector<aclrtOcOpTensor> ins, outs;
  if (aclError e = tensors(ni, in_desc, inputs, "input", &ins)) return e;
  if (aclError e = tensors(no, out_desc, outputs, "output", &outs)) return e;
  std::vector<aclrtOcOpAttr> as;
  if (attrs)
    for (const auto& [name, a] : *attrs) {
      aclrtOcOpAttr x{name.c_str(), 0, a.i, a.f, a.s.c_str(), a.ints.data(), a.floats.data(), 0};
      switch (a.kind) {
        case oc::Attribute::Kind::kInt: x.kind = 0; break;
        case oc::Attribute::Kind::kFloat: x.kind = 1; break;
        case oc::Attribute::Kind::kString: x.kind = 2; break;
        case oc::Attribute::Kind::kInts: x.kind = 3; x.count = a.ints.size(); break;
        case oc::Attribute::Kind::kFloats: x.kind = 4; x.count = a.floats.size(); break;
        default:
          return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attribute '", name, "' of ", op_type,
                                                      ": list-of-string and tensor attributes are not supported for "
                                                      "custom operators"));
      }
      as.push_back(x);
    }
  char msg[1024];
  msg[0] = '\0';
  int32_t rc = c->run(op_type, ins.data(), ins.size(), outs.data(), outs.size(), as.data(), as.size(), stream, msg,
                      sizeof msg);
  if (rc != 0) return Fail(rc, StrCat("custom operator ", op_type, ": ", msg));
  return ACL_SUCCESS;
}

}  // namespace oc::acl

void aclrtOcSetCustomOps(const aclrtOcCustomOps* ops) { oc::acl::g_custom.store(ops); }
