#include "screenshot.hpp"

#include <GL/gl.h>
// Debian's libstb ships the implementation compiled; only the declarations are needed here.
#include <stb_image_write.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace gdn::gui {

void write_framebuffer_png(const std::string& path, int width, int height) {
  if (width <= 0 || height <= 0)
    throw std::runtime_error("screenshot: framebuffer is " + std::to_string(width) + "x" +
                             std::to_string(height) + ", expected a positive size");
  const auto row_bytes = static_cast<std::size_t>(width) * 4;
  std::vector<std::uint8_t> pixels(row_bytes * static_cast<std::size_t>(height));
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  if (const GLenum err = glGetError(); err != GL_NO_ERROR)
    throw std::runtime_error("screenshot: glReadPixels failed with GL error " +
                             std::to_string(err));
  std::vector<std::uint8_t> flipped(pixels.size());
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* src = pixels.data() + row_bytes * static_cast<std::size_t>(height - 1 - y);
    std::uint8_t* dst = flipped.data() + row_bytes * static_cast<std::size_t>(y);
    for (std::size_t x = 0; x < row_bytes; x += 4) {
      dst[x] = src[x];
      dst[x + 1] = src[x + 1];
      dst[x + 2] = src[x + 2];
      dst[x + 3] = 255;
    }
  }
  if (stbi_write_png(path.c_str(), width, height, 4, flipped.data(),
                     static_cast<int>(row_bytes)) == 0)
    throw std::runtime_error("screenshot: cannot write PNG '" + path +
                             "' (does the directory exist and is it writable?)");
}

}  // namespace gdn::gui
