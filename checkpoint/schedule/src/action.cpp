// Diagnostics for the action vocabulary (rewind/schedule/action.hpp).
#include "rewind/schedule/action.hpp"

#include <string>

namespace rwd {

std::string_view to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::advance:
      return "advance";
    case ActionKind::store:
      return "store";
    case ActionKind::restore:
      return "restore";
    case ActionKind::reverse:
      return "reverse";
    case ActionKind::free:
      return "free";
    case ActionKind::done:
      return "done";
    case ActionKind::store_stages:
      return "store-stages";
  }
  return "unknown action";
}

std::string Action::to_string() const {
  const std::string n = std::to_string(step);
  const std::string s = std::to_string(slot);
  switch (kind) {
    case ActionKind::advance:
      return "advance to " + n;
    case ActionKind::store:
      return "store y_" + n + " in slot " + s;
    case ActionKind::restore:
      return "restore y_" + n + " from slot " + s;
    case ActionKind::reverse:
      return slot >= 0 ? "reverse step " + n + " with the stages in slot " + s
                       : "reverse step " + n;
    case ActionKind::free:
      return "free slot " + s + " (y_" + n + ")";
    case ActionKind::done:
      return "done";
    case ActionKind::store_stages:
      return "store stages of step " + n + " in slot " + s;
  }
  return "unknown action (kind " + std::to_string(static_cast<int>(kind)) + ", step " + n +
         ", slot " + s + ")";
}

}  // namespace rwd
