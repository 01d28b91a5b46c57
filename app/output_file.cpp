// The output options of report, gap and compare (commands.hpp): --format, --out.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "commands.hpp"

namespace gdn::cli {

namespace {

std::string write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return "--out: cannot create '" + tmp + "'";
    f << text;
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return "--out: writing '" + tmp + "' failed (disk full?)";
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return "--out: renaming to '" + path + "' failed: " + ec.message();
  }
  return {};
}

}  // namespace

db::ReportFormat report_format_option(const std::string& text) {
  const auto format = db::parse_report_format(text);
  if (!format) throw std::invalid_argument("--format: expected table, csv or json, got '" + text + "'");
  return *format;
}

std::optional<int> refuse_directory_out(const std::string& sub, const std::string& out) {
  if (!out.empty() && std::filesystem::is_directory(out))
    return usage_error(sub, "--out: expected a file path, got the directory '" + out + "'");
  return std::nullopt;
}

int write_output(const std::string& out, const std::string& text) {
  if (out.empty()) {
    std::cout << text;
    return 0;
  }
  if (const std::string err = write_atomically(out, text); !err.empty())
    throw db::DbError(db::DbError::Kind::Io, err);
  std::cout << "wrote " << out << '\n';
  return 0;
}

}  // namespace gdn::cli
