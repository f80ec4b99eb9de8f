// Report files on the kanon host: a directory another user could plant
// links in (a shared /tmp/kanon-exports) is refused, and a file is never
// written through a link or over an existing file (found by a security
// probe: a symbolic link at the next second's report name made kanon export,
// run as root, overwrite a root-owned file; reports were world-readable).
#include "publish/private_files.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "publish/export_request.h"
#include "tests/support/scratch_dir.h"

using kanon::publish::ensure_private_directory;
using kanon::publish::ExportError;
using kanon::publish::write_new_file;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string error_of(const std::string& dir) {
  try {
    ensure_private_directory(dir);
  } catch (const ExportError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the report directory is made 0700 and must be this user's and written by no one else") {
  const std::string root = kanon::testing::scratch_path("private-files");
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string made = root + "/a/b/reports";
  CHECK(error_of(made).empty());
  struct stat st {};
  REQUIRE(::lstat(made.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(error_of(made).empty());  // again: it exists, that is fine

  const std::string shared = root + "/shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);  // like /tmp
  CHECK(error_of(shared).find("others may write") != std::string::npos);

  const std::string link = root + "/link";
  fs::create_directory_symlink(made, link);
  CHECK(error_of(link).find("symbolic link") != std::string::npos);

  const std::string file = root + "/file";
  std::ofstream(file) << "x";
  CHECK(error_of(file).find("not a directory") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("a report file is new, 0600, and never written through a link") {
  const std::string root = kanon::testing::scratch_path("private-files-2");
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string victim = root + "/victim";
  std::ofstream(victim) << "precious";
  const std::string planted = root + "/t-20261127T000000.json";
  fs::create_symlink(victim, planted);
  CHECK_FALSE(write_new_file(planted, "report"));
  CHECK(read(victim) == "precious");

  const std::string fresh = root + "/t-20261127T000001.json";
  CHECK(write_new_file(fresh, "report"));
  CHECK(read(fresh) == "report");
  struct stat st {};
  REQUIRE(::stat(fresh.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(write_new_file(fresh, "again"));  // never over an existing file
  CHECK(read(fresh) == "report");
  CHECK_THROWS_AS(write_new_file(root + "/missing/dir.json", "x"), ExportError);
  fs::remove_all(root);
}
