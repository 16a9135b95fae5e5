// Prints the operators OP_ADD registered (the op_host sources linked into this
// program) as JSON, for opp_build.py to write their aclnn functions from.
#include <cstdio>
#include <string>

#include "register/op_def_registry.h"

namespace {
std::string Quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}
const char* Kind(gert::RuntimeAttrs::Value::Kind k) {
  switch (k) {
    case gert::RuntimeAttrs::Value::kBool: return "bool";
    case gert::RuntimeAttrs::Value::kInt: return "int";
    case gert::RuntimeAttrs::Value::kFloat: return "float";
    case gert::RuntimeAttrs::Value::kString: return "string";
    case gert::RuntimeAttrs::Value::kListInt: return "list_int";
    case gert::RuntimeAttrs::Value::kListFloat: return "list_float";
    default: return "none";
  }
}
void Params(const std::deque<ops::OpParamDef>& ps) {
  std::printf("[");
  for (size_t i = 0; i < ps.size(); ++i) {
    std::printf("%s{\"name\": %s, \"param_type\": %d, \"dtypes\": [", i ? ", " : "", Quote(ps[i].Name()).c_str(),
                static_cast<int>(ps[i].GetParamType()));
    for (size_t k = 0; k < ps[i].GetDataTypes().size(); ++k)
      std::printf("%s%d", k ? ", " : "", static_cast<int>(ps[i].GetDataTypes()[k]));
    std::printf("]}");
  }
  std::printf("]");
}
}  // namespace

int main() {
  std::printf("[");
  bool first = true;
  for (const auto& [type, def] : ops::OcOpRegistry()) {
    std::printf("%s{\"type\": %s, \"inputs\": ", first ? "" : ", ", Quote(type).c_str());
    first = false;
    Params(def->GetInputs());
    std::printf(", \"outputs\": ");
    Params(def->GetOutputs());
    std::printf(", \"attrs\": [");
    for (size_t i = 0; i < def->GetAttrs().size(); ++i) {
      const auto& a = def->GetAttrs()[i];
      std::printf("%s{\"name\": %s, \"kind\": \"%s\"}", i ? ", " : "", Quote(a.Name()).c_str(), Kind(a.Default().kind));
    }
    std::printf("], \"socs\": [");
    for (size_t i = 0; i < def->GetAICore().GetSocs().size(); ++i)
      std::printf("%s%s", i ? ", " : "", Quote(def->GetAICore().GetSocs()[i]).c_str());
    std::printf("]}");
  }
  std::printf("]\n");
  return 0;
}
