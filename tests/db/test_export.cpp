// Dispatch-table export: files, atomicity, errors, and a generated header that compiles and
// answers lookups (checked by the system compiler with static_asserts).
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "gdn/db/export.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

namespace dsp = gdn::dispatch;
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string export_error(const Database& db, const ExportOptions& o) {
  try {
    export_dispatch(db, o);
  } catch (const DbError& e) {
    return e.what();
  }
  return "(no error)";
}

// Compiles `probe` (which includes the exported header in `table_dir`) with -I on libgdn's
// include folder alone: the format is libgdn's, the lab's headers are not needed.
void expect_compiles(const fs::path& probe, const fs::path& table_dir) {
  const std::string log = (probe.parent_path() / "compile.log").string();
  const std::string cmd = std::string(GDN_TEST_CXX_COMPILER) + " -std=c++20 -fsyntax-only -I" +
                          GDN_TEST_GDN_INCLUDE_DIR + " -I" + table_dir.string() + " " +
                          probe.string() + " > " + log + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << read(log);
}

struct ExportTest : ::testing::Test {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  Scenario sc = write_scenario(db);
  fs::path out = dir.path() / "table";
};

TEST_F(ExportTest, WritesJsonAndHeaderAndNothingElse) {
  const ExportResult r = export_dispatch(db, {.out_dir = out});
  EXPECT_EQ(files_in(out), (std::vector<std::string>{"dispatch.json", "gdn_dispatch_table.hpp"}));
  EXPECT_EQ(r.selection.sweep.sweep.id, sc.sweep);  // the latest sweep with passes by default
  const std::string json = read(r.json_path);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["variants"], nlohmann::json({"gdn_fwd_A", "gdn_fwd_B", "gdn_fwd_C"})) << json;
  EXPECT_EQ(doc["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(doc["format_version"], 3);
  EXPECT_EQ(doc["partial"], false);
  EXPECT_EQ(doc["sweep"]["status"], "finished");
  bool b_entry = false, margin_quarter = false, no_runner_up = false;
  for (const auto& e : doc["entries"]) {
    b_entry |= e["total_tokens_bucket"] == 16 && e["max_seqlen_bucket"] == 16 && e["balance_bucket"] == 2 &&
               e["variant"] == "gdn_fwd_B";
    margin_quarter |= e["margin"] == 0.25;
    no_runner_up |= e["margin"].is_null() && e["runner_up"].is_null();
  }
  EXPECT_TRUE(b_entry && margin_quarter && no_runner_up) << json;
  EXPECT_EQ(read(r.header_path), render_dispatch_header(r.selection));
}

TEST_F(ExportTest, GeneratedHeaderCompilesAndAnswersLookups) {
  export_dispatch(db, {.sweep_id = sc.sweep, .out_dir = out});
  const fs::path probe = dir.path() / "probe.cpp";
  std::ofstream(probe) << R"cpp(
#include "gdn_dispatch_table.hpp"
using namespace gdn::dispatch;
using namespace gdn::dispatch::generated;
constexpr Shape fwd(long seqs, long tokens, long maxlen, int h_qk = 16) {
  return {Pass::Forward, h_qk, 32, 128, 128, DType::BF16, seqs, tokens, maxlen};
}
static_assert(kEntries.size() == 4);
static_assert(kVariantNames.size() == 3 && kVariantNames[1] == "gdn_fwd_B");
static_assert(kTableInfo.sweep_id == 1 && kTableInfo.device_name == "NVIDIA H200");
// exact buckets
static_assert(lookup(kEntries, fwd(1, 4500, 4500)).exact());
static_assert(lookup(kEntries, fwd(1, 4500, 4500)).entry->variant == "gdn_fwd_A");
static_assert(lookup(kEntries, fwd(1, 70000, 70000)).entry->variant == "gdn_fwd_B");
static_assert(lookup(kEntries, fwd(8, 9000, 2500)).entry->variant == "gdn_fwd_A");
static_assert(lookup(kEntries, fwd(1, 4096, 4096, 32)).entry->variant == "gdn_fwd_C");
static_assert(lookup(kEntries, fwd(1, 4096, 4096, 32)).entry->margin == kNoRunnerUp);
// in between: 32768 tokens sits nearest B's 65536 bucket
static_assert(lookup(kEntries, fwd(1, 32768, 32768)).entry->variant == "gdn_fwd_B");
static_assert(lookup(kEntries, fwd(1, 32768, 32768)).distance == 2);
// out of range: far beyond every bucket, or heads never measured
static_assert(!lookup(kEntries, fwd(1, 1L << 26, 1L << 26)).found());
static_assert(!lookup(kEntries, fwd(1, 4096, 4096, 4)).found());
int main() { return 0; }
)cpp";
  expect_compiles(probe, out);
}

TEST_F(ExportTest, RuntimeLookupsOverTheSelection) {
  const Selection sel = select_winners(db, sc.sweep);
  const std::vector<dsp::Entry> table = dispatch_entries(sel);
  ASSERT_EQ(table.size(), 4u);
  auto pick = [&](std::int64_t seqs, std::int64_t tokens, std::int64_t maxlen) {
    const dsp::Match m = dsp::lookup(table, dsp::Shape{dsp::Pass::Forward, 16, 32, 128, 128,
                                                       dsp::DType::BF16, seqs, tokens, maxlen});
    return m.found() ? std::string(m.entry->variant) : std::string("default");
  };
  EXPECT_EQ(pick(1, 5000, 5000), "gdn_fwd_A");       // exact
  EXPECT_EQ(pick(1, 100000, 100000), "gdn_fwd_B");   // exact (2^16 bucket)
  EXPECT_EQ(pick(4, 8192, 0), "gdn_fwd_A");          // between: nearest is the packed bucket
  EXPECT_EQ(pick(1, 1 << 28, 1 << 28), "default");   // beyond: default selection
}

// A sweep whose candidates pin launch-plan fields, in both passes: the winner's pins travel
// in the table (json "plan", the header's Entry::plan), its variant name without the suffix.
struct PlannedSweep {
  std::int64_t sweep = 0;
};
PlannedSweep write_planned_sweep(Database& db) {
  ResultsWriter w(db);
  PlannedSweep ps;
  ps.sweep = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  VariantRecord rule = fused_variant("gdn_fwd_A", 64, 2);
  VariantRecord pinned = rule;
  pinned.name = "gdn_fwd_A+ov2+ph4";
  pinned.pins.prepare_overlap = 2;
  pinned.pins.prepare_heads = 4;
  VariantRecord bwd = fused_variant("gdn_bwd_C+rc64", 32, 2, gdn::Pass::Backward);
  bwd.config.roles = gdn::WarpRoles::Cooperative;
  bwd.pins.recompute_cp_chunks = 64;
  const std::int64_t v_rule = w.register_variant(rule);
  const std::int64_t v_pinned = w.register_variant(pinned);
  const std::int64_t v_bwd = w.register_variant(bwd);
  const std::int64_t p = w.register_problem(problem(0, 4, 16, 1, 8192, 8192));
  insert(w, passed(ps.sweep, v_rule, p, 1.0));
  insert(w, passed(ps.sweep, v_pinned, p, 0.8));
  insert(w, passed(ps.sweep, v_bwd, p, 3.0));
  w.set_sweep_status(ps.sweep, SweepStatus::Finished);
  return ps;
}

TEST(ExportPlans, TheWinnersPinsTravelInBothFilesAndTheHeaderCompilesAgainstLibgdnAlone) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const PlannedSweep ps = write_planned_sweep(db);
  const fs::path out = dir.path() / "table";
  const ExportResult r = export_dispatch(db, {.sweep_id = ps.sweep, .out_dir = out});
  ASSERT_EQ(r.selection.buckets.size(), 2u);  // the forward bucket and the backward one
  const std::string json = read(r.json_path);
  const auto doc = nlohmann::json::parse(json);
  bool fwd_entry = false, bwd_entry = false, runner_up = false;
  for (const auto& e : doc["entries"]) {
    fwd_entry |= e["pass"] == "fwd" && e["variant"] == "gdn_fwd_A" &&
                 e["plan"] == nlohmann::json{{"prepare_overlap", 2}, {"prepare_heads", 4}};
    bwd_entry |= e["pass"] == "bwd" && e["variant"] == "gdn_bwd_C" &&
                 e["plan"] == nlohmann::json{{"recompute_cp_chunks", 64}};
    runner_up |= e["runner_up"] == "gdn_fwd_A";
  }
  EXPECT_TRUE(fwd_entry && bwd_entry && runner_up) << json;
  EXPECT_EQ(doc["variants"], nlohmann::json({"gdn_bwd_C", "gdn_fwd_A"})) << json;
  const fs::path probe = dir.path() / "probe.cpp";
  std::ofstream(probe) << R"cpp(
#include "gdn_dispatch_table.hpp"
using namespace gdn::dispatch;
using namespace gdn::dispatch::generated;
constexpr Shape fwd{Pass::Forward, 4, 16, 128, 128, DType::BF16, 1, 8192, 8192};
constexpr Shape bwd{Pass::Backward, 4, 16, 128, 128, DType::BF16, 1, 8192, 8192};
static_assert(kEntries.size() == 2);
static_assert(lookup(kEntries, fwd).entry->variant == "gdn_fwd_A");
static_assert(lookup(kEntries, fwd).entry->plan.prepare_overlap == 2);
static_assert(lookup(kEntries, fwd).entry->plan.prepare_heads == 4);
static_assert(lookup(kEntries, fwd).entry->plan.fixup_cols == GDN_PLAN_RULE);
static_assert(lookup(kEntries, fwd).entry->plan.recompute_cp_chunks == GDN_PLAN_RULE);
static_assert(lookup(kEntries, bwd).entry->variant == "gdn_bwd_C");
static_assert(lookup(kEntries, bwd).entry->plan.prepare_heads == GDN_PLAN_RULE);
static_assert(lookup(kEntries, bwd).entry->plan.recompute_cp_chunks == 64);
int main() { return 0; }
)cpp";
  expect_compiles(probe, out);
}

// A backward sweep beside a forward one: one table of both, its buckets sorted; a bucket two
// sweeps choose is an error, and so is a sweep of another device.
TEST(ExportPlans, MergedSweepsJoinOneTable) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const PlannedSweep first = write_planned_sweep(db);
  ResultsWriter w(db);
  const std::int64_t second = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  VariantRecord bwd = fused_variant("gdn_bwd_S", 64, 2, gdn::Pass::Backward);
  bwd.config.family = gdn::Family::Staged;
  bwd.config.roles = gdn::WarpRoles::Cooperative;
  const std::int64_t p2 = w.register_problem(problem(1, 2, 8, 1, 4096, 4096));
  insert(w, passed(second, w.register_variant(bwd), p2, 2.0));
  const fs::path out = dir.path() / "table";
  // An unfinished sweep merges only when asked.
  EXPECT_NE(export_error(db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {second}})
                .find("--merge-sweep " + std::to_string(second)),
            std::string::npos);
  w.set_sweep_status(second, SweepStatus::Finished);
  const ExportResult r =
      export_dispatch(db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {second}});
  ASSERT_EQ(r.selection.buckets.size(), 3u);
  EXPECT_TRUE(std::is_sorted(r.selection.buckets.begin(), r.selection.buckets.end(),
                             [](const BucketChoice& a, const BucketChoice& b) { return a.key < b.key; }));
  EXPECT_EQ(nlohmann::json::parse(read(r.json_path))["sweep"]["merged_sweeps"], nlohmann::json::array({second}));
  EXPECT_NE(read(r.header_path).find("and sweep " + std::to_string(second)), std::string::npos);
  // The first sweep again: every bucket chosen twice.
  const PlannedSweep again = write_planned_sweep(db);
  EXPECT_NE(export_error(db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {again.sweep}})
                .find("is chosen in sweep"),
            std::string::npos);
  DeviceRecord other = h200();
  other.name = "NVIDIA H100 80GB HBM3";
  other.uuid = "GPU-another-one";
  const std::int64_t elsewhere = w.begin_sweep(sweep_of(w.register_device(other), w.register_build(build())));
  insert(w, passed(elsewhere, w.register_variant(bwd), p2, 2.0));
  w.set_sweep_status(elsewhere, SweepStatus::Finished);
  EXPECT_NE(export_error(db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {elsewhere}})
                .find("a table is tuned for one kind of device"),
            std::string::npos);
}

// A sweep of another database (another H200 of the same kind, another day) merges in with
// --merge-db; the table names that database beside the sweep.
TEST(ExportPlans, ASweepOfAnotherDatabaseOnTheSameKindOfDeviceMergesIn) {
  ScratchDir dir;
  Database db = Database::open(dir.file("fwd.db"));
  const PlannedSweep first = write_planned_sweep(db);
  {
    Database other_db = Database::open(dir.file("bwd.db"));
    ResultsWriter w(other_db);
    DeviceRecord another_h200 = h200();
    another_h200.uuid = "GPU-another-h200";
    const std::int64_t s = w.begin_sweep(sweep_of(w.register_device(another_h200), w.register_build(build())));
    VariantRecord bwd = fused_variant("gdn_bwd_T", 32, 2, gdn::Pass::Backward);
    insert(w, passed(s, w.register_variant(bwd), w.register_problem(problem(1, 2, 8, 1, 4096, 4096)), 2.0));
    w.set_sweep_status(s, SweepStatus::Finished);
  }
  const fs::path out = dir.path() / "table";
  const ExportResult r = export_dispatch(
      db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {1}, .merge_db = dir.file("bwd.db")});
  ASSERT_EQ(r.selection.buckets.size(), 3u);
  const auto doc = nlohmann::json::parse(read(r.json_path));
  EXPECT_EQ(doc["sweep"]["merged_db"], "bwd.db");
  EXPECT_NE(read(r.header_path).find("and sweep 1 of \"bwd.db\""), std::string::npos) << read(r.header_path);
  EXPECT_NE(export_error(db, {.sweep_id = first.sweep, .out_dir = out, .merged_sweeps = {7},
                              .merge_db = dir.file("bwd.db")})
                .find("7"),
            std::string::npos);
}

TEST_F(ExportTest, ReExportReplacesBothFiles) {
  export_dispatch(db, {.out_dir = out});
  const std::string first = read(out / kDispatchHeaderName);
  const BucketChoice c = select_winners(db, sc.sweep).buckets[0];  // a copy: the selection is a temporary
  set_override(db, sc.sweep, c.key, "gdn_fwd_C", "pinned for the test");
  export_dispatch(db, {.out_dir = out});
  const std::string second = read(out / kDispatchHeaderName);
  EXPECT_NE(first, second);
  EXPECT_NE(second.find("override: \"pinned for the test\""), std::string::npos);
  EXPECT_NE(read(out / kDispatchJsonName).find("\"override_reason\": \"pinned for the test\""), std::string::npos);
  EXPECT_EQ(files_in(out).size(), 2u);
}

TEST(ExportErrors, NoPassingResultsGivesAnErrorAndNoFiles) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  ResultsWriter w(db);
  const std::int64_t sweep = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  const std::int64_t v = w.register_variant(fused_variant("gdn_fwd_A", 64, 2));
  const std::int64_t p = w.register_problem(problem(0, 16, 32, 1, 64, 64));
  insert(w, failed(sweep, v, p, Outcome::Incorrect, "wrong"));
  const fs::path out = dir.path() / "table";
  EXPECT_NE(export_error(db, {.out_dir = out}).find("has no finished sweep with a Passed result"), std::string::npos);
  EXPECT_NE(export_error(db, {.sweep_id = sweep, .out_dir = out}).find("sweep 1 has no Passed result"),
            std::string::npos);
  EXPECT_NE(export_error(db, {.sweep_id = 77, .out_dir = out}).find("sweep id 77 does not exist"),
            std::string::npos);
  EXPECT_TRUE(files_in(out).empty());
}

TEST(ExportErrors, ForeignSchemaIsRefusedBeforeAnyOutput) {
  ScratchDir dir;
  const std::string path = dir.file("foreign.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  try {
    Database db = Database::open(path, {.create_if_missing = false});
    export_dispatch(db, {.out_dir = dir.path() / "table"});
    FAIL() << "a foreign database must not export";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::ForeignSchema);
  }
  EXPECT_TRUE(files_in(dir.path() / "table").empty());
}

TEST_F(ExportTest, UnwritableOutputLeavesNoFiles) {
  std::ofstream(dir.path() / "a_file") << "x";
  const std::string message = export_error(db, {.out_dir = dir.path() / "a_file"});
  EXPECT_NE(message.find("cannot create the directory"), std::string::npos) << message;
  EXPECT_NE(export_error(db, {}).find("out_dir"), std::string::npos);
  // The header name is taken by a directory: the json is renamed first and must be removed again.
  fs::create_directories(out / kDispatchHeaderName / "blocker");
  EXPECT_NE(export_error(db, {.out_dir = out}).find("renaming"), std::string::npos);
  EXPECT_EQ(files_in(out), (std::vector<std::string>{kDispatchHeaderName}));  // only the blocker dir
}

// Export defaults to the newest finished sweep; an unfinished one is refused unless asked for,
// and then marked partial in both files.
TEST_F(ExportTest, UnfinishedSweepsAreExportedOnlyWhenAskedAndMarkedPartial) {
  ResultsWriter w(db);
  // A newer sweep, still running, with a Passed result: the default must not pick it.
  const std::int64_t newer = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  insert(w, passed(newer, sc.a, sc.p[0], 0.5));
  EXPECT_EQ(export_dispatch(db, {.out_dir = out}).selection.sweep.sweep.id, sc.sweep);
  const std::string refused = export_error(db, {.sweep_id = newer, .out_dir = dir.path() / "partial"});
  EXPECT_NE(refused.find("not finished"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--allow-partial"), std::string::npos) << refused;
  EXPECT_TRUE(files_in(dir.path() / "partial").empty());

  const ExportResult r = export_dispatch(db, {.sweep_id = newer, .out_dir = dir.path() / "partial", .allow_partial = true});
  const auto doc = nlohmann::json::parse(read(r.json_path));
  EXPECT_EQ(doc["partial"], true);
  EXPECT_EQ(doc["sweep"]["status"], "running");
  EXPECT_NE(read(r.header_path).find("// PARTIAL: sweep " + std::to_string(newer) + " is running"), std::string::npos);
  // Without a finished sweep at all, the default names the way out.
  w.set_sweep_status(sc.sweep, SweepStatus::Interrupted);
  EXPECT_NE(export_error(db, {.out_dir = out}).find("--allow-partial"), std::string::npos);
}

// Text from the database is escaped wherever it is written: a device name with a newline and
// code, a shape-set name that is not UTF-8, comment terminators and a trailing backslash leave
// the header compiling to the same bytes and the JSON valid.
TEST(ExportEscaping, HostileDatabaseTextStaysInertInHeaderAndJson) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  ResultsWriter w(db);
  DeviceRecord device = h200();
  device.name = "NVIDIA H200\n#error injected\n*/ \"quoted\" ?\?= \\";
  device.uuid = "GPU-\xff\xfe-not-utf8";
  const std::int64_t device_id = w.register_device(device);
  SweepRecord sweep = sweep_of(device_id, w.register_build(build()));
  sweep.shapes = "shapes\n} namespace x { \xc3\x28 \\";
  const std::int64_t sweep_id = w.begin_sweep(sweep);
  const std::int64_t v = w.register_variant(fused_variant("gdn_fwd_A", 64, 2));
  const std::int64_t p = w.register_problem(problem(0, 16, 32, 1, 4096, 4096));
  insert(w, passed(sweep_id, v, p, 1.0));
  w.set_sweep_status(sweep_id, SweepStatus::Finished);
  const fs::path out = dir.path() / "table";
  const ExportResult r = export_dispatch(db, {.out_dir = out});

  const std::string json = read(r.json_path);
  ASSERT_NO_THROW(nlohmann::json::parse(json)) << json;  // strict: invalid UTF-8 would throw
  EXPECT_EQ(nlohmann::json::parse(json)["device"]["name"], device.name);

  const fs::path probe = dir.path() / "probe.cpp";
  std::ofstream(probe) << R"cpp(
#include "gdn_dispatch_table.hpp"
using namespace gdn::dispatch::generated;
static_assert(kTableInfo.device_name == "NVIDIA H200\n#error injected\n*/ \"quoted\" ?\?= \\");
static_assert(kEntries.size() == 1 && kVariantNames[0] == "gdn_fwd_A");
int main() { return 0; }
)cpp";
  const std::string log = (dir.path() / "compile.log").string();
  const std::string cmd = std::string(GDN_TEST_CXX_COMPILER) + " -std=c++20 -fsyntax-only -I" +
                          GDN_TEST_GDN_INCLUDE_DIR + " -I" + out.string() + " " + probe.string() + " > " + log +
                          " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << read(log) << "\n" << read(r.header_path);
}

}  // namespace
}  // namespace gdn::db::test
