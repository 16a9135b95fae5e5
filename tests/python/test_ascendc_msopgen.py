"""msopgen and ascendc_add_operator_package (docs/ascendc.md, "Generating a
project: msopgen", "Building a package with CMake"): an op description JSON
becomes a project whose untouched skeleton builds into a package with CMake;
with real kernels written in (a LeakyReLU with a float attribute, a two-input
squared difference) the package runs through its generated aclnn API and
matches numpy; bad descriptions and flags are refused with messages that name
the operator and the field."""
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from ascendc_harness import BUILD, DRIVER, compile_program

MSOPGEN = os.path.join(BUILD, "msopgen")
RNG = np.random.default_rng(11)

OPS = [
    {"op": "LeakyReluCustom", "language": "cpp",
     "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}],
     "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}],
     "attr": [{"name": "negativeSlope", "param_type": "optional", "type": "float", "default_value": "0.01"}]},
    {"op": "SquaredDiffCustom", "language": "cpp",
     "input_desc": [{"name": "x1", "param_type": "required", "format": ["ND", "ND"], "type": ["float", "fp16"]},
                    {"name": "x2", "param_type": "required", "format": ["ND"], "type": ["fp32", "float16"]}],
     "output_desc": [{"name": "y", "format": ["ND"], "type": ["float", "fp16"]}]},
]


def msopgen(*args, cwd=None):
    return subprocess.run([MSOPGEN, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def cmake_build(src, build, *defs):
    for cmd in (["cmake", "-S", str(src), "-B", str(build), *defs], ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    if not os.path.exists(MSOPGEN):
        pytest.fail(f"{MSOPGEN} is missing: build the project (cmake configures it)")
    d = tmp_path_factory.mktemp("msopgen")
    (d / "ops.json").write_text(json.dumps(OPS, indent=2))
    proc = msopgen("gen", "-i", str(d / "ops.json"), "-c", "ai_core-Ascend910B", "-lan", "cpp", "-out",
                   str(d / "proj"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d / "proj"


def test_generated_project_layout(project):
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert files == ["CMakeLists.txt", "build.sh", "op_host/leaky_relu_custom.cpp",
                     "op_host/leaky_relu_custom_tiling.h",
                     "op_host/squared_diff_custom.cpp", "op_host/squared_diff_custom_tiling.h",
                     "op_kernel/leaky_relu_custom.cpp", "op_kernel/squared_diff_custom.cpp"]
    assert os.access(project / "build.sh", os.X_OK)
    host = (project / "op_host" / "squared_diff_custom.cpp").read_text()
    assert ('this->Input("x2")\n        .ParamType(REQUIRED)\n        .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})\n'
            '        .Format({ge::FORMAT_ND, ge::FORMAT_ND});') in host
    assert "OP_ADD(SquaredDiffCustom);" in host and 'AddConfig("ascend910b")' in host
    assert "*context->GetOutputShape(0) = *in;" in host and "context->SetBlockDim(BLOCK_DIM);" in host
    leaky = (project / "op_host" / "leaky_relu_custom.cpp").read_text()
    assert 'this->Attr("negativeSlope").AttrType(OPTIONAL).Float(0.01);' in leaky
    assert "tiling.set_negativeSlope(*v);" in leaky
    tiling = (project / "op_host" / "leaky_relu_custom_tiling.h").read_text()
    assert "BEGIN_TILING_DATA_DEF(LeakyReluCustomTilingData)" in tiling
    assert "TILING_DATA_FIELD_DEF(float, negativeSlope);" in tiling
    assert "REGISTER_TILING_DATA_CLASS(LeakyReluCustom, LeakyReluCustomTilingData)" in tiling
    kernel = (project / "op_kernel" / "squared_diff_custom.cpp").read_text()
    assert ('extern "C" __global__ __aicore__ void squared_diff_custom(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, '
            'GM_ADDR workspace, GM_ADDR tiling) {') in kernel
    assert "GET_TILING_DATA(tiling_data, tiling);" in kernel and "Write the computation here" in kernel
    assert "ascendc_add_operator_package(custom_opp" in (project / "CMakeLists.txt").read_text()


def test_untouched_skeleton_builds_into_a_package(project, tmp_path):
    src = tmp_path / "skeleton"
    shutil.copytree(project, src)
    out = cmake_build(src, src / "build_out", f"-DOPENCANN_ROOT={BUILD}")
    assert "2 operator(s) (LeakyReluCustom, SquaredDiffCustom)" in out
    pkg = src / "build_out" / "opp" / "vendors" / "customize"
    assert (pkg / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert "ops=LeakyReluCustom,SquaredDiffCustom" in (pkg / "version.info").read_text()
    header = (pkg / "op_api" / "include" / "aclnn_leaky_relu_custom.h").read_text()
    assert ("aclnnLeakyReluCustomGetWorkspaceSize(const aclTensor *x, double negativeSlope, const aclTensor *y, "
            "uint64_t *workspaceSize, aclOpExecutor **executor);") in header
    assert (pkg / "op_api" / "include" / "aclnn_squared_diff_custom.h").is_file()


EVERY_KIND = [
    {"op": "AttrsCustom",
     "input_desc": [{"name": "x", "param_type": "optional", "format": ["ND", "NCHW"], "type": ["bf16", "int8"]},
                    {"name": "scale", "type": "float"}],
     "output_desc": [{"name": "y", "format": "ND", "type": ["float", "int32"]}, {"name": "mask", "type": ["bool"]}],
     "attr": [{"name": "alpha", "param_type": "optional", "type": "float", "default_value": 1.5},
              {"name": "count", "param_type": "optional", "type": "int", "default_value": "3"},
              {"name": "flag", "param_type": "optional", "type": "bool", "default_value": "true"},
              {"name": "mode", "param_type": "optional", "type": "string", "default_value": "fast"},
              {"name": "dims", "param_type": "optional", "type": "list_int", "default_value": "1,2,3"},
              {"name": "weights", "param_type": "optional", "type": "list_float", "default_value": [0.5, 2]},
              {"name": "axis", "param_type": "required", "type": "int"}]},
    {"op": "FillCustom", "output_desc": [{"name": "y", "type": ["float"]}],
     "attr": [{"name": "value", "type": "float"}]},
]


def test_every_kind_of_field_builds_with_build_sh(tmp_path):
    """Optional inputs, formats other than ND, an output whose types follow the
    input's column, every attribute type, an operator without inputs; built
    unchanged by the generated build.sh."""
    (tmp_path / "ops.json").write_text(json.dumps(EVERY_KIND))
    proc = msopgen("gen", "-i", "ops.json", "-c", "ai_core-Ascend910B4", "-lan", "cpp", "-out", "p", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    host = (tmp_path / "p" / "op_host" / "attrs_custom.cpp").read_text()
    for line in ['.ParamType(OPTIONAL)\n        .DataType({ge::DT_BF16, ge::DT_INT8})\n'
                 '        .Format({ge::FORMAT_ND, ge::FORMAT_NCHW});',
                 'this->Attr("alpha").AttrType(OPTIONAL).Float(1.5);', 'this->Attr("count").AttrType(OPTIONAL).Int(3);',
                 'this->Attr("flag").AttrType(OPTIONAL).Bool(true);',
                 'this->Attr("mode").AttrType(OPTIONAL).String("fast");',
                 'this->Attr("dims").AttrType(OPTIONAL).ListInt({1, 2, 3});',
                 'this->Attr("weights").AttrType(OPTIONAL).ListFloat({0.5f, 2.0f});',
                 'this->Attr("axis").AttrType(REQUIRED).Int();', 'AddConfig("ascend910b4")',
                 "column0[] = {{DT_FLOAT, DT_FLOAT}, {DT_FLOAT, DT_INT32}};"]:
        assert line in host
    proc = subprocess.run([str(tmp_path / "p" / "build.sh")], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, OPENCANN_ROOT=BUILD))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    inc = tmp_path / "p" / "build_out" / "opp" / "vendors" / "customize" / "op_api" / "include"
    assert ("aclnnAttrsCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *scale, double alpha, int64_t count, "
            "bool flag, const char * mode, const aclIntArray * dims, const aclFloatArray * weights, int64_t axis, "
            "const aclTensor *y, const aclTensor *mask, uint64_t *workspaceSize, aclOpExecutor **executor);"
            ) in (inc / "aclnn_attrs_custom.h").read_text()
    fill = (inc / "aclnn_fill_custom.h").read_text()
    assert "aclnnFillCustomGetWorkspaceSize(double value, const aclTensor *y," in fill


# ---- the real implementation, written over the skeleton ----------------------------------------

KERNEL = """#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

// y = OP(inputs) over float, tile by tile through double-buffered queues.
template <int N>
class KernelElementwise {
 public:
  __aicore__ inline void Init(GM_ADDR* in, GM_ADDR y, uint32_t totalLength, uint32_t tileNum) {
    blockLength_ = totalLength / AscendC::GetBlockNum();
    tileNum_ = tileNum;
    tileLength_ = blockLength_ / tileNum / BUFFER_NUM;
    for (int i = 0; i < N; ++i) {
      inGm_[i].SetGlobalBuffer((__gm__ float*)in[i] + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
      pipe_.InitBuffer(inQueue_[i], BUFFER_NUM, tileLength_ * sizeof(float));
    }
    yGm_.SetGlobalBuffer((__gm__ float*)y + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    pipe_.InitBuffer(outQueue_, BUFFER_NUM, tileLength_ * sizeof(float));
    pipe_.InitBuffer(tmp_, tileLength_ * sizeof(float));
  }
  template <typename F>
  __aicore__ inline void Process(F compute) {
    for (uint32_t t = 0; t < tileNum_ * BUFFER_NUM; ++t) {
      for (int i = 0; i < N; ++i) {
        AscendC::LocalTensor<float> x = inQueue_[i].template AllocTensor<float>();
        AscendC::DataCopy(x, inGm_[i][t * tileLength_], tileLength_);
        inQueue_[i].EnQue(x);
      }
      AscendC::LocalTensor<float> x[N];
      for (int i = 0; i < N; ++i) x[i] = inQueue_[i].template DeQue<float>();
      AscendC::LocalTensor<float> y = outQueue_.template AllocTensor<float>();
      compute(y, x, tmp_.Get<float>(), tileLength_);
      outQueue_.EnQue(y);
      for (int i = 0; i < N; ++i) inQueue_[i].FreeTensor(x[i]);
      AscendC::LocalTensor<float> yout = outQueue_.template DeQue<float>();
      AscendC::DataCopy(yGm_[t * tileLength_], yout, tileLength_);
      outQueue_.FreeTensor(yout);
    }
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueue_[N];
  AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> tmp_;
  AscendC::GlobalTensor<float> inGm_[N], yGm_;
  uint32_t blockLength_ = 0, tileNum_ = 0, tileLength_ = 0;
};
"""

LEAKY_KERNEL = KERNEL + """
extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA(tiling_data, tiling);
  GM_ADDR in[1] = {x};
  KernelElementwise<1> op;
  op.Init(in, y, tiling_data.totalLength, tiling_data.tileNum);
  float slope = tiling_data.negativeSlope;
  op.Process([slope](AscendC::LocalTensor<float>& y, AscendC::LocalTensor<float>* x, AscendC::LocalTensor<float>,
                     uint32_t n) { AscendC::LeakyRelu(y, x[0], slope, n); });
}
"""

SQDIFF_KERNEL = KERNEL + """
extern "C" __global__ __aicore__ void squared_diff_custom(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace,
                                                          GM_ADDR tiling) {
  GET_TILING_DATA(tiling_data, tiling);
  GM_ADDR in[2] = {x1, x2};
  KernelElementwise<2> op;
  op.Init(in, y, tiling_data.totalLength, tiling_data.tileNum);
  op.Process([](AscendC::LocalTensor<float>& y, AscendC::LocalTensor<float>* x, AscendC::LocalTensor<float> d,
                uint32_t n) {
    AscendC::Sub(d, x[0], x[1], n);
    AscendC::Mul(y, d, d, n);
  });
}
"""

# LeakyReluCustom's tiling, rewritten: 4 blocks, and as many tiles as keep one
# tile at 512 floats or fewer.
LEAKY_TILING = """  context->SetBlockDim(4);
  tiling.set_totalLength(totalLength);
  uint32_t tileNum = 1;
  while (totalLength / 4 / tileNum / 2 > 512) tileNum *= 2;
  tiling.set_tileNum(tileNum);
"""

HOST = r"""#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnn_leaky_relu_custom.h"
#include "aclnn_squared_diff_custom.h"

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      std::printf("FAIL: " __VA_ARGS__);                  \
      std::printf(" (%s)\n", aclGetRecentErrMsg());       \
      return 1;                                           \
    }                                                     \
  } while (0)

static std::vector<float> Read(const char* path, size_t n) {
  std::vector<float> v(n);
  FILE* f = std::fopen(path, "rb");
  if (!f || std::fread(v.data(), sizeof(float), n, f) != n) std::exit(3);
  std::fclose(f);
  return v;
}

struct Buffer {
  void* dev = nullptr;
  aclTensor* t = nullptr;
};

static Buffer Make(const std::vector<int64_t>& shape, const std::vector<float>* host) {
  Buffer b;
  size_t n = 1;
  for (int64_t d : shape) n *= size_t(d);
  aclrtMalloc(&b.dev, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
  if (host) aclrtMemcpy(b.dev, n * sizeof(float), host->data(), n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  b.t = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(),
                        shape.size(), b.dev);
  return b;
}

static int Save(const Buffer& b, size_t n, const char* path) {
  std::vector<float> v(n);
  aclrtMemcpy(v.data(), n * sizeof(float), b.dev, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  FILE* f = std::fopen(path, "wb");
  std::fwrite(v.data(), sizeof(float), n, f);
  std::fclose(f);
  return 0;
}

// Usage: app ROWS COLS SLOPE x1.bin x2.bin leaky.bin sqdiff.bin
int main(int argc, char** argv) {
  if (argc != 8) return 2;
  int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
  double slope = std::atof(argv[3]);
  size_t n = size_t(rows * cols);
  std::vector<float> x1 = Read(argv[4], n), x2 = Read(argv[5], n);
  CHECK(aclInit(nullptr) == ACL_SUCCESS, "aclInit");
  CHECK(aclrtSetDevice(0) == ACL_SUCCESS, "aclrtSetDevice");
  aclrtStream stream;
  CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");
  Buffer a = Make({rows, cols}, &x1), b = Make({rows, cols}, &x2), leaky = Make({rows, cols}, nullptr),
         sq = Make({rows, cols}, nullptr);

  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  aclnnStatus rc = aclnnLeakyReluCustomGetWorkspaceSize(a.t, slope, leaky.t, &ws, &ex);
  CHECK(rc == ACLNN_SUCCESS, "aclnnLeakyReluCustomGetWorkspaceSize: %d", rc);
  CHECK(ws == 0, "workspace %llu", (unsigned long long)ws);
  CHECK(aclnnLeakyReluCustom(nullptr, 0, ex, stream) == ACLNN_SUCCESS, "aclnnLeakyReluCustom");
  rc = aclnnSquaredDiffCustomGetWorkspaceSize(a.t, b.t, sq.t, &ws, &ex);
  CHECK(rc == ACLNN_SUCCESS, "aclnnSquaredDiffCustomGetWorkspaceSize: %d", rc);
  CHECK(aclnnSquaredDiffCustom(nullptr, 0, ex, stream) == ACLNN_SUCCESS, "aclnnSquaredDiffCustom");
  CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream");
  Save(leaky, n, argv[6]);
  Save(sq, n, argv[7]);

  // The definition msopgen wrote from the JSON: the output takes input 0's shape.
  Buffer shortOut = Make({rows}, nullptr);
  std::printf("short_output=%d\n", aclnnSquaredDiffCustomGetWorkspaceSize(a.t, b.t, shortOut.t, &ws, &ex));
  std::printf("null_input=%d\n", aclnnSquaredDiffCustomGetWorkspaceSize(a.t, nullptr, sq.t, &ws, &ex));
  for (Buffer* p : {&a, &b, &leaky, &sq, &shortOut}) {
    aclDestroyTensor(p->t);
    aclrtFree(p->dev);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  std::printf("done\n");
  return 0;
}
"""


def test_real_kernels_built_by_the_cmake_function_run_through_aclnn(project, tmp_path):
    src = tmp_path / "ops"
    shutil.copytree(project, src)
    (src / "op_kernel" / "leaky_relu_custom.cpp").write_text(LEAKY_KERNEL)
    (src / "op_kernel" / "squared_diff_custom.cpp").write_text(SQDIFF_KERNEL)
    host = (src / "op_host" / "leaky_relu_custom.cpp").read_text()
    generated = "  context->SetBlockDim(BLOCK_DIM);\n  tiling.set_totalLength(totalLength);\n" \
                "  tiling.set_tileNum(TILE_NUM);\n"
    assert generated in host
    (src / "op_host" / "leaky_relu_custom.cpp").write_text(host.replace(generated, LEAKY_TILING))

    # A project of the user's own that builds the operators with the CMake function,
    # finding it through CMAKE_PREFIX_PATH.
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.20)
project(app LANGUAGES NONE)
find_package(AscendCOpp REQUIRED CONFIG)
ascendc_add_operator_package(acme_ops SOURCE_DIR "{src}" VENDOR acme VERSION 2.1 OUTPUT "{tmp_path / 'opp'}")
get_target_property(dir acme_ops ASCENDC_PACKAGE_DIR)
message(STATUS "package dir: ${{dir}} (${{acme_ops_LIBRARY}})")
""")
    proc = subprocess.run(["cmake", "-S", str(app), "-B", str(app / "build"), f"-DCMAKE_PREFIX_PATH={BUILD}"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pkg = tmp_path / "opp" / "vendors" / "acme"
    assert f"package dir: {pkg} ({pkg / 'op_api' / 'lib' / 'libcust_opapi.so'})" in proc.stdout
    proc = subprocess.run(["cmake", "--build", str(app / "build")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = (pkg / "version.info").read_text()
    assert "custom_opp_compiler_version=2.1" in info and "vendor=acme" in info

    (tmp_path / "main.cpp").write_text(HOST)
    api = pkg / "op_api"
    exe = compile_program(str(tmp_path), "aclnn_app", str(tmp_path / "main.cpp"), flags=["-I", str(api / "include")],
                          libs=["-L", str(api / "lib"), "-lcust_opapi", f"-Wl,-rpath,{api / 'lib'}"])
    rows, cols, slope = 16, 1024, 0.2
    x1 = RNG.uniform(-4, 4, (rows, cols)).astype(np.float32)
    x2 = RNG.uniform(-4, 4, (rows, cols)).astype(np.float32)
    x1.tofile(tmp_path / "x1.bin")
    x2.tofile(tmp_path / "x2.bin")
    proc = subprocess.run([exe, str(rows), str(cols), str(slope), "x1.bin", "x2.bin", "leaky.bin", "sq.bin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stdout + proc.stderr
    leaky = np.fromfile(tmp_path / "leaky.bin", np.float32).reshape(rows, cols)
    np.testing.assert_array_equal(leaky, np.where(x1 >= 0, x1, x1 * np.float32(slope)))
    d = x1 - x2
    np.testing.assert_array_equal(np.fromfile(tmp_path / "sq.bin", np.float32).reshape(rows, cols), d * d)
    assert "short_output=161002" in proc.stdout
    assert f"output 'y' is [{rows}] but SquaredDiffCustom infers [{rows}, {cols}] from the inputs" in proc.stderr
    assert "null_input=161001" in proc.stdout and "input 'x2' is NULL" in proc.stderr

    # A kernel edit rebuilds the package.
    (src / "op_kernel" / "squared_diff_custom.cpp").write_text(SQDIFF_KERNEL.replace("Mul(y, d, d, n)",
                                                                                     "Add(y, d, d, n)"))
    proc = subprocess.run(["cmake", "--build", str(app / "build")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "opp_build: 2 operator(s)" in proc.stdout, proc.stdout + proc.stderr


# ---- adding to a project, and what is refused ----------------------------------------------------

def test_mode_1_adds_an_operator_and_mode_0_refuses_an_existing_project(tmp_path):
    one = [{"op": "AbsCustom", "input_desc": [{"name": "x", "type": ["float"]}],
            "output_desc": [{"name": "y", "type": ["float"]}]}]
    (tmp_path / "a.json").write_text(json.dumps(one))
    (tmp_path / "b.json").write_text(json.dumps([dict(one[0], op="NegCustom")]))
    assert msopgen("gen", "-i", "a.json", "-c", "ai_core-Ascend310P3", "-lan", "cpp", "-out", "p",
                   cwd=tmp_path).returncode == 0
    assert 'AddConfig("ascend310p3")' in (tmp_path / "p" / "op_host" / "abs_custom.cpp").read_text()
    proc = msopgen("gen", "-i", "b.json", "-c", "ai_core-Ascend910B", "-lan", "cpp", "-out", "p", cwd=tmp_path)
    assert proc.returncode == 1 and "p already holds an operator project; use -m 1 to add operators" in proc.stderr
    proc = msopgen("gen", "-i", "b.json", "-c", "ai_core-Ascend910B", "-lan", "cpp", "-out", "p", "-m", "1",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p" / "op_kernel" / "neg_custom.cpp").is_file()
    proc = msopgen("gen", "-i", "b.json", "-lan", "cpp", "-out", "p", "-m", "1", cwd=tmp_path)
    assert proc.returncode == 1 and "NegCustom: " in proc.stderr and "the project has this operator" in proc.stderr


def _op(**kw):
    op = {"op": "FooCustom", "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"],
                                             "type": ["float"]}],
          "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}]}
    op.update(kw)
    return [op]


BAD = {
    "not_a_list": ({"op": "FooCustom"}, "expected a list of operator descriptions ([{\"op\": ...}, ...]), not a "
                                        "JSON object"),
    "not_json": ('[{"op": }', "not valid JSON: Expecting value at line 1 column 9"),
    "missing_op": ([{"input_desc": []}], 'operator #1 has no "op" (its type in upper camel case'),
    "op_not_camel": (_op(op="foo_custom"), 'operator #1: "op" "foo_custom" is not an operator type in upper camel'),
    "unknown_type": (_op(input_desc=[{"name": "x", "type": ["fp61"]}]),
                     "FooCustom: input_desc[0] 'x': unknown type \"fp61\"; expected one of fp16, float16, half, "
                     "float, fp32"),
    "unknown_format": (_op(input_desc=[{"name": "x", "type": ["float"], "format": ["NCWH"]}]),
                       "FooCustom: input_desc[0] 'x': unknown format \"NCWH\"; expected one of ND, NCHW"),
    "duplicate_name": (_op(output_desc=[{"name": "x", "type": ["float"]}]),
                       'FooCustom: duplicate name "x" (in input_desc and output_desc); inputs, outputs and '
                       'attributes need distinct names'),
    "duplicate_attr": (_op(attr=[{"name": "y", "type": "int", "param_type": "required"}]),
                       'FooCustom: duplicate name "y" (in output_desc and attr)'),
    "duplicate_op": (_op() + _op(), 'operator #2: duplicate op "FooCustom" (also operator #1)'),
    "dynamic": (_op(input_desc=[{"name": "x", "param_type": "dynamic", "type": ["float"]}]),
                "FooCustom: input_desc[0] 'x': param_type \"dynamic\" (a list of tensors) is not supported yet"),
    "bad_param_type": (_op(input_desc=[{"name": "x", "param_type": "maybe", "type": ["float"]}]),
                       "FooCustom: input_desc[0] 'x': unknown param_type \"maybe\"; expected \"required\" or "
                       "\"optional\""),
    "no_types": (_op(input_desc=[{"name": "x", "format": ["ND"]}]),
                 "FooCustom: input_desc[0] 'x' needs \"type\": a list of data types"),
    "columns": (_op(input_desc=[{"name": "x", "type": ["float", "fp16"]}],
                    output_desc=[{"name": "y", "type": ["float", "fp16", "int32"]}]),
                "FooCustom: the type lists have different lengths ('x' 2, 'y' 3)"),
    "no_outputs": (_op(output_desc=[]), 'FooCustom: "output_desc" is missing or empty'),
    "attr_type": (_op(attr=[{"name": "alpha", "type": "double", "param_type": "optional", "default_value": 1}]),
                  "FooCustom: attr[0] 'alpha': unknown type \"double\"; expected one of int, float, bool, string, "
                  "list_int, list_float"),
    "attr_no_default": (_op(attr=[{"name": "alpha", "type": "float", "param_type": "optional"}]),
                        "FooCustom: attr[0] 'alpha' is optional and needs a \"default_value\" (a float)"),
    "attr_bad_default": (_op(attr=[{"name": "alpha", "type": "float", "param_type": "optional",
                                    "default_value": "abc"}]),
                         "FooCustom: attr[0] 'alpha': default_value \"abc\" is not a number"),
    "attr_bad_list": (_op(attr=[{"name": "dims", "type": "list_int", "param_type": "optional",
                                 "default_value": "1, 2.5"}]),
                      "FooCustom: attr[0] 'dims': default_value \"1, 2.5\" is not a list of integers (item \"2.5\")"),
    "reserved": (_op(input_desc=[{"name": "tiling", "type": ["float"]}]),
                 'FooCustom: input_desc name "tiling" is reserved'),
    "keyword": (_op(input_desc=[{"name": "float", "type": ["float"]}]),
                'FooCustom: input_desc name "float" is not usable as a C++ parameter name'),
    "language": (_op(language="python"), 'FooCustom: "language" "python" is not supported: only "cpp"'),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_description_is_refused_with_its_reason(tmp_path, case):
    doc, message = BAD[case]
    (tmp_path / "op.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    proc = msopgen("gen", "-i", "op.json", "-c", "ai_core-Ascend910B", "-lan", "cpp", "-out", "p", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"msopgen: error: op.json: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("flags,message", [
    (["-lan", "py"], "-lan py is not supported: only -lan cpp (Ascend C) projects are generated"),
    (["-c", "aicpu"], "-c aicpu is not supported: AI CPU operators are not generated"),
    (["-c", "Ascend910B"], "-c 'Ascend910B' is not supported: expected ai_core-<soc>"),
    (["-c", "ai_core-Ascend999"], "-c ai_core-Ascend999 is not supported: the chip Ascend999 has no profile here"),
    (["-m", "2"], "-m 2 is not supported: expected 0 (a new project) or 1"),
])
def test_unsupported_flags_are_named(tmp_path, flags, message):
    (tmp_path / "op.json").write_text(json.dumps(_op()))
    proc = msopgen("gen", "-i", "op.json", "-out", "p", *flags, cwd=tmp_path)
    assert proc.returncode == 1 and f"msopgen: error: {message}" in proc.stderr, proc.stderr
    assert not (tmp_path / "p").exists()
    proc = msopgen("gen", "-i", "missing.json", cwd=tmp_path)
    assert proc.returncode == 1 and "msopgen: error: missing.json: cannot read the operator description" in proc.stderr
