/* The training engine's C interface (libms_backend.so), which the `mindspore`
 * Python package (python/mindspore/) drives through ctypes.
 *
 * Graphs arrive as serialized ONNX models (the Python side traces a Cell's
 * construct into one); they are compiled against a store of named tensors
 * (parameters, optimiser state) into programs (src/train/program.h).
 *
 * Every function returns 0 on success or a status code (the values of
 * oc::StatusCode: 1 invalid argument, 2 not supported, ...); the message of
 * the calling thread's last failure is ocms_last_error(). No C++ exception
 * crosses this interface. Element types are ONNX TensorProto codes (1 float32,
 * 7 int64, 11 float64, ...). */
#ifndef OPENCANN_MS_BACKEND_H_
#define OPENCANN_MS_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; this marks what it exports. */
#define OCMS_API __attribute__((visibility("default")))

typedef struct OcmsStore OcmsStore;
typedef struct OcmsProgram OcmsProgram;

/* The message of this thread's last failure ("" after a success). */
OCMS_API const char* ocms_last_error(void);
/* The interface's version (bumped when a signature changes). */
OCMS_API int ocms_abi_version(void);
/* Threads of the compute pool (<= 0: the hardware's). */
OCMS_API int ocms_set_num_threads(int num_threads);

OCMS_API OcmsStore* ocms_store_new(void);
OCMS_API void ocms_store_free(OcmsStore* store);
/* Creates or overwrites a stored tensor (data NULL: zeros). */
OCMS_API int ocms_store_set(OcmsStore* store, const char* name, int dtype, const int64_t* dims, int ndim, const void* data);
/* *ndim holds dims' capacity on entry and the rank on return. */
OCMS_API int ocms_store_info(const OcmsStore* store, const char* name, int* dtype, int64_t* dims, int* ndim);
/* Copies the tensor out; bytes must equal its size. */
OCMS_API int ocms_store_get(const OcmsStore* store, const char* name, void* data, size_t bytes);
OCMS_API int ocms_store_remove(OcmsStore* store, const char* name);
/* Names separated by '\n' into buf (cap bytes, NUL-terminated); *needed gets the size wanted. */
OCMS_API int ocms_store_names(const OcmsStore* store, char* buf, size_t cap, size_t* needed);

/* Compiles an ONNX model (onnx NULL and size 0: an update-only program) with
 * a JSON spec: {"loss": "name", "params": [...], "return_grads": false,
 * "fetches": [...], "state_updates": [["value", "stored"], ...],
 * "optimizer": {"type": "sgd" | "adam", "momentum", "dampening", "nesterov",
 * "beta1", "beta2", "epsilon", "decoupled_weight_decay", "bias_correction",
 * "epsilon_mode", "weight_decay": [per param], "max_grad_norm",
 * "state_prefixes": [...], "step_name"}}. Every key is optional. */
OCMS_API int ocms_compile(OcmsStore* store, const void* onnx, size_t size, const char* spec_json, OcmsProgram** program);
/* The same for a MindSpore MINDIR model (mindir NULL is an error); with no
 * "fetches" in the spec, the model's outputs are fetched (mindspore.load). */
OCMS_API int ocms_compile_mindir(OcmsStore* store, const void* mindir, size_t size, const char* spec_json,
                                 OcmsProgram** program);
OCMS_API void ocms_program_free(OcmsProgram* program);
/* Feeds (is_fetch 0) or fetches (1). */
OCMS_API size_t ocms_program_count(const OcmsProgram* program, int is_fetch);
OCMS_API int ocms_program_io(const OcmsProgram* program, int is_fetch, size_t index, char* name, size_t name_cap, int* dtype,
                    int64_t* dims, int* ndim);
OCMS_API int ocms_program_run(OcmsProgram* program, const void* const* feeds, size_t num_feeds, void* const* fetches,
                     size_t num_fetches, float lr);

/* Shape inference of an ONNX model: its outputs' types and shapes as JSON
 * [{"name": ..., "dtype": 1, "shape": [2, 3]}, ...] (-1 for a dim not known). */
OCMS_API int ocms_infer(const void* onnx, size_t size, char* json, size_t cap, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_MS_BACKEND_H_ */
