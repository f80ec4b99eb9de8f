// Where tests write their files: one directory per test process, made with
// mkdtemp as <temp dir>/kanon-test.XXXXXX on first use and removed with all it
// holds when the process exits normally, so that concurrent runs of the suite
// do not collide and nothing is left behind. Statics constructed after the
// first call (a fixture that starts `kanon` on a file here) are destroyed
// before the directory is removed.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace kanon::testing {

// The directory, created on the first call.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    pid_t owner = getpid();  // a forked child that exits must not remove it
    Dir() {
      std::string name = (std::filesystem::temp_directory_path() / "kanon-test.XXXXXX").string();
      if (mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
      path = name;
    }
    ~Dir() {
      std::error_code ignored;
      if (getpid() == owner) std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// The path of `name` in scratch_dir() (nothing is created there).
inline std::string scratch_path(const std::string& name) {
  return (scratch_dir() / name).string();
}

}  // namespace kanon::testing
