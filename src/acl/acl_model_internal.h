// Loaded models, shared by acl_model.cc (load, describe, execute) and
// acl_dynamic.cc (gears and run-time shapes of dynamic models).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "acl/acl_internal.h"
#include "executor/executable.h"
#include "om/om_file.h"
#include "runtime/dynamic_gears.h"
#include "runtime/shape_specializer.h"

namespace oc::acl {

// What a model with unknown dims needs besides the .om: the per-shape
// executables and, for a gear model, its gears and the dynamic tensor input.
struct DynamicModel {
  std::shared_ptr<ShapeSpecializer> spec;
  GearSet gears;                 // mode kNone: free unknown dims (shapes from tensor descs)
  size_t num_graph_inputs = 0;   // model inputs before the dynamic tensor
  size_t dyn_index = SIZE_MAX;   // index of ACL_DYNAMIC_TENSOR_NAME (gear models)
  size_t dyn_values = 0;         // int64 values the dynamic tensor holds (a gear's values)
  std::mutex mu;                 // guards cur_output_dims
  std::vector<std::vector<int64_t>> cur_output_dims;  // last selected gear / last run; empty: none yet
};

struct ModelObj {
  uint32_t id = 0;
  OmModel om;
  std::shared_ptr<const Executable> exe;  // static models
  std::unique_ptr<DynamicModel> dyn;      // dynamic models
  std::vector<IoInfo> inputs, outputs;
  // Set for models loaded with caller work memory.
  std::unique_ptr<ExecutionContext> user_ctx;
  std::mutex user_mu;
  // Executions queued or running; aclmdlUnload waits for zero.
  std::mutex inflight_mu;
  std::condition_variable inflight_cv;
  int inflight = 0;

  void BeginExecution();
  void EndExecution();
  void WaitIdle();
  Status Run(const Executable& exe, const std::vector<const void*>& ins, const std::vector<void*>& outs);
};

// One run of a dynamic model through the interpreter (shapes only known as it
// goes): the inputs at their signature's shapes, the output buffers and their
// sizes, the output dataset whose descs receive the shapes, and the outputs
// whose (NULL, 0) buffers get memory once their sizes are known (aclmdlExecute).
struct InterpretedRun {
  std::shared_ptr<const Interpreter> interpreter;
  ShapeSignature shapes;
  std::vector<size_t> out_sizes;
  aclmdlDataset* output = nullptr;
  std::vector<bool> allocate;
};
Status RunInterpreted(ModelObj& m, const InterpretedRun& run, const std::vector<const void*>& ins,
                      const std::vector<void*>& outs);

std::shared_ptr<ModelObj> FindModel(uint32_t id);
aclError UnknownModel(uint32_t id);
aclError NullArg(const char* name);
HandleSet& Datasets();
HandleSet& Descs();
aclDataType ToAclType(DataType t);

// Dynamic models (acl_dynamic.cc).
// Sets up m.dyn for a dynamic .om: gears from the metadata, pinned gear
// executables, the dynamic tensor input, and the reported dims and sizes.
aclError SetUpDynamicModel(ModelObj& m, const std::string& origin);
// The executable for the shapes `input` selects (gear tensor or tensor descs),
// after checking the dataset's shape; nullptr (with the shapes in `*shapes`)
// when those shapes run in the interpreter. Records the error.
aclError ResolveDynamicExecutable(ModelObj& m, const aclmdlDataset* input, std::shared_ptr<const Executable>* exe,
                                  ShapeSignature* shapes);
// Writes each output's shape into the output dataset's tensor descs and
// remembers them for aclmdlGetCurOutputDims.
void RecordOutputShapes(ModelObj& m, const Executable& exe, aclmdlDataset* output);
// Replaces the dataset's desc at `index` by a new one (owned by the dataset).
void SetDatasetDesc(aclmdlDataset* ds, size_t index, aclDataType dtype, aclFormat format,
                    const std::vector<int64_t>& dims);
// Frees the descs a dataset owns (aclmdlDestroyDataset).
void FreeDatasetDescs(aclmdlDataset* ds);

}  // namespace oc::acl
