// CSV text -> ShapeSet. Every malformed row is reported with its line and the reason; parsing
// goes on after a bad row so that one run shows all of them (up to kMaxReportedErrors).
#include <map>
#include <string>
#include <vector>

#include "content_hash.hpp"
#include "gdn/problems/shape_set.hpp"
#include "seqlens.hpp"

namespace gdn::problems {

namespace {

constexpr std::string_view kHeader = "name,h_qk,h_v,k,v,dtype,layout,seqlens,tag";
constexpr size_t kColumns = 9;
constexpr size_t kMaxReportedErrors = 20;
// Sequences in the whole set: each row is capped (seqlens.cpp), and so is their sum, so that a
// small file of "1*1048576" rows cannot expand into gigabytes of lengths.
constexpr size_t kMaxSequencesInSet = size_t{1} << 22;

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '+' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Parses a positive int column; on failure sets `reason`.
bool positive_int(std::string_view column, std::string_view text, int* out, std::string* reason) {
  std::int64_t value = 0;
  if (!parse_count(text, &value) || value < 1 || value > (1 << 20)) {
    *reason = std::string(column) + " must be a positive integer (at most 1048576); got '" +
              std::string(text) + "'";
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

// Fills `p` from the cells of one data row; returns "" or the reason the row is malformed.
std::string parse_row(const std::vector<std::string_view>& cells, Problem* p) {
  if (cells.size() != kColumns)
    return "expected " + std::to_string(kColumns) + " comma-separated fields (" +
           std::string(kHeader) + "); got " + std::to_string(cells.size());
  if (!valid_name(cells[0]))
    return "name '" + std::string(cells[0]) +
           "' must be non-empty and use only letters, digits and _ - + .";
  p->name = cells[0];
  std::string reason;
  if (!positive_int("h_qk", cells[1], &p->h_qk, &reason) ||
      !positive_int("h_v", cells[2], &p->h_v, &reason) ||
      !positive_int("k", cells[3], &p->k, &reason) || !positive_int("v", cells[4], &p->v, &reason))
    return reason;
  if (p->h_v % p->h_qk != 0)
    return "h_v = " + std::to_string(p->h_v) + " must be a multiple of h_qk = " +
           std::to_string(p->h_qk);
  if (cells[5] == "bf16") p->dtype = GDN_BF16;
  else if (cells[5] == "fp16") p->dtype = GDN_FP16;
  else return "dtype must be bf16 or fp16; got '" + std::string(cells[5]) + "'";
  if (cells[6] == "packed") p->layout = Layout::Packed;
  else if (cells[6] == "batched") p->layout = Layout::Batched;
  else return "layout must be packed or batched; got '" + std::string(cells[6]) + "'";
  if (!parse_seqlens(cells[7], &p->seqlens, &reason)) return reason;
  if (p->layout == Layout::Batched)
    for (std::int64_t length : p->seqlens)
      if (length != p->seqlens.front())
        return "a batched layout needs sequences of one length (B rows of T tokens); got " +
               p->seqlens_text() + " (use layout packed for ragged lengths)";
  p->tag = cells[8];
  return "";
}

}  // namespace

ShapeSetError::ShapeSetError(std::string source, std::vector<RowError> errors)
    : std::runtime_error([&] {
        std::string text;
        for (const RowError& e : errors) {
          if (!text.empty()) text += '\n';
          text += source + (e.line > 0 ? ":" + std::to_string(e.line) : "") + ": " + e.reason;
        }
        return text;
      }()),
      source_(std::move(source)),
      errors_(std::move(errors)) {}

ShapeSet parse_shape_set(std::string_view csv_text, std::string_view set_name,
                         std::string_view source) {
  ShapeSet set;
  set.name = set_name;
  set.source = source;
  // A UTF-8 byte order mark (spreadsheet programs write one) is not part of the header.
  if (csv_text.starts_with("\xEF\xBB\xBF")) csv_text.remove_prefix(3);
  std::vector<RowError> errors;
  std::map<std::string, int, std::less<>> line_of_name;
  bool header_seen = false;
  int line_number = 0;
  size_t sequences = 0;
  size_t start = 0;
  while (start < csv_text.size() && errors.size() < kMaxReportedErrors) {
    const size_t newline = csv_text.find('\n', start);
    const std::string_view line = trim(csv_text.substr(
        start, newline == std::string_view::npos ? std::string_view::npos : newline - start));
    start = newline == std::string_view::npos ? csv_text.size() : newline + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      header_seen = true;
      std::string cells_joined;
      for (std::string_view cell : split_cells(line))
        cells_joined += (cells_joined.empty() ? "" : ",") + std::string(cell);
      if (cells_joined != kHeader) {
        errors.push_back({line_number, "the header must be '" + std::string(kHeader) +
                                           "'; got '" + std::string(line) + "'"});
        break;  // without the header no row can be read
      }
      continue;
    }
    Problem p;
    p.source_line = line_number;
    if (std::string reason = parse_row(split_cells(line), &p); !reason.empty()) {
      errors.push_back({line_number, reason});
      continue;
    }
    if (auto it = line_of_name.find(p.name); it != line_of_name.end()) {
      errors.push_back({line_number, "name '" + p.name + "' is already used on line " +
                                         std::to_string(it->second)});
      continue;
    }
    sequences += p.seqlens.size();
    if (sequences > kMaxSequencesInSet) {
      errors.push_back({line_number, "the set lists more than " + std::to_string(kMaxSequencesInSet) +
                                         " sequences in all; split it into smaller sets"});
      break;
    }
    line_of_name.emplace(p.name, line_number);
    set.problems.push_back(std::move(p));
  }
  if (!header_seen) errors.push_back({0, "no header line '" + std::string(kHeader) + "'"});
  else if (errors.empty() && set.problems.empty()) errors.push_back({0, "no problem rows"});
  if (!errors.empty()) throw ShapeSetError(std::string(source), std::move(errors));

  Fnv1a hash;
  hash.add("gdn-shape-set-v1");
  for (const Problem& p : set.problems) hash.add(p.name).add(p.hash_hex());
  set.content_hash = hash.value();
  return set;
}

}  // namespace gdn::problems
