// Custom operators from Ascend C packages (acl_custom_op.cc).
#pragma once

#include <map>
#include <string>

#include "acl/acl.h"
#include "graph/graph.h"

namespace oc::acl {

// Loads the packages of ASCEND_CUSTOM_OPP_PATH (called by aclInit).
void LoadCustomOpPackages();
// True when a loaded package defines op_type.
bool IsCustomOp(const char* op_type);
// Checks the descriptions against the operator's definition, inference and
// tiling (aclopCompile's arguments); nothing is kept: custom operators are
// built when their package is.
aclError CompileCustomOp(const char* op_type, int ni, const aclTensorDesc* const* in_desc, int no,
                         const aclTensorDesc* const* out_desc, const std::map<std::string, oc::Attribute>* attrs);
// Runs the custom operator on the stream (aclopExecuteV2's arguments).
aclError RunCustomOp(const char* op_type, int ni, const aclTensorDesc* const* in_desc,
                     const aclDataBuffer* const* inputs, int no, const aclTensorDesc* const* out_desc,
                     aclDataBuffer* const* outputs, const std::map<std::string, oc::Attribute>* attrs,
                     aclrtStream stream);

}  // namespace oc::acl
