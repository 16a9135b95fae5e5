// atc --singleop=ops.json --output=DIR: each operator the JSON lists is
// compiled as a single-op graph (runtime/single_op.h) and written as DIR/<k>_<op>.om,
// which aclopSetModelDir / aclopLoad load ahead of the first execution.
//
// The JSON is ATC's single-op description: an array of
//   {"op": "Add",
//    "input_desc":  [{"format": "ND", "shape": [8, 16], "type": "float32"}, ...],
//    "output_desc": [{"format": "ND", "shape": [8, 16], "type": "float32"}],
//    "attr": [{"name": "transpose_x1", "type": "bool", "value": false}, ...]}
// An input may carry "const_value": [numbers] (with "is_const": true, or alone)
// to be compiled in; "type": "UNDEFINED" marks an absent optional input.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "atc_compile.h"
#include "executor/executable.h"
#include "om/om_file.h"
#include "runtime/single_op.h"

namespace oc::atc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Bad {
  std::string what;
};

DataType TypeFromName(std::string t) {
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t.rfind("dt_", 0) == 0) t = t.substr(3);
  static const std::map<std::string, DataType> kTypes = {
      {"float", DataType::kFloat32},   {"float32", DataType::kFloat32}, {"float16", DataType::kFloat16},
      {"bfloat16", DataType::kBFloat16}, {"bf16", DataType::kBFloat16}, {"double", DataType::kFloat64},
      {"float64", DataType::kFloat64}, {"int8", DataType::kInt8},       {"uint8", DataType::kUInt8},
      {"int16", DataType::kInt16},     {"uint16", DataType::kUInt16},   {"int32", DataType::kInt32},
      {"uint32", DataType::kUInt32},   {"int64", DataType::kInt64},     {"uint64", DataType::kUInt64},
      {"bool", DataType::kBool},       {"undefined", DataType::kUndefined}};
  auto it = kTypes.find(t);
  if (it == kTypes.end()) throw Bad{"unknown type '" + t + "'"};
  return it->second;
}

// An aclDataType number for a data_type attribute ("DT_FLOAT", "float32" or a number).
int64_t AclTypeNumber(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) throw Bad{"a data_type value must be a type name or an aclDataType number"};
  const int number = DataTypeToAcl(TypeFromName(v.get<std::string>()));
  if (number < 0) throw Bad{"data_type '" + v.get<std::string>() + "' has no aclDataType"};
  return number;
}

template <typename T>
void Append(std::vector<uint8_t>& bytes, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  bytes.insert(bytes.end(), p, p + sizeof v);
}

std::vector<uint8_t> ConstBytes(const json& values, DataType t) {
  if (!values.is_array()) throw Bad{"const_value must be an array of numbers"};
  std::vector<uint8_t> bytes;
  for (const json& v : values) {
    if (!v.is_number() && !v.is_boolean()) throw Bad{"const_value holds a non-number"};
    const double d = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
    switch (t) {
      case DataType::kFloat32: Append(bytes, static_cast<float>(d)); break;
      case DataType::kFloat64: Append(bytes, d); break;
      case DataType::kInt8: Append(bytes, static_cast<int8_t>(v.get<int64_t>())); break;
      case DataType::kUInt8: Append(bytes, static_cast<uint8_t>(v.get<int64_t>())); break;
      case DataType::kInt16: Append(bytes, static_cast<int16_t>(v.get<int64_t>())); break;
      case DataType::kUInt16: Append(bytes, static_cast<uint16_t>(v.get<int64_t>())); break;
      case DataType::kInt32: Append(bytes, static_cast<int32_t>(v.get<int64_t>())); break;
      case DataType::kUInt32: Append(bytes, static_cast<uint32_t>(v.get<int64_t>())); break;
      case DataType::kInt64: Append(bytes, static_cast<int64_t>(v.get<int64_t>())); break;
      case DataType::kUInt64: Append(bytes, static_cast<uint64_t>(v.get<int64_t>())); break;
      case DataType::kBool: Append(bytes, static_cast<uint8_t>(d != 0)); break;
      default: throw Bad{"const_value of type " + std::string(DataTypeName(t)) + " is not supported"};
    }
  }
  return bytes;
}

SingleOpTensor Tensor(const json& d, bool input) {
  if (!d.is_object()) throw Bad{"a desc must be an object"};
  SingleOpTensor t;
  t.dtype = TypeFromName(d.value("type", std::string("undefined")));
  if (t.dtype == DataType::kUndefined) return t;
  if (!d.contains("shape") || !d["shape"].is_array()) throw Bad{"a desc needs \"shape\": [dims]"};
  for (const json& v : d["shape"]) {
    if (!v.is_number_integer() || v.get<int64_t>() < -1) throw Bad{"shape dims must be integers >= -1"};
    t.dims.push_back(v.get<int64_t>());
  }
  static const std::map<std::string, int> kFormats = {
      {"NCHW", 0}, {"NHWC", 1}, {"ND", 2}, {"NDHWC", 27}, {"NCDHW", 30}};
  if (d.contains("format")) {
    if (!d["format"].is_string()) throw Bad{"\"format\" must be a string"};
    auto it = kFormats.find(d["format"].get<std::string>());
    if (it == kFormats.end()) throw Bad{"format '" + d["format"].get<std::string>() + "' is not supported"};
    t.format = it->second;
  }
  if (input && d.contains("const_value") && d.value("is_const", true))
    t.const_value = std::make_shared<const std::vector<uint8_t>>(ConstBytes(d["const_value"], t.dtype));
  return t;
}

Attribute AttrFrom(const json& a) {
  if (!a.is_object() || !a.contains("name") || !a.contains("type") || !a.contains("value"))
    throw Bad{"an attr needs \"name\", \"type\" and \"value\""};
  const std::string type = a["type"].get<std::string>();
  const json& v = a["value"];
  Attribute r;
  auto ints = [&](const json& list) {
    std::vector<int64_t> out;
    for (const json& x : list) {
      if (x.is_boolean()) out.push_back(x.get<bool>());
      else if (x.is_number_integer()) out.push_back(x.get<int64_t>());
      else throw Bad{"attr '" + a["name"].get<std::string>() + "': expected integers"};
    }
    return out;
  };
  if (type == "bool") {
    r.kind = Attribute::Kind::kInt;
    r.i = v.get<bool>();
  } else if (type == "int") {
    r.kind = Attribute::Kind::kInt;
    r.i = v.get<int64_t>();
  } else if (type == "float") {
    r.kind = Attribute::Kind::kFloat;
    r.f = v.get<float>();
  } else if (type == "string") {
    r.kind = Attribute::Kind::kString;
    r.s = v.get<std::string>();
  } else if (type == "data_type") {
    r.kind = Attribute::Kind::kInt;
    r.i = AclTypeNumber(v);
  } else if (type == "list_bool" || type == "list_int") {
    r.kind = Attribute::Kind::kInts;
    r.ints = ints(v);
  } else if (type == "list_float") {
    r.kind = Attribute::Kind::kFloats;
    for (const json& x : v) r.floats.push_back(x.get<float>());
  } else if (type == "list_string") {
    r.kind = Attribute::Kind::kStrings;
    for (const json& x : v) r.strings.push_back(x.get<std::string>());
  } else if (type == "list_data_type") {
    r.kind = Attribute::Kind::kInts;
    for (const json& x : v) r.ints.push_back(AclTypeNumber(x));
  } else if (type == "list_list_int") {  // flattened, as aclopSetAttrListListInt stores it
    r.kind = Attribute::Kind::kInts;
    for (const json& inner : v) {
      std::vector<int64_t> part = ints(inner);
      r.ints.insert(r.ints.end(), part.begin(), part.end());
    }
  } else {
    throw Bad{"attr type '" + type + "' is not supported"};
  }
  return r;
}

SingleOpSpec SpecFrom(const json& entry) {
  if (!entry.is_object() || !entry.contains("op") || !entry["op"].is_string())
    throw Bad{"an entry needs \"op\": \"<type>\""};
  SingleOpSpec spec;
  spec.op_type = entry["op"].get<std::string>();
  for (const char* key : {"input_desc", "output_desc"}) {
    if (!entry.contains(key)) continue;
    if (!entry[key].is_array()) throw Bad{std::string("\"") + key + "\" must be an array"};
    for (const json& d : entry[key])
      (key[0] == 'i' ? spec.inputs : spec.outputs).push_back(Tensor(d, key[0] == 'i'));
  }
  if (entry.contains("attr")) {
    if (!entry["attr"].is_array()) throw Bad{"\"attr\" must be an array"};
    for (const json& a : entry["attr"]) {
      spec.attrs[a["name"].get<std::string>()] = AttrFrom(a);
      const std::string type = a["type"].get<std::string>();
      if (type == "data_type" || type == "list_data_type") spec.acl_type_attrs.insert(a["name"].get<std::string>());
    }
  }
  return spec;
}

std::string Joined(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

}  // namespace

std::optional<AtcError> RunSingleOp(const AtcFlags& f) {
  if (f.output.empty()) return AtcError{"E10003", "parameter [--output] is required with --singleop (a directory)"};
  if (!f.model.empty()) return AtcError{"E10001", "--singleop and --model cannot be used together"};
  std::ifstream in(f.singleop, std::ios::binary);
  if (!in) return AtcError{"E11001", "cannot read '" + f.singleop + "'"};
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return AtcError{"E11002", "'" + f.singleop + "' is not valid JSON"};
  if (doc.is_object()) doc = json::array({doc});
  if (!doc.is_array() || doc.empty())
    return AtcError{"E11002", "'" + f.singleop + "' must hold an array of operator descriptions"};
  std::error_code ec;
  fs::create_directories(f.output, ec);
  if (!fs::is_directory(f.output, ec)) return AtcError{"E13001", "cannot create the directory '" + f.output + "'"};

  OmWriteOptions wopts;
  wopts.target = HostTarget();
  wopts.producer_version = OPENCANN_VERSION;
  wopts.source_framework = "singleop";
  for (size_t k = 0; k < doc.size(); ++k) {
    SingleOpSpec spec;
    try {
      spec = SpecFrom(doc[k]);
    } catch (const Bad& b) {
      return AtcError{"E10001", "--singleop entry " + std::to_string(k) + ": " + b.what};
    } catch (const json::exception& e) {
      return AtcError{"E10001", "--singleop entry " + std::to_string(k) + ": " + e.what()};
    }
    SingleOpResult r = CompileSingleOp(spec);
    if (r.error != SingleOpErrorKind::kNone)
      return AtcError{r.error == SingleOpErrorKind::kOpNotFound ? "E11003" : "E12001",
                      "--singleop entry " + std::to_string(k) + " (" + spec.op_type + "): " + r.message};
    Graph& g = *r.op.graph;
    g.metadata["single_op_num_inputs"] = std::to_string(spec.inputs.size());
    g.metadata["single_op_num_outputs"] = std::to_string(spec.outputs.size());
    g.metadata["single_op_slots"] = Joined(r.op.slots);
    auto exe = Executable::Create(r.op.graph);
    if (!exe.ok())
      return AtcError{"E12002", "--singleop entry " + std::to_string(k) + " (" + spec.op_type +
                                    "): kernel creation failed: " + exe.status().message()};
    const std::string path = (fs::path(f.output) / (std::to_string(k) + "_" + spec.op_type + ".om")).string();
    Status st = WriteOmFile(path, g, (*exe)->ExportPrepacked(), wopts);
    if (!st.ok()) return AtcError{"E13001", "cannot write '" + path + "': " + st.message()};
    std::printf("Single op %zu: %s -> %s\n", k, spec.op_type.c_str(), path.c_str());
  }
  return std::nullopt;
}

}  // namespace oc::atc
