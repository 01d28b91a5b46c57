// The application shell: a GLFW window with an OpenGL 3.0 context and Dear ImGui on it
// (GLFW + OpenGL3 backends from Debian's libimgui). RAII: the destructor tears everything down
// in reverse order, so an early return never leaks the context.
#pragma once

#include <memory>
#include <string>

struct GLFWwindow;

namespace gdn::gui {

struct WindowOptions {
  std::string title;
  int width = 1600, height = 1000;
  bool headless = false;  // tests/screenshots: no imgui.ini, no vsync
};

class AppWindow {
 public:
  // Throws std::runtime_error with the GLFW error text (and an xvfb-run hint when there is no
  // display) when the window or the context cannot be created.
  explicit AppWindow(const WindowOptions& options);
  AppWindow(const AppWindow&) = delete;
  AppWindow& operator=(const AppWindow&) = delete;
  ~AppWindow();

  bool should_close() const;
  void begin_frame();  // poll events, start an ImGui frame
  void render();       // ImGui::Render + draw into the back buffer (no swap)
  void present();      // swap buffers
  int framebuffer_width() const;
  int framebuffer_height() const;

 private:
  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
  bool headless_ = false;
};

}  // namespace gdn::gui
