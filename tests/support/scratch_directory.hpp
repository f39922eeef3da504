// A fresh directory under the system's temporary directory, removed with everything in it when
// the object goes out of scope; and helpers to damage files the way disks and users do.
#pragma once

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace rwd::test {

class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& tag = "rewind-test") {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Files directly inside the directory.
  std::vector<std::filesystem::path> files() const {
    std::vector<std::filesystem::path> out;
    for (const auto& entry : std::filesystem::directory_iterator(path_))
      out.push_back(entry.path());
    return out;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `bytes` over the start of an existing file without truncating it or changing its inode.
inline void overwrite_in_place(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Offset of the first occurrence of the bytes of `value` in the file, or −1.
inline std::int64_t find_double(const std::filesystem::path& path, double value) {
  const std::vector<char> bytes = read_bytes(path);
  const char* needle = reinterpret_cast<const char*>(&value);
  for (std::size_t i = 0; i + sizeof value <= bytes.size(); ++i)
    if (std::equal(needle, needle + sizeof value, bytes.begin() + static_cast<std::ptrdiff_t>(i)))
      return static_cast<std::int64_t>(i);
  return -1;
}

// Flips one bit of the byte at `offset`, in place.
inline void flip_bit(const std::filesystem::path& path, std::int64_t offset, int bit = 3) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(offset);
  char byte = 0;
  file.get(byte);
  byte = static_cast<char>(byte ^ (1 << bit));
  file.seekp(offset);
  file.put(byte);
}

// Limits the size of files this process writes (RLIMIT_FSIZE) while in scope: writes past the
// limit fail with EFBIG, as on a full disk (SIGXFSZ is ignored meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

}  // namespace rwd::test
