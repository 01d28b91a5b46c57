// gdn-gui-png-check: asserts a screenshot is a real picture, not a blank or black frame:
// expected size, enough distinct colours, enough pixels away from the background, and
// optionally enough pixels of the dashboard's error colour (the missing/corrupt DB message).
#include <CLI/CLI.hpp>
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <set>

int main(int argc, char** argv) {
  CLI::App app{"Check a dashboard screenshot has non-trivial content"};
  std::string path;
  int width = 0, height = 0, min_colors = 16;
  double min_foreground = 0.01;
  int min_error_pixels = 0;
  app.add_option("png", path, "Screenshot to check")->required()->check(CLI::ExistingFile);
  app.add_option("--width", width, "Expected width (0: any)");
  app.add_option("--height", height, "Expected height (0: any)");
  app.add_option("--min-colors", min_colors, "Fewest distinct RGB colours");
  app.add_option("--min-foreground", min_foreground,
                 "Smallest fraction of pixels that differ from the most common colour");
  app.add_option("--min-error-pixels", min_error_pixels,
                 "Fewest pixels in the error text colour (red-orange)");
  CLI11_PARSE(app, argc, argv);

  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &channels, 4);
  if (pixels == nullptr) {
    std::fprintf(stderr, "%s: not a readable PNG (%s)\n", path.c_str(), stbi_failure_reason());
    return 1;
  }
  int failures = 0;
  if ((width && w != width) || (height && h != height)) {
    std::fprintf(stderr, "%s: size %dx%d, expected %dx%d\n", path.c_str(), w, h, width, height);
    ++failures;
  }
  std::set<unsigned> colors;
  std::size_t error_pixels = 0, opaque = 0;
  const std::size_t n = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  std::vector<unsigned> rgb(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* p = pixels + 4 * i;
    rgb[i] = (unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2];
    colors.insert(rgb[i]);
    opaque += p[3] == 255;
    if (p[0] > 200 && p[1] > 70 && p[1] < 140 && p[2] > 50 && p[2] < 120) ++error_pixels;
  }
  stbi_image_free(pixels);
  // The most common colour is the background; count everything else as content.
  std::vector<unsigned> sorted = rgb;
  std::sort(sorted.begin(), sorted.end());
  std::size_t best = 0, run = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    run = (i > 0 && sorted[i] == sorted[i - 1]) ? run + 1 : 1;
    best = std::max(best, run);
  }
  const double foreground = n ? 1.0 - double(best) / double(n) : 0.0;
  std::printf("%s: %dx%d, %zu colours, %.1f%% foreground, %zu error-colour pixels\n", path.c_str(),
              w, h, colors.size(), foreground * 100, error_pixels);
  if (opaque != n) {
    std::fprintf(stderr, "%s: %zu pixels are not opaque\n", path.c_str(), n - opaque);
    ++failures;
  }
  if (static_cast<int>(colors.size()) < min_colors) {
    std::fprintf(stderr, "%s: only %zu colours, expected at least %d\n", path.c_str(),
                 colors.size(), min_colors);
    ++failures;
  }
  if (foreground < min_foreground) {
    std::fprintf(stderr, "%s: %.2f%% foreground, expected at least %.2f%%\n", path.c_str(),
                 foreground * 100, min_foreground * 100);
    ++failures;
  }
  if (static_cast<int>(error_pixels) < min_error_pixels) {
    std::fprintf(stderr, "%s: %zu error-colour pixels, expected at least %d\n", path.c_str(),
                 error_pixels, min_error_pixels);
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
