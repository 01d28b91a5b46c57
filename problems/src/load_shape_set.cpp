// Finding and reading shape-set files.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "gdn/problems/shape_set.hpp"

#ifndef GDN_SHAPES_DIR
#error "GDN_SHAPES_DIR must name the source tree's scripts/shapes (problems/CMakeLists.txt)"
#endif

namespace gdn::problems {

namespace fs = std::filesystem;

fs::path shapes_dir() {
  if (const char* from_env = std::getenv("GDN_SHAPES_DIR"); from_env != nullptr && *from_env)
    return fs::path(from_env);
  return fs::path(GDN_SHAPES_DIR);
}

std::vector<std::string> available_shape_sets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(shapes_dir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".csv")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".csv");
}

std::string known_names() {
  std::string list;
  for (const std::string& n : available_shape_sets()) list += (list.empty() ? "" : ", ") + n;
  return list.empty() ? "none" : list;
}

}  // namespace

ShapeSet load_shape_set(std::string_view name_or_path) {
  if (name_or_path.empty())
    throw ShapeSetError("shape set", {{0, "the name is empty; expected a set name such as "
                                          "'smoke' or a path to a .csv file"}});
  const bool is_path = looks_like_path(name_or_path);
  const fs::path path =
      is_path ? fs::path(name_or_path) : shapes_dir() / (std::string(name_or_path) + ".csv");
  // Only a regular file of bounded size is read: a directory opens "successfully" and reads as
  // nothing, and /dev/zero or a pipe would be read until memory runs out.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!ec && fs::is_directory(status))
    throw ShapeSetError(path.string(), {{0, "is a directory; expected a .csv file"}});
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    throw ShapeSetError(path.string(), {{0, "is not a regular file (a device, pipe or socket); expected a .csv file"}});
  if (!ec && fs::exists(status) && fs::file_size(path, ec) > kMaxShapeSetBytes && !ec)
    throw ShapeSetError(path.string(), {{0, "is " + std::to_string(fs::file_size(path, ec)) +
                                                " bytes; a shape set is at most " +
                                                std::to_string(kMaxShapeSetBytes) + " bytes"}});
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string reason =
        is_path ? "cannot open the file"
                : "no shape set named '" + std::string(name_or_path) + "' in " +
                      shapes_dir().string() + " (known: " + known_names() + ")";
    throw ShapeSetError(path.string(), {{0, reason}});
  }
  // Bounded read as well: the file may grow between the size check and the read.
  std::string text(kMaxShapeSetBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxShapeSetBytes)
    throw ShapeSetError(path.string(), {{0, "is larger than " + std::to_string(kMaxShapeSetBytes) +
                                                " bytes, the most a shape set may hold"}});
  return parse_shape_set(text, path.stem().string(), path.string());
}

}  // namespace gdn::problems
