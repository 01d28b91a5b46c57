// Test fixture: a "recorded" results database written through the db writer, as a real sweep
// would have left it (device, build, variants, problems, one sweep, results with samples and
// a PM timeline). Values are synthetic and seeded; the replay tests check that the pipeline
// reproduces them, not that they are fast.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gdn::tuner::testing {

struct RecordedDb {
  std::string path;
  std::int64_t sweep_id = 0;
  std::vector<std::string> variants;     // procedural names, recorded order
  int problems = 0;
  std::string incorrect_variant;         // Incorrect on every problem of the first family
  std::string unsupported_variant;       // Unsupported on the last problem only
  std::string crashed_variant;           // Crashed on problem 2 only
  std::string rejected_variant;          // CompileRejected everywhere (an invalid config)
  std::vector<std::vector<double>> p50;  // [variant][problem], ms (Passed pairs)
};

// Writes the fixture to `path` (replacing it).
RecordedDb make_recorded_db(const std::string& path);

// A recording of both passes with plan candidates: a forward variant by the rule and with
// prepare_heads pinned (faster), a backward variant; every result Passed, with the plan it
// ran with, on one problem.
struct RecordedPlans {
  std::string path;
  std::string rule_candidate, pinned_candidate, backward;
};
RecordedPlans make_recorded_plans_db(const std::string& path);

// A fresh temporary directory for one test (removed by the caller at will).
std::string temp_dir(const std::string& tag);

// Runs a command line with /bin/sh, returns its exit status; stdout+stderr go to `output`.
int run_command(const std::string& command, std::string& output);

// Runs SQL on a database file directly (sqlite3, no gdnlab checks): the tests use it to damage
// recordings and to install fault triggers. Throws std::runtime_error with SQLite's message.
void exec_sql(const std::string& path, const std::string& sql);

// A tmpfs of `size` (mount's syntax, e.g. "2m") mounted on `dir` for the fault tests (a disk
// that fills up, a read-only medium); unmounted by the destructor. mounted() is false, and
// why() says why, where the machine does not allow mounting (no root, no CAP_SYS_ADMIN).
class TmpfsMount {
 public:
  TmpfsMount(const std::string& dir, const std::string& size);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  bool remount_read_only();

 private:
  std::string dir_, why_;
  bool mounted_ = false;
};

}  // namespace gdn::tuner::testing
