// checkpoint/schedule/src/schedule_registry.cpp — see rewind/schedule/schedule_registry.hpp.
#include "rewind/schedule/schedule_registry.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <utility>

#include "rewind/edit_distance.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"

namespace rwd {
namespace {

// A family that is not owned (rewind's own live as long as the program).
std::shared_ptr<const ScheduleFamily> unowned(const ScheduleFamily& family) {
  return std::shared_ptr<const ScheduleFamily>(&family, [](const ScheduleFamily*) {});
}

// Lower case, '_' read as '-'.
std::string normalised(std::string_view name) {
  std::string key(name);
  for (char& c : key)
    c = (c == '_') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

bool well_formed(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

class Registry {
 public:
  Registry() {
    for (const ScheduleFamily* family :
         {&revolve_family(), &uniform_family(), &store_all_family(), &two_level_family(),
          &three_level_family(), &custom_family(), &online_family()})
      add(unowned(*family));
  }

  void add(std::shared_ptr<const ScheduleFamily> family) {
    if (!family) detail::fail<InvalidArgument>("register_schedule_family: the family is null");
    std::vector<std::string> names = {family->name()};
    for (const std::string& alias : family->aliases()) names.push_back(alias);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& name : names) {
      if (!well_formed(name))
        detail::fail<InvalidArgument>("register_schedule_family: name '", name,
                                      "' must be lower-case letters, digits and '-'");
      if (const ScheduleFamily* other = named_locked(name))
        detail::fail<InvalidArgument>("register_schedule_family: '", name,
                                      "' is already a name of the ", other->name(), " schedule");
    }
    families_.push_back(std::move(family));
  }

  const ScheduleFamily* named(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return named_locked(normalised(name));
  }

  std::vector<const ScheduleFamily*> all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const ScheduleFamily*> out;
    for (const auto& family : families_) out.push_back(family.get());
    return out;
  }

 private:
  const ScheduleFamily* named_locked(const std::string& key) const {
    for (const auto& family : families_) {
      if (family->name() == key) return family.get();
      for (const std::string& alias : family->aliases())
        if (alias == key) return family.get();
    }
    return nullptr;
  }

  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const ScheduleFamily>> families_;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_schedule_family(std::shared_ptr<const ScheduleFamily> family) {
  registry().add(std::move(family));
}

const ScheduleFamily* schedule_family_named(std::string_view name) {
  return registry().named(name);
}

const ScheduleFamily& find_schedule_family(std::string_view name) {
  if (const ScheduleFamily* family = schedule_family_named(name)) return *family;
  // The nearest name or alias, when it is within a third of the longer word (at least 2 edits).
  const std::string key = normalised(name);
  std::string nearest;
  std::size_t best = 0;
  for (const ScheduleFamily* family : schedule_families()) {
    std::vector<std::string> names = {family->name()};
    for (const std::string& alias : family->aliases()) names.push_back(alias);
    for (const std::string& candidate : names) {
      const std::size_t distance = edit_distance(key, candidate);
      const std::size_t allowed =
          std::max<std::size_t>(2, std::max(key.size(), candidate.size()) / 3);
      if (distance <= allowed && (nearest.empty() || distance < best)) {
        nearest = family->name();
        best = distance;
      }
    }
  }
  detail::fail<InvalidArgument>("'", name, "' is not a schedule",
                                nearest.empty() ? "" : "; did you mean " + nearest + "?",
                                " (registered: ", schedule_family_names(), ")");
}

std::vector<const ScheduleFamily*> schedule_families() {
  return registry().all();
}

std::string schedule_family_names(bool only_plannable) {
  std::string text;
  for (const ScheduleFamily* family : schedule_families()) {
    if (only_plannable && family->not_planned_from_requests()) continue;
    if (!text.empty()) text += ", ";
    text += family->name();
  }
  return text;
}

}  // namespace rwd
