// Custom operators of Ascend C packages, seen from the compiler and runtime:
// the packages ASCEND_CUSTOM_OPP_PATH names (vendor folders, ':'-separated, the
// first that defines an op type wins), what each holds (version.info), and the
// table of the library that runs them (custom_op_abi.h). atc and libascendcl.so
// both load packages through here; graphs hold custom operators as
// com.opencann::AscendCustom nodes (src/ops/cpu/custom/) whose attributes name
// the op type, package and version.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "ops/custom_op_abi.h"

namespace oc {

inline constexpr const char* kAscendCustomOp = "AscendCustom";
// The node attributes that describe the operator (others are its own).
inline constexpr const char* kCustomTypeAttr = "_oc_custom_op_type";
inline constexpr const char* kCustomPackageAttr = "_oc_custom_package";
inline constexpr const char* kCustomVersionAttr = "_oc_custom_package_version";

struct CustomOpPackage {
  std::string dir;      // the vendor folder
  std::string vendor;   // version.info's vendor (else the folder's name)
  std::string version;  // version.info's custom_opp_compiler_version ("" if none)
  std::vector<std::string> ops;
};

// Loads the packages of ASCEND_CUSTOM_OPP_PATH once per process; later calls
// return at once. What could not be loaded is described in `warnings` (the
// first call only); packages are named in `loaded`.
void LoadCustomOpPackages(std::vector<std::string>* warnings, std::vector<std::string>* loaded);

// The table of the library running custom operators; nullptr when no package
// has loaded it.
const OcCustomOps* CustomOpTable();
void SetCustomOpTable(const OcCustomOps* table);

// True when a loaded package defines op_type.
bool IsCustomOpType(const std::string& op_type);
// The package that defines op_type (nullptr when none loaded does).
const CustomOpPackage* CustomOpPackageOf(const std::string& op_type);

// Rewrites `node` (a node of a custom op type) into the AscendCustom node
// that runs it, recording the package and its version.
void MakeAscendCustomNode(Node& node, const CustomOpPackage& package);

// The operator's own attributes (not the _oc_ ones) in the table's form,
// pointing into `attrs`, which must outlive them. NotSupported for the
// attribute kinds custom operators lack (lists of strings, tensors, graphs).
Status ToCustomOpAttrs(const std::map<std::string, Attribute>& attrs, const std::string& op_type,
                       std::vector<OcOpAttr>* out);

}  // namespace oc
