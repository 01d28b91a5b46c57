// Validation and canonical form of the sweep options (see sweep_options.hpp).
#include "gdn/tuner/sweep_options.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string_view>

#include "gdn/text/number.hpp"
#include "gdn/tuner/space.hpp"
#include "gdn/tuner/wire.hpp"

namespace gdn::tuner {

namespace {
[[noreturn]] void bad(const std::string& option, const std::string& expected, const std::string& given) {
  throw std::invalid_argument(option + ": expected " + expected + ", got " + given);
}

using text::shortest;  // the args string is read by people and compared on --resume

// Protocol fields and the sweep options that set them.
struct ProtocolOption {
  std::string_view field;
  std::string_view option;
};
constexpr ProtocolOption kProtocolOptions[] = {{"warmup_calls", "--warmup"},
                                               {"min_samples", "--min-samples"},
                                               {"max_samples", "--max-samples"},
                                               {"target_rel_spread", "--target-spread"},
                                               {"time_cap_ms", "--time-cap-ms"}};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// profiler::validate is the one rule for a protocol; its message names struct fields
// ("Protocol.min_samples: expected >= 1, got 0"), which the user never typed, so they are
// spelled as the options that set them.
void validate_protocol(const profiler::Protocol& p) {
  try {
    profiler::validate(p);
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    for (const auto& [field, option] : kProtocolOptions) {
      replace_all(msg, "Protocol." + std::string(field), option);
      replace_all(msg, field, option);
    }
    throw std::invalid_argument(msg);
  }
}
}  // namespace

std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> gpus;
  std::set<int> seen;
  std::size_t start = 0;
  if (text.empty()) bad("--gpus", "a comma-separated list of GPU ordinals such as 0 or 0,1", "''");
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int v = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0)
      bad("--gpus", "a comma-separated list of GPU ordinals (integers >= 0)", "'" + text + "'");
    if (!seen.insert(v).second) bad("--gpus", "each GPU once", "'" + text + "' (GPU " + item + " twice)");
    gpus.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return gpus;
}

void validate(const SweepOptions& o) {
  namespace fs = std::filesystem;
  if (o.db_path.empty()) bad("--db", "the path of the results database", "nothing");
  if (fs::is_directory(o.db_path)) bad("--db", "a file path", "a directory '" + o.db_path + "'");
  if (o.resume && !fs::is_regular_file(o.db_path))
    bad("--resume", "an existing database holding the unfinished sweep", "'" + o.db_path + "' (no such file)");
  if (o.resume && o.resume_or_start)
    bad("--resume-or-start", "either --resume or --resume-or-start", "both");
  if (o.shapes.empty() && o.replay_db.empty())
    bad("--shapes", "a shape-set name (smoke, edge, fwd_anchors, ...) or a CSV file", "nothing");
  if (o.space.empty()) bad("--space", "default, all, or a file listing variant names", "''");
  if (o.space != "default" && o.space != "all" && !fs::is_regular_file(o.space))
    bad("--space", "default, all, or an existing file listing variant names", "'" + o.space + "' (no such file)");
  if (!is_plan_space(o.plans)) bad("--plans", kPlanSpaces, "'" + o.plans + "'");
  if (o.plans != "rule" && !o.replay_db.empty())
    bad("--plans", "rule with --replay (a replay's candidates are the recorded ones)", "'" + o.plans + "'");
  if (!o.worker_exe.empty() && !fs::is_regular_file(o.worker_exe))
    bad("--worker-exe", "an existing executable", "'" + o.worker_exe + "' (no such file)");
  if (o.strategy.kind == StrategyKind::Random && o.strategy.budget == 0)
    bad("--budget", "a number of (variant, problem) pairs > 0 for --strategy random", "0");
  if (o.strategy.kind == StrategyKind::Exhaustive && o.strategy.budget != 0)
    bad("--budget", "no budget with --strategy exhaustive (it measures every pair)",
        std::to_string(o.strategy.budget));
  if (o.gpus.empty()) bad("--gpus", "at least one GPU ordinal", "an empty list");
  // Deadlines are steady_clock time points in nanoseconds: a week is far below what they hold,
  // and far above any measurement (a larger value used to overflow into an instant Timeout).
  const std::string timeout_range = "seconds > 0 and at most " + wire::format_double(kMaxTimeoutS) + " (a week)";
  if (!(o.timeout_s > 0) || !(o.timeout_s <= kMaxTimeoutS))
    bad("--timeout", timeout_range, wire::format_double(o.timeout_s));
  if (!(o.gate_timeout_s > 0) || !(o.gate_timeout_s <= kMaxTimeoutS))
    bad("--gate-timeout", timeout_range, wire::format_double(o.gate_timeout_s));
  validate_protocol(o.precise);
  if (!o.replay_db.empty()) {
    if (!fs::is_regular_file(o.replay_db))
      bad("--replay", "an existing results database", "'" + o.replay_db + "' (no such file)");
    std::error_code ec;
    if (fs::exists(o.db_path) && fs::equivalent(o.db_path, o.replay_db, ec))
      bad("--db", "a different file than --replay (the recording is read, never written)",
          "the same file '" + o.db_path + "'");
  }
  if (o.replay_sweep && o.replay_db.empty())
    bad("--replay-sweep", "to be used together with --replay", "--replay-sweep without --replay");
  if (o.shard.count < 1 || o.shard.count > kMaxShards || o.shard.index < 1 || o.shard.index > o.shard.count)
    bad("--shard", "I/N with 1 <= I <= N <= " + std::to_string(kMaxShards), to_string(o.shard));
  if (o.replay_sweep && *o.replay_sweep <= 0)
    bad("--replay-sweep", "a sweep id > 0", std::to_string(*o.replay_sweep));
}

namespace {
// A file named on the command line, spelled the same however it was typed ("./s.csv",
// "/abs/s.csv", "dir/../s.csv"): an absolute path with symbolic links resolved.
std::string file_identity(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : canonical.string();
}

bool names_a_file(const std::string& shapes) {
  return shapes.find('/') != std::string::npos || shapes.ends_with(".csv");
}
}  // namespace

std::string canonical_args(const SweepOptions& o) {
  // --db is not part of a sweep's identity: it is the database the sweep lives in, which may be
  // named by any spelling or moved. Files are named by their canonical path; a shape set's
  // content is compared separately (its hash, on --resume).
  std::string s = "gdnlab sweep --space " + (o.space == "default" || o.space == "all" ? o.space : file_identity(o.space));
  if (!o.shapes.empty()) s += " --shapes " + (names_a_file(o.shapes) ? file_identity(o.shapes) : o.shapes);
  s += " --strategy " + std::string(strategy_name(o.strategy.kind));
  if (o.strategy.budget) s += " --budget " + std::to_string(o.strategy.budget);
  s += " --seed " + std::to_string(o.strategy.seed);
  s += " --metrics " + std::string(profiler::to_string(o.metrics));
  if (o.pm_sampling) s += " --pm-sampling";
  if (!o.replay_db.empty()) s += " --replay " + file_identity(o.replay_db);
  if (o.replay_sweep) s += " --replay-sweep " + std::to_string(*o.replay_sweep);
  if (!o.variant_filter.empty()) s += " --variants " + o.variant_filter;
  if (o.plans != "rule") s += " --plans " + o.plans;  // sweeps before plans resume unchanged
  s += " --timeout " + wire::format_double(o.timeout_s);
  s += " --gate-timeout " + wire::format_double(o.gate_timeout_s);
  const auto d = profiler::Protocol::precise();
  const auto& p = o.precise;
  if (p.warmup_calls != d.warmup_calls) s += " --warmup " + std::to_string(p.warmup_calls);
  if (p.min_samples != d.min_samples) s += " --min-samples " + std::to_string(p.min_samples);
  if (p.max_samples != d.max_samples) s += " --max-samples " + std::to_string(p.max_samples);
  if (p.target_rel_spread != d.target_rel_spread)
    s += " --target-spread " + shortest(p.target_rel_spread);
  if (p.time_cap_ms != d.time_cap_ms) s += " --time-cap-ms " + shortest(p.time_cap_ms);
  if (o.shard.sharded()) s += " --shard " + to_string(o.shard);
  return s;
}

bool glob_match(const std::string& pat, const std::string& text) {
  // Iterative matcher with single backtrack point for '*': linear in practice.
  std::size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pat.size() && (pat[p] == '?' || pat[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool passes_filter(const std::string& filter, const std::string& name) {
  if (filter.empty()) return true;
  std::size_t start = 0;
  for (;;) {
    const auto comma = filter.find(',', start);
    if (glob_match(filter.substr(start, comma == std::string::npos ? std::string::npos : comma - start), name))
      return true;
    if (comma == std::string::npos) return false;
    start = comma + 1;
  }
}

}  // namespace gdn::tuner
