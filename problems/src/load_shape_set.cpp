// Finding and reading shape-set files.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string reason =
        is_path ? "cannot open the file"
                : "no shape set named '" + std::string(name_or_path) + "' in " +
                      shapes_dir().string() + " (known: " + known_names() + ")";
    throw ShapeSetError(path.string(), {{0, reason}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_shape_set(text.str(), path.stem().string(), path.string());
}

}  // namespace gdn::problems
