// tests/common/scratch_dir.h — a fresh directory under $TMPDIR (else /tmp) for one test, removed after it.
#ifndef PTO_TESTS_SCRATCH_DIR_H
#define PTO_TESTS_SCRATCH_DIR_H

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace pto_test {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string &prefix) {
    const char *tmp = getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix + ".XXXXXX";
    EXPECT_NE(mkdtemp(&tmpl[0]), nullptr) << "cannot create a directory like " << tmpl;
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  const std::string &path() const { return path_; }
  // Writes `text` to path()/relative (creating its directories); returns the file's path.
  std::string write(const std::string &relative, const std::string &text) const {
    const std::filesystem::path p = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::string path_;
};

}  // namespace pto_test
#endif  // PTO_TESTS_SCRATCH_DIR_H
