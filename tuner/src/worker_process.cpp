// Child process management for the worker pool (see worker_process.hpp).
#include "gdn/tuner/worker_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gdn::tuner {

namespace {
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error(std::string("cannot read /proc/self/exe: ") + std::strerror(errno));
  return std::string(buf, static_cast<std::size_t>(n));
}

WorkerProcess::WorkerProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) kill_and_reap();
  close_fd(in_fd_);
  close_fd(out_fd_);
}

void WorkerProcess::start() {
  if (argv_.empty()) throw std::invalid_argument("worker argv is empty");
  // A worker dying while we write must not kill the coordinator: writes then fail with EPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  in_fd_ = to_child[1];
  out_fd_ = from_child[0];
  ::fcntl(out_fd_, F_SETFL, ::fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  buffer_.clear();
}

bool WorkerProcess::send_line(const std::string& line) {
  std::string data = line + '\n';
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(in_fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

bool WorkerProcess::pump() {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      buffer_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;  // EOF: the child closed stdout (usually: it died)
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

std::optional<std::string> WorkerProcess::take_line() {
  const auto nl = buffer_.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buffer_.substr(0, nl);
  buffer_.erase(0, nl + 1);
  return line;
}

WorkerProcess::ReadStatus WorkerProcess::read_line(std::string& line,
                                                   std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (auto l = take_line()) {
      line = std::move(*l);
      return ReadStatus::Line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadStatus::TimedOut;
    pollfd p{out_fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return ReadStatus::Closed;
    if (r > 0 && !pump()) {
      if (auto l = take_line()) {
        line = std::move(*l);
        return ReadStatus::Line;
      }
      return ReadStatus::Closed;
    }
  }
}

std::string WorkerProcess::describe_status(int status) const {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (status " + std::to_string(status) + ")";
}

std::string WorkerProcess::kill_and_reap() {
  if (pid_ <= 0) return "not running";
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
  close_fd(in_fd_);
  close_fd(out_fd_);
  return describe_status(status);
}

std::string WorkerProcess::reap(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "not running";
  const auto until = std::chrono::steady_clock::now() + grace;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      close_fd(in_fd_);
      close_fd(out_fd_);
      return describe_status(status);
    }
    if (std::chrono::steady_clock::now() >= until) return kill_and_reap() + " (after closing its output)";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace gdn::tuner
