#include "llm/tokenizer/post_processor.h"

namespace oc::llm {

static Expected<PostProcessor> Template(const Json& spec, const JsonPath& at) {
  OC_ASSIGN_OR_RETURN(const Json* single, RequireField(spec, "single", at));
  if (!single->is_array()) return InvalidFile(at.Key("single").Name(), ": expected an array of template pieces");
  const Json* specials = OptionalField(spec, "special_tokens");
  PostProcessor pp;
  bool seen_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json& piece = (*single)[i];
    JsonPath where = at.Key("single").Index(i);
    if (const Json* seq = OptionalField(piece, "Sequence")) {
      OC_ASSIGN_OR_RETURN(std::string id, RequireString(*seq, "id", where.Key("Sequence")));
      if (id != "A")
        return NotSupported(where.Name(), ": the single template uses sequence '", id,
                            "' (only A, the one input, is supported)");
      if (seen_sequence) return NotSupported(where.Name(), ": the single template repeats the sequence");
      seen_sequence = true;
      continue;
    }
    const Json* tok = OptionalField(piece, "SpecialToken");
    if (!tok) return InvalidFile(where.Name(), ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    OC_ASSIGN_OR_RETURN(std::string name, RequireString(*tok, "id", where.Key("SpecialToken")));
    const Json* entry = specials ? OptionalField(*specials, name) : nullptr;
    if (!entry)
      return InvalidFile(at.Key("special_tokens").Name(), ": the template names '", name,
                         "', which special_tokens does not define");
    JsonPath epath = at.Key("special_tokens").Key(name);
    OC_ASSIGN_OR_RETURN(const Json* ids, RequireField(*entry, "ids", epath));
    if (!ids->is_array()) return InvalidFile(epath.Key("ids").Name(), ": expected an array of ids");
    for (size_t k = 0; k < ids->size(); ++k) {
      const Json& v = (*ids)[k];
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
        return InvalidFile(epath.Key("ids").Index(k).Name(), ": expected a token id, got ", v.dump());
      (seen_sequence ? pp.after : pp.before).push_back(static_cast<int32_t>(v.get<int64_t>()));
    }
  }
  return pp;
}

// BertProcessing / RobertaProcessing: {"cls": [token, id], "sep": [token, id]}.
static Expected<PostProcessor> ClsSep(const Json& spec, const JsonPath& at) {
  PostProcessor pp;
  for (const char* key : {"cls", "sep"}) {
    OC_ASSIGN_OR_RETURN(const Json* v, RequireField(spec, key, at));
    if (!v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer())
      return InvalidFile(at.Key(key).Name(), ": expected [token, id], got ", v->dump());
    (std::string(key) == "cls" ? pp.before : pp.after).push_back(static_cast<int32_t>((*v)[1].get<int64_t>()));
  }
  return pp;
}

Expected<PostProcessor> MakePostProcessor(const Json& spec, const JsonPath& at) {
  if (spec.is_null()) return PostProcessor();
  OC_ASSIGN_OR_RETURN(std::string type, TypeOf(spec, at));
  if (type == "TemplateProcessing") return Template(spec, at);
  if (type == "BertProcessing" || type == "RobertaProcessing") return ClsSep(spec, at);
  if (type == "ByteLevel") return PostProcessor();  // offsets only
  if (type == "Sequence") {
    OC_ASSIGN_OR_RETURN(const Json* list, RequireField(spec, "processors", at));
    if (!list->is_array()) return InvalidFile(at.Key("processors").Name(), ": expected an array");
    PostProcessor all;
    for (size_t i = 0; i < list->size(); ++i) {
      OC_ASSIGN_OR_RETURN(PostProcessor p, MakePostProcessor((*list)[i], at.Key("processors").Index(i)));
      // Each processor wraps what the previous one produced.
      all.before.insert(all.before.begin(), p.before.begin(), p.before.end());
      all.after.insert(all.after.end(), p.after.begin(), p.after.end());
    }
    return all;
  }
  return NotSupported(at.Name(), ": post-processor type '", type,
                      "' is not supported (supported: TemplateProcessing, BertProcessing, RobertaProcessing, "
                      "ByteLevel, Sequence)");
}

}  // namespace oc::llm
