// Named shape sets: the problems a sweep, a test or a benchmark runs, kept as CSV data in
// scripts/shapes/<name>.csv (format in README.md, 'Shape sets'). Sweeps and the dashboard pick
// a set by name; the results database stores the set's name and content hash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gdn/gdn.h"

namespace gdn::problems {

// packed:  B = 1, the sequences packed along T with cu_seqlens (passed even for one sequence,
//          as the anchor tables do).
// batched: B = number of sequences, all of one length T, no cu_seqlens.
enum class Layout : std::uint8_t { Packed = 0, Batched = 1 };

struct Problem {
  std::string name;  // unique within its set
  int h_qk = 0;
  int h_v = 0;
  int k = 0;
  int v = 0;
  gdn_dtype dtype = GDN_BF16;  // of q, k, v, o
  Layout layout = Layout::Packed;
  std::vector<std::int64_t> seqlens;  // one entry per sequence, zero allowed
  std::string tag;                    // free text (the anchor's model name); not hashed
  int source_line = 0;                // line in the CSV, for messages

  std::int64_t batch() const;        // B
  std::int64_t tokens_per_row() const;  // T (all tokens when packed, the common length else)
  std::int64_t total_tokens() const;    // B * T
  std::int64_t num_seqs() const;
  std::int64_t max_seqlen() const;
  std::vector<std::int64_t> cu_seqlens() const;  // N + 1 offsets from 0 to total_tokens()
  std::string seqlens_text() const;  // canonical CSV form: runs written L*C, joined by '+'
  std::string seqlens_list() const;  // every length, comma-separated: "410,431,294"
  // Stable 64-bit FNV-1a of the fields that define the computation (heads, head dims, dtype,
  // layout, lengths); name, tag and line are left out. Same on every platform and build.
  std::uint64_t content_hash() const;
  std::string hash_hex() const;  // 16 lower-case hex digits
};

struct ShapeSet {
  std::string name;    // the file stem: "smoke" for scripts/shapes/smoke.csv
  std::string source;  // the path it was read from (or the label given to parse_shape_set)
  std::vector<Problem> problems;  // in file order
  // FNV-1a over every row's name and content hash, in order: comments, tags and spacing do
  // not change it; any change to a problem, its name or the order does.
  std::uint64_t content_hash = 0;
  std::string hash_hex() const;
  const Problem* find(std::string_view problem_name) const;  // nullptr when absent
};

struct RowError {
  int line = 0;  // 1-based; 0 for an error about the whole file
  std::string reason;
};

// Thrown for an unreadable file or malformed rows. what() lists "<source>:<line>: <reason>",
// one per line, for every bad row found (up to a limit).
class ShapeSetError : public std::runtime_error {
 public:
  ShapeSetError(std::string source, std::vector<RowError> errors);
  const std::string& source() const { return source_; }
  const std::vector<RowError>& errors() const { return errors_; }

 private:
  std::string source_;
  std::vector<RowError> errors_;
};

// Parses CSV text; `source` labels messages (a path or "<memory>").
ShapeSet parse_shape_set(std::string_view csv_text, std::string_view set_name,
                         std::string_view source);

// The largest shape-set file read (1 MiB: thousands of rows; the bundled sets are a few KiB).
inline constexpr std::size_t kMaxShapeSetBytes = std::size_t{1} << 20;

// A name ("smoke") is looked up as <shapes dir>/<name>.csv; anything containing '/' or ending
// in ".csv" is a path. Throws ShapeSetError when not found (listing the known names), not a
// regular file (a directory, a device), larger than kMaxShapeSetBytes, or bad.
ShapeSet load_shape_set(std::string_view name_or_path);

// $GDN_SHAPES_DIR when set, else the source tree's scripts/shapes (fixed at build time).
std::filesystem::path shapes_dir();
// Names of the sets in shapes_dir(), sorted.
std::vector<std::string> available_shape_sets();

const char* dtype_name(gdn_dtype d);    // "bf16", "fp16", "fp32"
const char* layout_name(Layout layout);  // "packed", "batched"

}  // namespace gdn::problems
