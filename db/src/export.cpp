// Dispatch-table export: selection -> dispatch.json + generated C++ header, written atomically.
#include "gdn/db/export.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gdn/text/cpp_source.hpp"
#include "gdn/text/json.hpp"
#include "gdn/text/number.hpp"
#include "gdn/db/integrity.hpp"

namespace gdn::db {

namespace dsp = gdn::dispatch;
namespace fs = std::filesystem;

namespace {

constexpr const char* kBucketRule =
    "exact: pass, h_qk, h_v, k, v, dtype; log2 buckets (bucket b holds [2^b, 2^(b+1))): "
    "num_seqs, total_tokens, max_seqlen (-1 = unknown, matches any); balance_bucket of "
    "total_tokens / (num_seqs max_seqlen): 2 = 1 (equal lengths), 1 = [1/2, 1), 0 = below "
    "(-1 = unknown, matches any)";
constexpr const char* kLookupRule =
    "exact bucket; else nearest entry with the same pass/heads/dims/dtype by L1 distance in "
    "bucket space (max_seqlen and balance terms 0 when unknown), ties to the smaller "
    "total_tokens distance then the earlier entry, within distance 4; else no entry: the "
    "default selection";

std::string pass_text(dsp::Pass p) { return p == dsp::Pass::Forward ? "fwd" : "bwd"; }

double entry_margin(const BucketChoice& b) { return b.margin ? *b.margin : dsp::kNoRunnerUp; }

// The compiled variant of a choice: its candidate name without the pins' suffix.
std::string_view variant_name(const BucketChoice& b) {
  return std::string_view(b.variant).substr(0, b.variant.find('+'));
}

// The pinned plan fields of a choice as a JSON object ({} when it pins none).
text::Json plan_json(const gdn_launch_options& pins) {
  text::Json out = text::Json::object();
  for (const gdn::PlanField& f : gdn::kPlanFields)
    if (pins.*f.member != GDN_PLAN_RULE) out[std::string(f.name)] = pins.*f.member;
  return out;
}

// The same as a C++ initializer of gdn_launch_options (every field, GDN_PLAN_RULE spelled -1).
std::string plan_cpp(const gdn_launch_options& pins) {
  std::string out = "{";
  for (const gdn::PlanField& f : gdn::kPlanFields)
    out += (out.size() > 1 ? ", " : "") + std::to_string(pins.*f.member);
  return out + "}";
}

std::string cpp_double(double v) {
  std::string s = text::shortest(v);  // shortest round-trip spelling is also a C++ literal
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

bool is_partial(const SweepSummary& s) { return s.sweep.status != SweepStatus::Finished; }

// What a partial export says about itself, in dispatch.json and in the header.
std::string partial_note(const SweepSummary& s) {
  return "sweep " + std::to_string(s.sweep.id) + " is " + std::string(to_string(s.sweep.status)) +
         ", not finished: its winners are the best of the part it measured";
}

using text::cpp_comment_value;
using text::cpp_string_literal;

}  // namespace

std::vector<dsp::Entry> dispatch_entries(const Selection& sel) {
  std::vector<dsp::Entry> out;
  out.reserve(sel.buckets.size());
  for (const BucketChoice& b : sel.buckets)
    out.push_back({b.key, variant_name(b), entry_margin(b), b.pins});
  return out;
}

std::string render_dispatch_json(const Selection& sel) {
  const SweepSummary& s = sel.sweep;
  text::Json entries = text::Json::array();
  for (const BucketChoice& b : sel.buckets) {
    const dsp::BucketKey& k = b.key;
    entries.push_back({{"pass", pass_text(k.pass)},
                       {"h_qk", k.h_qk},
                       {"h_v", k.h_v},
                       {"k", k.k},
                       {"v", k.v},
                       {"dtype", to_string(k.dtype)},
                       {"num_seqs_bucket", k.num_seqs_bucket},
                       {"total_tokens_bucket", k.total_tokens_bucket},
                       {"max_seqlen_bucket", k.max_seqlen_bucket},
                       {"balance_bucket", k.balance_bucket},
                       {"variant", std::string(variant_name(b))},
                       {"plan", plan_json(b.pins)},
                       {"score_ms", text::json_number(b.score_ms)},
                       {"margin", text::json_number(b.margin)},
                       {"runner_up", b.runner_up ? text::Json(*b.runner_up) : text::Json(nullptr)},
                       {"problems", b.problem_ids.size()},
                       {"near_tie_rule", b.near_tie_rule_applied},
                       {"override_reason", b.overridden ? text::Json(b.override_reason) : text::Json(nullptr)}});
  }
  const text::Json doc = {
      {"format", "gdnlab-dispatch-table"},
      {"format_version", 3},
      {"partial", is_partial(s)},
      {"partial_reason", is_partial(s) ? text::Json(partial_note(s)) : text::Json(nullptr)},
      {"bucket_rule", kBucketRule},
      {"lookup_rule", kLookupRule},
      {"device",
       {{"name", s.device.name},
        {"uuid", s.device.uuid},
        {"sm_count", s.device.sm_count},
        {"cc", std::to_string(s.device.cc_major) + "." + std::to_string(s.device.cc_minor)},
        {"sm_clock_mhz", s.device.sm_clock_mhz},
        {"driver", s.device.driver_version},
        {"cuda", s.device.cuda_version}}},
      {"build", {{"git_sha", s.build.git_sha}, {"flags", s.build.flags}, {"variant_set", s.build.variant_set}}},
      {"sweep",
       {{"id", s.sweep.id},
        {"merged_sweeps", sel.merged_sweeps},
        {"merged_db", sel.merged_db.empty() ? text::Json(nullptr) : text::Json(sel.merged_db)},
        {"status", to_string(s.sweep.status)},
        {"shapes", s.sweep.shapes},
        {"space", s.sweep.space},
        {"strategy", s.sweep.strategy},
        {"started_at", s.sweep.started_at}}},
      {"variants", sel.variants_used()},
      {"entries", std::move(entries)}};
  return text::dump_json(doc) + "\n";
}

std::string render_dispatch_header(const Selection& sel) {
  const SweepSummary& s = sel.sweep;
  std::ostringstream o;
  // Every text from the database is written as an escaped, quoted literal, in comments too:
  // a newline in a name must not end the comment and turn the rest into code.
  o << "// Generated by `gdnlab export` from sweep " << s.sweep.id << " (shapes " << cpp_comment_value(s.sweep.shapes)
    << ", started " << cpp_comment_value(s.sweep.started_at) << ")";
  for (std::int64_t id : sel.merged_sweeps)
    o << " and sweep " << id << (sel.merged_db.empty() ? "" : " of " + cpp_comment_value(sel.merged_db));
  o << ". Do not edit: export again.\n";
  if (is_partial(s)) o << "// PARTIAL: " << partial_note(s) << ".\n";
  o << "// Device: " << cpp_comment_value(s.device.name) << " (" << cpp_comment_value(s.device.uuid) << "), "
    << s.device.sm_count << " SMs, cc " << s.device.cc_major << "." << s.device.cc_minor << ", driver "
    << cpp_comment_value(s.device.driver_version) << ", CUDA " << cpp_comment_value(s.device.cuda_version) << "\n"
    << "// Build: git " << cpp_comment_value(s.build.git_sha) << ", variant set "
    << cpp_comment_value(s.build.variant_set) << "\n"
    << "// Buckets and the lookup rule: gdn/dispatch_table.hpp. Margins are runner-up time /\n"
    << "// winner time - 1 on that sweep (kNoRunnerUp: the only eligible variant). Plans: the\n"
    << "// launch-plan fields the winner pinned (gdn_launch_options order, -1: the rule).\n"
    << "#pragma once\n\n#include <array>\n#include <string_view>\n\n"
    << "#include \"gdn/dispatch_table.hpp\"\n\n"
    << "namespace gdn::dispatch::generated {\n\n"
    << "inline constexpr TableInfo kTableInfo{" << cpp_string_literal(s.device.name) << ", "
    << cpp_string_literal(s.device.uuid) << ", " << s.sweep.id << ", "
    << cpp_string_literal(s.build.git_sha) << ", " << cpp_string_literal(s.sweep.started_at)
    << "};\n\n";
  o << "// {pass, h_qk, h_v, k, v, dtype, log2 num_seqs, log2 total_tokens, log2 max_seqlen,\n"
    << "//  balance (2 equal lengths, 1 mean >= half the longest, 0 below, -1 any)}, variant,\n"
    << "//  margin, plan {prepare_overlap, cp_first_segment, prepare_split, prepare_heads, fixup_cols,\n"
    << "//  local_heads, recompute_cp_chunks, pass1_beside_recompute, group_sum_beside}\n";
  o << "inline constexpr std::array<Entry, " << sel.buckets.size() << "> kEntries{{\n";
  for (const BucketChoice& b : sel.buckets) {
    const dsp::BucketKey& k = b.key;
    o << "    // " << describe_bucket(k);
    if (b.runner_up) o << "; runner-up " << cpp_comment_value(*b.runner_up);
    if (b.overridden) o << "; override: " << cpp_comment_value(b.override_reason);
    o << "\n    {{Pass::" << (k.pass == dsp::Pass::Forward ? "Forward" : "Backward") << ", " << k.h_qk
      << ", " << k.h_v << ", " << k.k << ", " << k.v << ", DType::"
      << (k.dtype == dsp::DType::BF16 ? "BF16" : k.dtype == dsp::DType::FP16 ? "FP16" : "FP32")
      << ", " << k.num_seqs_bucket << ", " << k.total_tokens_bucket << ", " << k.max_seqlen_bucket
      << ", " << k.balance_bucket << "}, " << cpp_string_literal(std::string(variant_name(b))) << ", "
      << cpp_double(entry_margin(b)) << ", " << plan_cpp(b.pins) << "},\n";
  }
  o << "}};\n\n";
  const std::vector<std::string> names = sel.variants_used();
  o << "// The variants a pruned libgdn build compiles (-DGDN_DISPATCH_TABLE=<this header>).\n";
  o << "inline constexpr std::array<std::string_view, " << names.size() << "> kVariantNames{{\n";
  for (const std::string& n : names) o << "    " << cpp_string_literal(n) << ",\n";
  o << "}};\n\n}  // namespace gdn::dispatch::generated\n";
  return o.str();
}

namespace {

// Adds another sweep's buckets to a selection: the same kind of device (a table is tuned for
// one: name, SMs, compute capability; another GPU of that kind may have measured it, as a
// resumed sweep may), and no bucket chosen twice.
void merge_sweep(Selection& into, Selection&& other) {
  const std::string id = std::to_string(other.sweep.sweep.id);
  const DeviceRecord &a = into.sweep.device, &b = other.sweep.device;
  if (a.name != b.name || a.sm_count != b.sm_count || a.cc_major != b.cc_major || a.cc_minor != b.cc_minor)
    throw DbError(DbError::Kind::Invalid,
                  "export: merged sweep " + id + " ran on " + b.name + " (" + std::to_string(b.sm_count) +
                      " SMs, cc " + std::to_string(b.cc_major) + "." + std::to_string(b.cc_minor) + "), sweep " +
                      std::to_string(into.sweep.sweep.id) + " on " + a.name + " (" + std::to_string(a.sm_count) +
                      " SMs, cc " + std::to_string(a.cc_major) + "." + std::to_string(a.cc_minor) +
                      "): a table is tuned for one kind of device");
  for (BucketChoice& b : other.buckets) {
    for (const BucketChoice& mine : into.buckets)
      if (mine.key == b.key)
        throw DbError(DbError::Kind::Invalid, "export: bucket {" + describe_bucket(b.key) +
                                                  "} is chosen in sweep " + std::to_string(into.sweep.sweep.id) +
                                                  " and in merged sweep " + id);
    into.buckets.push_back(std::move(b));
  }
  for (SkippedBucket& s : other.skipped) into.skipped.push_back(std::move(s));
  std::sort(into.buckets.begin(), into.buckets.end(),
            [](const BucketChoice& a, const BucketChoice& b) { return a.key < b.key; });
  into.merged_sweeps.push_back(other.sweep.sweep.id);
}

[[noreturn]] void io_error(const std::string& what) { throw DbError(DbError::Kind::Io, what); }

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) io_error("export: cannot create '" + path.string() + "'");
  out << content;
  out.flush();
  if (!out) io_error("export: writing '" + path.string() + "' failed (disk full?)");
}

// Removes the listed files on scope exit unless released: no partial output survives an error.
struct Cleanup {
  std::vector<fs::path> paths;
  ~Cleanup() {
    std::error_code ec;
    for (const fs::path& p : paths) fs::remove(p, ec);
  }
};

}  // namespace

ExportResult export_dispatch(const Database& db, const ExportOptions& options) {
  if (options.out_dir.empty())
    throw DbError(DbError::Kind::Invalid, "export out_dir: expected a directory path, got ''");
  std::int64_t sweep_id = 0;
  if (options.sweep_id) {
    sweep_id = *options.sweep_id;
  } else {
    const auto latest = options.allow_partial ? latest_sweep_with_passes(db) : latest_finished_sweep_with_passes(db);
    if (!latest) {
      const bool any = latest_sweep_with_passes(db).has_value();
      throw DbError(DbError::Kind::Invalid,
                    "export: '" + db.path() + "' has no " + (options.allow_partial ? "" : "finished ") +
                        "sweep with a Passed result: nothing to export" +
                        (any ? " (an unfinished sweep has some: resume it, or name it with --sweep and "
                               "--allow-partial to export its partial table)"
                             : ""));
    }
    sweep_id = *latest;
  }
  check_sweep_results(db, sweep_id);
  ExportResult result;
  result.selection = select_winners(db, sweep_id);
  std::optional<Database> other_db;
  if (!options.merge_db.empty()) {
    other_db.emplace(Database::open(options.merge_db.string(), kReadExisting));
    result.selection.merged_db = options.merge_db.filename().string();
  }
  const Database& merge_from = other_db ? *other_db : db;
  for (std::int64_t id : options.merged_sweeps) {
    check_sweep_results(merge_from, id);
    Selection merged = select_winners(merge_from, id);
    if (is_partial(merged.sweep) && !options.allow_partial)
      throw DbError(DbError::Kind::Invalid, "export --merge-sweep " + std::to_string(id) + ": " +
                                                partial_note(merged.sweep) +
                                                "; resume it, or pass --allow-partial to export it marked partial");
    merge_sweep(result.selection, std::move(merged));
  }
  const Selection& sel = result.selection;
  if (sel.sweep.count(Outcome::Passed) == 0)
    throw DbError(DbError::Kind::Invalid, "export: sweep " + std::to_string(sweep_id) +
                                              " has no Passed result: nothing to export");
  if (sel.buckets.empty())
    throw DbError(DbError::Kind::Invalid,
                  "export: sweep " + std::to_string(sweep_id) +
                      " has no bucket where one variant passed every problem: nothing to export");
  if (is_partial(sel.sweep) && !options.allow_partial)
    throw DbError(DbError::Kind::Invalid, "export: " + partial_note(sel.sweep) +
                                              "; resume it, or pass --allow-partial to export it marked partial");
  const std::string json = render_dispatch_json(sel);
  const std::string header = render_dispatch_header(sel);

  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec || !fs::is_directory(options.out_dir))
    io_error("export out_dir '" + options.out_dir.string() + "': cannot create the directory" +
             (ec ? " (" + ec.message() + ")" : std::string(" (a file has that name)")));
  result.json_path = options.out_dir / kDispatchJsonName;
  result.header_path = options.out_dir / kDispatchHeaderName;
  const std::string tmp_suffix = ".tmp." + std::to_string(::getpid());
  const fs::path json_tmp = result.json_path.string() + tmp_suffix;
  const fs::path header_tmp = result.header_path.string() + tmp_suffix;
  Cleanup cleanup{{json_tmp, header_tmp}};
  write_file(json_tmp, json);
  write_file(header_tmp, header);
  fs::rename(json_tmp, result.json_path, ec);
  if (ec) io_error("export: renaming to '" + result.json_path.string() + "' failed: " + ec.message());
  cleanup.paths.push_back(result.json_path);  // the pair is the unit: no lone json on failure
  fs::rename(header_tmp, result.header_path, ec);
  if (ec) io_error("export: renaming to '" + result.header_path.string() + "' failed: " + ec.message());
  cleanup.paths.clear();
  return result;
}

}  // namespace gdn::db
