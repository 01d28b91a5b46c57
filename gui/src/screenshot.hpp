// Writes the current back buffer to a PNG: the headless mode of tests and README images.
#pragma once

#include <string>

namespace gdn::gui {

// Reads GL_BACK (call after rendering, before swapping), flips rows (GL's origin is bottom
// left, PNG's top left), forces alpha to 255 (Xvfb visuals may leave it 0, which would make
// the PNG transparent) and writes RGBA via stb_image_write. Throws std::runtime_error naming
// the path on failure.
void write_framebuffer_png(const std::string& path, int width, int height);

}  // namespace gdn::gui
