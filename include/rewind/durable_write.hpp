// rewind/durable_write.hpp — writing a whole buffer to an open file descriptor and making it
// durable, for the files rewind must never leave half-written (parameter files, observation
// files): the callers create the file, call this, and remove the file when it reports an error.
//
//   const int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
//   if (const int error = rwd::write_all_and_close(fd, bytes.data(), bytes.size()))
//     { remove(path); report(std::strerror(error)); }
//
// Retries short writes and EINTR, treats a zero-byte write as EIO, fsyncs, and always closes fd.
#pragma once

#include <unistd.h>
#include <cerrno>
#include <cstddef>

namespace rwd {

// 0 on success, else the errno of the first failure (write, fsync or close). Closes fd.
inline int write_all_and_close(int fd, const char* data, std::size_t size) {
  int error = 0;
  for (std::size_t done = 0; done < size && error == 0;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n > 0)
      done += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EINTR)
      error = errno;
    else if (n == 0)
      error = EIO;
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

}  // namespace rwd
