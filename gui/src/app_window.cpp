#include "app_window.hpp"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cfloat>
#include <cstdlib>
#include <stdexcept>

namespace gdn::gui {
namespace {

// GLFW reports errors through a callback; keep the last one to put it into the exception.
std::string& last_glfw_error() {
  static std::string text;
  return text;
}

void on_glfw_error(int code, const char* description) {
  last_glfw_error() = "GLFW error " + std::to_string(code) + ": " + description;
}

std::string glfw_failure(const char* what) {
  std::string message = std::string(what) + " failed";
  if (!last_glfw_error().empty()) message += " (" + last_glfw_error() + ")";
  const char* display = std::getenv("DISPLAY");
  if (display == nullptr || *display == '\0')
    message +=
        "; no DISPLAY is set: run under a virtual X server, e.g. "
        "xvfb-run -a -s \"-screen 0 1600x1000x24\" <command>";
  return message;
}

}  // namespace

AppWindow::AppWindow(const WindowOptions& options) : headless_(options.headless) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) throw std::runtime_error(glfw_failure("glfwInit"));
  // GL 3.0 + GLSL 130: the lowest common ground of Mesa llvmpipe (Xvfb) and real drivers.
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  window_ = glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr,
                             nullptr);
  if (window_ == nullptr) {
    const std::string message = glfw_failure("glfwCreateWindow");
    glfwTerminate();
    throw std::runtime_error(message);
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(options.headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  if (options.headless) io.IniFilename = nullptr;  // tests never leave an imgui.ini behind
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 0;
  if (!ImGui_ImplGlfw_InitForOpenGL(window_, true) || !ImGui_ImplOpenGL3_Init("#version 130")) {
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
    throw std::runtime_error("ImGui OpenGL3/GLFW backend initialisation failed");
  }
  imgui_ready_ = true;
}

AppWindow::~AppWindow() {
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  if (window_ != nullptr) glfwDestroyWindow(window_);
  glfwTerminate();
}

bool AppWindow::should_close() const { return glfwWindowShouldClose(window_) != 0; }

void AppWindow::begin_frame() {
  glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // Headless: Xvfb parks the pointer mid-screen, which would hover a row and pop a tooltip
  // into every screenshot. No pointer at all is the neutral state.
  if (headless_) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImGui::NewFrame();
}

void AppWindow::render() {
  ImGui::Render();
  glViewport(0, 0, framebuffer_width(), framebuffer_height());
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void AppWindow::present() { glfwSwapBuffers(window_); }

int AppWindow::framebuffer_width() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return w;
}

int AppWindow::framebuffer_height() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return h;
}

}  // namespace gdn::gui
