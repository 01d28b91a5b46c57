// A dispatch table loaded at run time from an exported dispatch.json (gdn_load_dispatch_table),
// so that a retune needs no rebuild. The file is parsed and checked whole before it replaces
// the table in force; a bad file leaves that table in force.
#include <atomic>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "status.hpp"
#include "table_dispatch.hpp"

namespace gdn::detail {

namespace {

using nlohmann::json;

// What a loaded table owns: the entries' variant names and the metadata strings live here,
// the entries and TableInfo point into them.
struct LoadedTable {
  std::deque<std::string> strings;  // a deque: the views into it stay valid as it grows
  std::vector<dispatch::Entry> entries;
  dispatch::TableInfo info{};
  std::string_view keep(std::string s) { return strings.emplace_back(std::move(s)); }
};

// The format versions this libgdn reads: 2 (no plan pins) and 3 (an entry's "plan").
constexpr int kOldestFormat = 2, kNewestFormat = 3;

// Thrown inside the parser only; becomes the error text.
struct BadTable {
  std::string what;
};

std::string kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_string()) return cat("the string ", j.dump());
  if (j.is_number_integer()) return cat("the integer ", j.dump());
  if (j.is_number()) return cat("the number ", j.dump());
  if (j.is_boolean()) return cat("the boolean ", j.dump());
  if (j.is_array()) return "an array";
  return "an object";
}

const json& member(const json& obj, const std::string& where, const char* key) {
  if (!obj.is_object()) throw BadTable{cat(where, ": expected an object, got ", kind_of(obj))};
  const auto it = obj.find(key);
  if (it == obj.end()) throw BadTable{cat(where, ": field '", key, "' is missing")};
  return *it;
}

std::int64_t integer(const json& obj, const std::string& where, const char* key,
                     std::int64_t lowest, std::int64_t highest) {
  const json& v = member(obj, where, key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < lowest || v.get<std::int64_t>() > highest)
    throw BadTable{cat(where, ": field '", key, "': expected an integer in [", lowest, ", ",
                       highest, "], got ", kind_of(v))};
  return v.get<std::int64_t>();
}

std::string text(const json& obj, const std::string& where, const char* key) {
  const json& v = member(obj, where, key);
  if (!v.is_string()) throw BadTable{cat(where, ": field '", key, "': expected a string, got ", kind_of(v))};
  return v.get<std::string>();
}

template <class Enum>
Enum word(const json& obj, const std::string& where, const char* key,
          std::initializer_list<std::pair<const char*, Enum>> words, const char* expected) {
  const std::string w = text(obj, where, key);
  for (const auto& [name, value] : words)
    if (w == name) return value;
  throw BadTable{cat(where, ": field '", key, "': expected ", expected, ", got \"", w, "\"")};
}

gdn_launch_options read_plan(const json& entry, const std::string& where, int group) {
  gdn_launch_options pins = kRulePins;
  const auto it = entry.find("plan");
  if (it == entry.end() || it->is_null()) return pins;
  const std::string at = where + ": field 'plan'";
  if (!it->is_object()) throw BadTable{cat(at, ": expected an object, got ", kind_of(*it))};
  for (const auto& [key, value] : it->items()) {
    const PlanField* f = find_plan_field(key);
    if (f == nullptr) throw BadTable{cat(at, ": '", key, "' is not a plan field")};
    if (!value.is_number_integer())
      throw BadTable{cat(at, ": '", key, "': expected an integer, got ", kind_of(value))};
    pins.*f->member = value.get<std::int32_t>();
  }
  if (const std::string why = check_launch_options(pins, group); !why.empty())
    throw BadTable{cat(at, ": ", why)};
  return pins;
}

dispatch::Entry read_entry(const json& e, const std::string& where, int format, LoadedTable& t) {
  constexpr std::int64_t kMaxDim = 1 << 20, kMaxBucket = 62;
  dispatch::Entry out;
  dispatch::BucketKey& k = out.key;
  k.pass = word<Pass>(e, where, "pass", {{"fwd", Pass::Forward}, {"bwd", Pass::Backward}}, "\"fwd\" or \"bwd\"");
  k.h_qk = static_cast<int>(integer(e, where, "h_qk", 1, kMaxDim));
  k.h_v = static_cast<int>(integer(e, where, "h_v", 1, kMaxDim));
  if (k.h_v % k.h_qk != 0)
    throw BadTable{cat(where, ": h_v ", k.h_v, " is not a multiple of h_qk ", k.h_qk)};
  k.k = static_cast<int>(integer(e, where, "k", 1, kMaxDim));
  k.v = static_cast<int>(integer(e, where, "v", 1, kMaxDim));
  k.dtype = word<dispatch::DType>(e, where, "dtype",
                 {{"bf16", dispatch::DType::BF16}, {"fp16", dispatch::DType::FP16}, {"fp32", dispatch::DType::FP32}},
                 "\"bf16\", \"fp16\" or \"fp32\"");
  k.num_seqs_bucket = static_cast<int>(integer(e, where, "num_seqs_bucket", 0, kMaxBucket));
  k.total_tokens_bucket = static_cast<int>(integer(e, where, "total_tokens_bucket", 0, kMaxBucket));
  k.max_seqlen_bucket = static_cast<int>(integer(e, where, "max_seqlen_bucket", -1, kMaxBucket));
  k.balance_bucket = static_cast<int>(integer(e, where, "balance_bucket", -1, dispatch::kBalanceEqual));
  const std::string variant = text(e, where, "variant");
  if (variant.empty()) throw BadTable{cat(where, ": field 'variant': expected a variant name, got \"\"")};
  out.variant = t.keep(variant);
  const json& margin = member(e, where, "margin");
  if (!margin.is_null() && !margin.is_number())
    throw BadTable{cat(where, ": field 'margin': expected a number or null, got ", kind_of(margin))};
  out.margin = margin.is_null() ? dispatch::kNoRunnerUp : margin.get<double>();
  out.plan = format >= 3 ? read_plan(e, where, k.h_v / k.h_qk) : kRulePins;
  return out;
}

std::shared_ptr<LoadedTable> parse(const std::string& text_in) {
  json doc;
  try {
    doc = json::parse(text_in);
  } catch (const json::parse_error& e) {
    throw BadTable{cat("not JSON: ", e.what())};
  }
  if (!doc.is_object()) throw BadTable{cat("expected a JSON object, got ", kind_of(doc))};
  if (text(doc, "the file", "format") != "gdnlab-dispatch-table")
    throw BadTable{cat("field 'format': expected \"gdnlab-dispatch-table\", got ",
                       member(doc, "the file", "format").dump())};
  const int format = static_cast<int>(integer(doc, "the file", "format_version", kOldestFormat, kNewestFormat));
  auto t = std::make_shared<LoadedTable>();
  const json& device = member(doc, "the file", "device");
  const json& sweep = member(doc, "the file", "sweep");
  const json& build = member(doc, "the file", "build");
  t->info.device_name = t->keep(text(device, "field 'device'", "name"));
  t->info.device_uuid = t->keep(text(device, "field 'device'", "uuid"));
  t->info.sweep_id = integer(sweep, "field 'sweep'", "id", 0, INT64_MAX);
  t->info.sweep_started_at = t->keep(text(sweep, "field 'sweep'", "started_at"));
  t->info.git_sha = t->keep(text(build, "field 'build'", "git_sha"));
  const json& entries = member(doc, "the file", "entries");
  if (!entries.is_array()) throw BadTable{cat("field 'entries': expected an array, got ", kind_of(entries))};
  if (entries.empty()) throw BadTable{"field 'entries': the table has no entry"};
  t->entries.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    t->entries.push_back(read_entry(entries[i], cat("entry ", i), format, *t));
  return t;
}

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
// The loaded table in force (empty: the compiled one), with the file it came from.
std::shared_ptr<const DispatchTable>& loaded_table() {
  static std::shared_ptr<const DispatchTable> table;
  return table;
}

}  // namespace

bool parse_dispatch_json(const std::string& text_in, const std::string& origin, DispatchTable* out,
                         std::string* error) {
  try {
    std::shared_ptr<LoadedTable> t = parse(text_in);
    DispatchTable table;
    table.entries = t->entries;
    table.info = &t->info;
    table.origin = origin;
    table.owner = std::move(t);
    *out = std::move(table);
    return true;
  } catch (const BadTable& bad) {
    *error = bad.what;
    return false;
  }
}

DispatchTable active_dispatch_table() {
  std::lock_guard lock(table_mutex());
  if (const auto& loaded = loaded_table()) return *loaded;
  return compiled_dispatch_table();
}

}  // namespace gdn::detail

extern "C" gdn_status gdn_load_dispatch_table(const char* path) {
  using namespace gdn::detail;
  constexpr std::string_view where = "gdn_load_dispatch_table";
  if (path == nullptr) {  // back to the table built in
    std::lock_guard lock(table_mutex());
    loaded_table().reset();
    return GDN_OK;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "path",
                  "a readable dispatch.json written by `gdnlab export`", cat('"', path, "\" (cannot open it)"));
  std::ostringstream content;
  content << in.rdbuf();
  DispatchTable table;
  std::string error;
  if (!parse_dispatch_json(content.str(), path, &table, &error))
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                cat(where, ": '", path, "': ", error, "; the dispatch table in force is unchanged"));
  auto shared = std::make_shared<const DispatchTable>(std::move(table));
  std::lock_guard lock(table_mutex());
  loaded_table() = std::move(shared);
  return GDN_OK;
}
