// Custom-operator packages: loading ASCEND_CUSTOM_OPP_PATH's vendor folders,
// their version.info, and the library table that runs their operators.
#include "ops/custom_op.h"

#include "ops/op_registry.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>

namespace oc {
namespace {

std::atomic<const OcCustomOps*> g_table{nullptr};

struct Packages {
  std::mutex mu;
  bool loaded = false;
  std::vector<std::unique_ptr<CustomOpPackage>> all;
  std::map<std::string, const CustomOpPackage*> by_op;
};
Packages& State() {
  static Packages* p = new Packages;
  return *p;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// version.info: key=value lines (custom_opp_compiler_version, vendor, ops).
void ReadVersionInfo(CustomOpPackage& p) {
  std::ifstream f(p.dir + "/version.info");
  std::string line;
  while (std::getline(f, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(line.substr(0, eq)), value = Trim(line.substr(eq + 1));
    if (key == "custom_opp_compiler_version" || key == "Version" || key == "version") p.version = value;
    if (key == "vendor") p.vendor = value;
    if (key == "ops") {
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        std::string op = Trim(value.substr(start, comma - start));
        if (!op.empty()) p.ops.push_back(op);
        start = comma + 1;
      }
    }
  }
  if (p.vendor.empty()) {
    std::string d = p.dir;
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    p.vendor = d.substr(d.find_last_of('/') + 1);
  }
}

}  // namespace

const OcCustomOps* CustomOpTable() { return g_table.load(); }
void SetCustomOpTable(const OcCustomOps* table) { g_table.store(table); }

void LoadCustomOpPackages(std::vector<std::string>* warnings, std::vector<std::string>* loaded) {
  Packages& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.loaded) return;
  st.loaded = true;
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
      warnings->push_back(StrCat("ASCEND_CUSTOM_OPP_PATH: ", dir, " holds no operator package (no ", lib, ")"));
      continue;
    }
    dlerror();
    if (!dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      warnings->push_back(StrCat("ASCEND_CUSTOM_OPP_PATH: cannot load ", lib, ": ", why ? why : "dlopen failed"));
      continue;
    }
    auto p = std::make_unique<CustomOpPackage>();
    p->dir = dir;
    ReadVersionInfo(*p);
    for (const std::string& op : p->ops) {
      auto [it, fresh] = st.by_op.emplace(op, p.get());
      if (!fresh)
        warnings->push_back(StrCat("ASCEND_CUSTOM_OPP_PATH: ", op, " of package '", p->vendor, "' is hidden by "
                                   "package '", it->second->vendor, "' earlier in the path"));
    }
    loaded->push_back(StrCat(p->vendor, " ", p->version.empty() ? "(no version)" : p->version, " (", dir, ")"));
    st.all.push_back(std::move(p));
  }
  // libascendcl.so is handed the table when libascendc.so loads; a program
  // with its own copy of the runtime (atc) asks libascendc.so for it.
  if (!g_table.load() && !st.all.empty()) {
    using Get = const OcCustomOps* (*)();
    if (auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "OcAscendcCustomOps"))) g_table.store(get());
  }
}

bool IsCustomOpType(const std::string& op_type) {
  const OcCustomOps* t = g_table.load();
  return t && t->has(op_type.c_str());
}

const CustomOpPackage* CustomOpPackageOf(const std::string& op_type) {
  Packages& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.by_op.find(op_type);
  return it == st.by_op.end() ? nullptr : it->second;
}

void MakeAscendCustomNode(Node& node, const CustomOpPackage& package) {
  node.SetString(kCustomTypeAttr, node.op_type);
  node.SetString(kCustomPackageAttr, package.vendor);
  node.SetString(kCustomVersionAttr, package.version);
  node.op_type = kAscendCustomOp;
  node.domain = kOpenCannDomain;
  node.opset = 1;
}

Status ToCustomOpAttrs(const std::map<std::string, Attribute>& attrs, const std::string& op_type,
                       std::vector<OcOpAttr>* out) {
  out->clear();
  for (const auto& [name, a] : attrs) {
    if (name.rfind("_oc_", 0) == 0) continue;
    OcOpAttr x{name.c_str(), 0, a.i, a.f, a.s.c_str(), a.ints.data(), a.floats.data(), 0};
    switch (a.kind) {
      case Attribute::Kind::kInt: x.kind = 0; break;
      case Attribute::Kind::kFloat: x.kind = 1; break;
      case Attribute::Kind::kString: x.kind = 2; break;
      case Attribute::Kind::kInts: x.kind = 3; x.count = a.ints.size(); break;
      case Attribute::Kind::kFloats: x.kind = 4; x.count = a.floats.size(); break;
      default:
        return NotSupported("attribute '", name, "' of ", op_type,
                            ": list-of-string, tensor and graph attributes are not supported for custom operators");
    }
    out->push_back(x);
  }
  return Status::Ok();
}

}  // namespace oc
