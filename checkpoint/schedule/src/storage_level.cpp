// checkpoint/schedule/src/storage_level.cpp — see rewind/schedule/storage_level.hpp.
#include "rewind/schedule/storage_level.hpp"

namespace rwd {

const char* level_kind_name(LevelKind kind) {
  switch (kind) {
    case LevelKind::memory:
      return "memory";
    case LevelKind::host:
      return "host";
    case LevelKind::disk:
      return "disk";
  }
  return "?";
}

}  // namespace rwd
