// Hdf5SnapshotFile (rewind/disk/hdf5_snapshot_file.hpp): HDF5 1.10 C API.
#include "rewind/disk/hdf5_snapshot_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_errors.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"

namespace rwd {
namespace {

constexpr int kFormatVersion = 1;        // a file of one process
constexpr int kSharedFormatVersion = 2;  // a file shared by ranks (per-rank records, slices)
constexpr const char* kFormat = "rewind snapshots";
constexpr std::size_t kRunIdLength = 32;  // hex digits of a 128-bit random id
constexpr Index kMaxChunkWidth = Index{1}
                                 << 27;  // 1 GiB of doubles: under HDF5's 4 GiB chunk limit

// Record layout in memory and in the file: step, checksum, run id, meta bytes.
constexpr std::size_t kStepOffset = 0;
constexpr std::size_t kChecksumOffset = 8;
constexpr std::size_t kRunIdOffset = 16;
constexpr std::size_t kMetaOffset = kRunIdOffset + kRunIdLength;

// A progress record in /progress[i, :]: magic, sequence, payload length, payload checksum (four
// little-endian uint64), then the payload.
constexpr std::size_t kProgressHeader = 32;
constexpr std::uint64_t kProgressMagic = 0x31676f7270647772ULL;  // "rwdprog1"
constexpr std::int64_t kMaxProgressBytes = std::int64_t{1} << 40;

using detail::hdf5_error_text;
using detail::Hdf5Handle;
using detail::Hdf5Kind;
using detail::QuietHdf5;

// What an OS error recorded in HDF5's messages means for the user.
std::string explain(const std::string& hdf5_text) {
  const auto has = [&](const char* s) { return hdf5_text.find(s) != std::string::npos; };
  if (has("errno = 28") || has("No space left"))
    return "the disk is full (No space left on device)";
  if (has("errno = 27") || has("File too large"))
    return "the file size limit was reached (File too large)";
  if (has("errno = 122") || has("quota")) return "the disk quota is exceeded";
  if (has("errno = 13") || has("Permission denied")) return "permission denied";
  if (has("errno = 5,") || has("Input/output error")) return "an input/output error";
  return "";
}

// "<what>: <meaning> [HDF5: <text>]" (each part only when known), from the HDF5 error text.
std::string failure_message(const std::string& what, const std::string& hdf5_text) {
  const std::string meaning = explain(hdf5_text);
  std::string message = what;
  if (!meaning.empty()) message += ": " + meaning;
  if (!hdf5_text.empty()) message += " [HDF5: " + hdf5_text + "]";
  return message;
}

[[noreturn]] void fail_hdf5(const std::string& what) {
  throw StorageError(failure_message(what, hdf5_error_text()));
}

hid_t checked(hid_t id, const std::string& what) {
  if (id < 0) fail_hdf5(what);
  return id;
}

void checked_status(herr_t status, const std::string& what) {
  if (status < 0) fail_hdf5(what);
}

// The file and memory dataspaces of one slot: its row of state_size values in /states
// ([slots × state_size]), or its element of /slots ([slots] records).
struct SlotSpaces {
  Hdf5Handle file;
  Hdf5Handle memory;
};

SlotSpaces state_row_spaces(int slots, const StateSlice& slice, int slot,
                            const std::string& where) {
  SlotSpaces spaces;
  const hsize_t dims[2] = {static_cast<hsize_t>(slots), static_cast<hsize_t>(slice.global_size)};
  spaces.file = Hdf5Handle(checked(H5Screate_simple(2, dims, nullptr), where), Hdf5Kind::dataspace);
  const hsize_t start[2] = {static_cast<hsize_t>(slot), static_cast<hsize_t>(slice.offset)};
  const hsize_t stride[2] = {1, static_cast<hsize_t>(std::max<Index>(slice.stride, 1))};
  const hsize_t count[2] = {1, static_cast<hsize_t>(slice.runs)};
  const hsize_t block[2] = {1, static_cast<hsize_t>(slice.run_length)};
  checked_status(
      H5Sselect_hyperslab(spaces.file.get(), H5S_SELECT_SET, start, stride, count, block), where);
  const hsize_t length = static_cast<hsize_t>(slice.values());
  spaces.memory =
      Hdf5Handle(checked(H5Screate_simple(1, &length, nullptr), where), Hdf5Kind::dataspace);
  return spaces;
}

// The element of /slots of (slot, rank): [slots] in a file of one process, [slots × ranks] in a
// shared one (ranks > 0).
SlotSpaces record_spaces(int slots, int ranks, int slot, int rank, const std::string& where) {
  SlotSpaces spaces;
  const int dimensions = ranks > 0 ? 2 : 1;
  const hsize_t dims[2] = {static_cast<hsize_t>(slots), static_cast<hsize_t>(ranks)};
  spaces.file =
      Hdf5Handle(checked(H5Screate_simple(dimensions, dims, nullptr), where), Hdf5Kind::dataspace);
  const hsize_t start[2] = {static_cast<hsize_t>(slot), static_cast<hsize_t>(rank)};
  const hsize_t one[2] = {1, 1};
  checked_status(
      H5Sselect_hyperslab(spaces.file.get(), H5S_SELECT_SET, start, nullptr, one, nullptr), where);
  spaces.memory =
      Hdf5Handle(checked(H5Screate_simple(1, one, nullptr), where), Hdf5Kind::dataspace);
  return spaces;
}

std::string random_run_id() {
  std::random_device device;
  std::array<std::uint32_t, 4> words{device(), device(), device(), device()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (std::uint32_t word : words)
    for (int shift = 28; shift >= 0; shift -= 4) id += kHex[(word >> shift) & 0xf];
  return id;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// rank: −1 in a file of one process (whose checksum leaves it out), else the writing rank.
std::uint64_t snapshot_checksum(std::span<const double> state, std::span<const std::byte> meta,
                                Index step, int slot, const std::string& run_id, int rank) {
  XXH3_state_t* header = XXH3_createState();
  XXH3_64bits_reset(header);
  XXH3_64bits_update(header, meta.data(), meta.size());
  const std::int64_t step64 = step;
  const std::int64_t slot64 = slot;
  XXH3_64bits_update(header, &step64, sizeof step64);
  XXH3_64bits_update(header, &slot64, sizeof slot64);
  XXH3_64bits_update(header, run_id.data(), run_id.size());
  if (rank >= 0) {
    const std::int64_t rank64 = rank;
    XXH3_64bits_update(header, &rank64, sizeof rank64);
  }
  const XXH64_hash_t seed = XXH3_64bits_digest(header);
  XXH3_freeState(header);
  return XXH3_64bits_withSeed(state.data(), state.size_bytes(), seed);
}

// The compound type of one /slots record (native in memory, little-endian in the file).
hid_t make_record_type(int meta_size, bool file_type) {
  const std::size_t size = kMetaOffset + static_cast<std::size_t>(meta_size);
  Hdf5Handle type(checked(H5Tcreate(H5T_COMPOUND, size), "creating the slot record type"),
                  Hdf5Kind::datatype);
  checked_status(
      H5Tinsert(type.get(), "step", kStepOffset, file_type ? H5T_STD_I64LE : H5T_NATIVE_INT64),
      "slot record type");
  checked_status(H5Tinsert(type.get(), "checksum", kChecksumOffset,
                           file_type ? H5T_STD_U64LE : H5T_NATIVE_UINT64),
                 "slot record type");
  Hdf5Handle text(checked(H5Tcopy(H5T_C_S1), "slot record type"), Hdf5Kind::datatype);
  checked_status(H5Tset_size(text.get(), kRunIdLength), "slot record type");
  checked_status(H5Tset_strpad(text.get(), H5T_STR_NULLPAD), "slot record type");
  checked_status(H5Tinsert(type.get(), "run_id", kRunIdOffset, text.get()), "slot record type");
  if (meta_size > 0) {
    const hsize_t length = static_cast<hsize_t>(meta_size);
    Hdf5Handle bytes(checked(H5Tarray_create2(H5T_STD_U8LE, 1, &length), "slot record type"),
                     Hdf5Kind::datatype);
    checked_status(H5Tinsert(type.get(), "meta", kMetaOffset, bytes.get()), "slot record type");
  }
  return type.release();
}

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  Hdf5Handle type(checked(H5Tcopy(H5T_C_S1), "string attribute"), Hdf5Kind::datatype);
  checked_status(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)),
                 "string attribute");
  Hdf5Handle space(checked(H5Screate(H5S_SCALAR), "string attribute"), Hdf5Kind::dataspace);
  Hdf5Handle attribute(
      checked(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              std::string("creating attribute ") + name),
      Hdf5Kind::attribute);
  checked_status(H5Awrite(attribute.get(), type.get(), value.c_str()),
                 std::string("writing attribute ") + name);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value) {
  Hdf5Handle space(checked(H5Screate(H5S_SCALAR), "integer attribute"), Hdf5Kind::dataspace);
  Hdf5Handle attribute(
      checked(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              std::string("creating attribute ") + name),
      Hdf5Kind::attribute);
  checked_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value),
                 std::string("writing attribute ") + name);
}

void write_int_array_attribute(hid_t object, const char* name,
                               const std::vector<std::int64_t>& values) {
  const hsize_t length = values.size();
  Hdf5Handle space(checked(H5Screate_simple(1, &length, nullptr), "integer array attribute"),
                   Hdf5Kind::dataspace);
  Hdf5Handle attribute(
      checked(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              std::string("creating attribute ") + name),
      Hdf5Kind::attribute);
  checked_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, values.data()),
                 std::string("writing attribute ") + name);
}

// Attribute readers return false when the attribute is absent or unreadable.
bool read_string_attribute(hid_t object, const char* name, std::string& value) {
  if (H5Aexists(object, name) <= 0) return false;
  Hdf5Handle attribute(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute);
  if (attribute.get() < 0) return false;
  Hdf5Handle type(H5Aget_type(attribute.get()), Hdf5Kind::datatype);
  if (type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING) return false;
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size + 1, '\0');
  Hdf5Handle memory(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype);
  H5Tset_size(memory.get(), size + 1);
  if (H5Aread(attribute.get(), memory.get(), buffer.data()) < 0) return false;
  value.assign(buffer.data());
  return true;
}

bool read_int_attribute(hid_t object, const char* name, std::int64_t& value) {
  if (H5Aexists(object, name) <= 0) return false;
  Hdf5Handle attribute(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute);
  if (attribute.get() < 0) return false;
  return H5Aread(attribute.get(), H5T_NATIVE_INT64, &value) >= 0;
}

bool read_int_array_attribute(hid_t object, const char* name, std::vector<std::int64_t>& values) {
  if (H5Aexists(object, name) <= 0) return false;
  Hdf5Handle attribute(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute);
  if (attribute.get() < 0) return false;
  Hdf5Handle space(H5Aget_space(attribute.get()), Hdf5Kind::dataspace);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0 || count > (1 << 24)) return false;
  values.assign(static_cast<std::size_t>(count), 0);
  return H5Aread(attribute.get(), H5T_NATIVE_INT64, values.data()) >= 0;
}

// A dataset access property list without chunk cache: every read and write reaches the file.
hid_t uncached_access() {
  Hdf5Handle access(checked(H5Pcreate(H5P_DATASET_ACCESS), "dataset access properties"),
                    Hdf5Kind::property_list);
  checked_status(H5Pset_chunk_cache(access.get(), 0, 0, 1.0), "disabling the chunk cache");
  return access.release();
}

std::string describe_existing(const std::filesystem::path& path) {
  QuietHdf5 quiet;
  std::string detail;
  if (H5Fis_hdf5(path.c_str()) > 0) {
    const Hdf5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file);
    if (file.valid()) {
      std::string run_id, created;
      if (read_string_attribute(file.get(), "run_id", run_id)) {
        detail = " (a snapshot file of run " + run_id;
        if (read_string_attribute(file.get(), "created", created)) detail += ", created " + created;
        detail += ")";
      }
    }
  }
  H5Eclear2(H5E_DEFAULT);
  return detail;
}

void check_directory(const std::filesystem::path& path, std::int64_t needed_bytes) {
  std::filesystem::path directory = path.parent_path();
  if (directory.empty()) directory = ".";
  std::error_code error;
  const auto status = std::filesystem::status(directory, error);
  if (!std::filesystem::exists(status))
    detail::fail<StorageError>("snapshot directory ", quoted(directory), " does not exist");
  if (!std::filesystem::is_directory(status))
    detail::fail<StorageError>("snapshot directory ", quoted(directory), " is not a directory");
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    detail::fail<StorageError>("snapshot directory ", quoted(directory),
                               " is not writable: ", std::strerror(errno));
  struct statvfs space {};
  if (statvfs(directory.c_str(), &space) == 0) {
    const auto available =
        static_cast<long double>(space.f_bavail) * static_cast<long double>(space.f_frsize);
    if (available < static_cast<long double>(needed_bytes))
      detail::fail<StorageError>("snapshot directory ", quoted(directory), " has ",
                                 static_cast<std::int64_t>(available),
                                 " bytes free but the snapshot file needs ", needed_bytes,
                                 ": free space or choose fewer disk snapshots");
  }
}

// The checks of a new file before anything is written: sizes, an existing file, the directory
// and its free space.
void create_checks(const std::filesystem::path& path, int slots, Index state_size, int meta_size,
                   const SnapshotFileOptions& options) {
  if (slots < 1) detail::fail<InvalidArgument>("snapshot file needs >= 1 slot, got ", slots);
  if (state_size < 1)
    detail::fail<InvalidArgument>("snapshot file: state size ", state_size, " must be >= 1");
  if (meta_size < 0 || meta_size > (1 << 16))
    detail::fail<InvalidArgument>("snapshot file: metadata size ", meta_size,
                                  " must lie in [0, 65536] bytes");
  if (options.compression_level < 0 || options.compression_level > 9)
    detail::fail<InvalidArgument>("snapshot file: compression level ", options.compression_level,
                                  " must lie in [0, 9]");
  if (options.progress_bytes < 0 || options.progress_bytes > kMaxProgressBytes)
    detail::fail<InvalidArgument>("snapshot file: progress record of ", options.progress_bytes,
                                  " bytes (must lie in [0, 2^40])");
  if (options.progress_bytes > 0 && options.compression_level > 0)
    detail::fail<InvalidArgument>(
        "a resumable snapshot file is written without compression (a compressed chunk moves in "
        "the file at every write, and a run killed meanwhile could leave the file unreadable); "
        "got compression level ",
        options.compression_level);
  if (path.empty()) detail::fail<InvalidArgument>("snapshot file: empty path");
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, error)))
    detail::fail<StorageError>("snapshot file ", quoted(path), " already exists",
                               describe_existing(path),
                               "; remove it or choose another file — rewind never overwrites one");
  const long double total =
      static_cast<long double>(slots) * (static_cast<long double>(state_size) * sizeof(double) +
                                         static_cast<long double>(kMetaOffset + meta_size)) +
      (options.progress_bytes > 0
           ? 2.0L * static_cast<long double>(options.progress_bytes + kProgressHeader)
           : 0.0L);
  if (total > 9.0e18L)
    detail::fail<InvalidArgument>("snapshot file of ", total, " bytes is too large");
  check_directory(path, static_cast<std::int64_t>(total));
}

}  // namespace

Hdf5SnapshotFile Hdf5SnapshotFile::create(const std::filesystem::path& path, int slots,
                                          Index state_size, int meta_size,
                                          const SnapshotFileOptions& options) {
  create_checks(path, slots, state_size, meta_size, options);
  QuietHdf5 quiet;
  Hdf5SnapshotFile file;
  file.path_ = path;
  file.run_id_ = random_run_id();
  file.created_ = utc_now();
  file.slots_ = slots;
  file.slice_ = StateSlice::whole_state(state_size);
  file.state_size_ = state_size;
  file.meta_size_ = meta_size;
  file.compression_level_ = options.compression_level;
  file.identity_ = options.identity;
  file.progress_capacity_ = options.progress_bytes;
  file.writable_ = true;
  file.chunk_width_ = std::min(state_size, kMaxChunkWidth);
  file.initialise(H5P_DEFAULT);
  return file;
}

Hdf5SnapshotFile Hdf5SnapshotFile::create_shared(const std::filesystem::path& path, int slots,
                                                 const StateSlice& slice, int meta_size,
                                                 const SnapshotRanks& ranks,
                                                 const SnapshotFileOptions& options) {
  // Every check ends in an agreement, so that every rank throws at the same point and none is
  // left in a collective HDF5 call the others never make.
  const auto agree = [&ranks](const std::function<void()>& check) {
    char kind = 0;
    std::string message;
    try {
      check();
    } catch (const StorageError& e) {
      kind = 'S';
      message = e.what();
    } catch (const Error& e) {
      kind = 'I';
      message = e.what();
    }
    const SnapshotRanks::Failure failure = ranks.first_failure(kind, message);
    if (failure.rank < 0) return;
    if (failure.kind == 'S') throw StorageError(failure.message);
    throw InvalidArgument(failure.message);
  };
  std::vector<std::int64_t> gathered;
  Index global_size = 0;
  agree([&] {
    global_size = slice.global_size;
    if (options.progress_bytes != 0)
      detail::fail<InvalidArgument>(
          "a snapshot file shared by every rank cannot be resumed (progress records are kept "
          "per process): use one file per rank");
    if (options.compression_level != 0)
      detail::fail<InvalidArgument>(
          "a snapshot file shared by every rank is written without compression (HDF5 filters "
          "need collective writes); got compression level ",
          options.compression_level, ": use one file per rank, or level 0");
    if (slice.run_length < 0 || slice.runs < 1 || slice.offset < 0 ||
        slice.offset + (slice.runs - 1) * slice.stride + slice.run_length > slice.global_size ||
        (slice.runs > 1 && slice.stride < slice.run_length))
      detail::fail<InvalidArgument>("snapshot file: slice of ", slice.runs, " runs of ",
                                    slice.run_length, " values from ", slice.offset, ", ",
                                    slice.stride, " apart, does not fit a state of ",
                                    slice.global_size, " values");
  });
  {
    const std::int64_t mine[5] = {slice.global_size, slice.offset, slice.run_length, slice.runs,
                                  slice.stride};
    gathered = ranks.all_gather(mine);
  }
  agree([&] {
    Index covered = 0;
    for (int k = 0; k < ranks.size(); ++k) {
      if (gathered[5 * static_cast<std::size_t>(k)] != global_size)
        detail::fail<InvalidArgument>("snapshot file: rank ", k, " has a state of ",
                                      gathered[5 * static_cast<std::size_t>(k)], " values, rank ",
                                      ranks.rank(), " one of ", global_size);
      covered += gathered[5 * static_cast<std::size_t>(k) + 2] *
                 gathered[5 * static_cast<std::size_t>(k) + 3];
    }
    if (covered != global_size)
      detail::fail<InvalidArgument>("snapshot file: the ranks hold ", covered,
                                    " values of a state of ", global_size);
  });
  // Rank 0 checks the path and the directory for everyone (one file, one directory).
  agree([&] {
    if (ranks.rank() == 0) create_checks(path, slots, global_size, meta_size, options);
  });
  // One run id and creation time for all (the attributes must be the same on every rank).
  const std::string identity = ranks.broadcast(random_run_id() + utc_now());

  QuietHdf5 quiet;
  Hdf5SnapshotFile file;
  file.path_ = path;
  file.run_id_ = identity.substr(0, kRunIdLength);
  file.created_ = identity.substr(kRunIdLength);
  file.slots_ = slots;
  file.slice_ = slice;
  file.rank_ = ranks.rank();
  file.ranks_ = ranks.size();
  for (int k = 0; k < ranks.size(); ++k) {
    const std::int64_t* g = gathered.data() + 5 * k;
    file.rank_slices_.push_back({g[0], g[1], g[2], g[3], g[4]});
  }
  file.state_size_ = slice.values();
  file.meta_size_ = meta_size;
  file.compression_level_ = 0;
  file.writable_ = true;
  file.chunk_width_ = std::min(global_size, kMaxChunkWidth);
  Hdf5Handle access(checked(H5Pcreate(H5P_FILE_ACCESS), "file access properties"),
                    Hdf5Kind::property_list);
  ranks.use_mpi_io(access.get());
  file.initialise(access.get());
  return file;
}

void Hdf5SnapshotFile::initialise(std::int64_t file_access) {
  const std::string where = "creating snapshot file " + quoted(path_);
  const Index global_size = slice_.global_size;
  file_ = checked(H5Fcreate(path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, file_access), where);
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0)
    detail::fail<StorageError>(where, ": it vanished right after creation");
  device_ = info.st_dev;
  inode_ = info.st_ino;

  // /states: one chunk per slot (or several for very wide states).
  {
    const hsize_t dims[2] = {static_cast<hsize_t>(slots_), static_cast<hsize_t>(global_size)};
    const hsize_t chunk[2] = {1, static_cast<hsize_t>(chunk_width_)};
    Hdf5Handle space(checked(H5Screate_simple(2, dims, nullptr), where), Hdf5Kind::dataspace);
    Hdf5Handle create(checked(H5Pcreate(H5P_DATASET_CREATE), where), Hdf5Kind::property_list);
    checked_status(H5Pset_chunk(create.get(), 2, chunk), where);
    checked_status(H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER), where);
    if (compression_level_ > 0) {
      checked_status(H5Pset_shuffle(create.get()), where + " (shuffle filter)");
      checked_status(H5Pset_deflate(create.get(), static_cast<unsigned>(compression_level_)),
                     where + " (deflate filter)");
    } else {
      // Reserve the file space now: the file's size is known and fixed from the start (and a
      // shared file's ranks write their slices independently into space that already exists).
      checked_status(H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY), where);
    }
    Hdf5Handle access(uncached_access(), Hdf5Kind::property_list);
    states_ = checked(H5Dcreate2(file_, "states", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                                 create.get(), access.get()),
                      where + " (dataset /states)");
  }
  // /slots: one record per slot (per slot and rank in a shared file); never-written ones read
  // step −1.
  {
    record_type_ = make_record_type(meta_size_, false);
    Hdf5Handle file_type(make_record_type(meta_size_, true), Hdf5Kind::datatype);
    const int rank_count = shared() ? 2 : 1;
    const hsize_t dims[2] = {static_cast<hsize_t>(slots_), static_cast<hsize_t>(ranks_)};
    const hsize_t chunk[2] = {static_cast<hsize_t>(std::min(slots_, 256)),
                              static_cast<hsize_t>(ranks_)};
    Hdf5Handle space(checked(H5Screate_simple(rank_count, dims, nullptr), where),
                     Hdf5Kind::dataspace);
    Hdf5Handle create(checked(H5Pcreate(H5P_DATASET_CREATE), where), Hdf5Kind::property_list);
    checked_status(H5Pset_chunk(create.get(), rank_count, chunk), where);
    std::vector<unsigned char> fill(kMetaOffset + static_cast<std::size_t>(meta_size_), 0);
    const std::int64_t never = -1;
    std::memcpy(fill.data() + kStepOffset, &never, sizeof never);
    checked_status(H5Pset_fill_value(create.get(), record_type_, fill.data()), where);
    checked_status(H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY), where);
    checked_status(H5Pset_fill_time(create.get(), H5D_FILL_TIME_ALLOC), where);
    Hdf5Handle access(uncached_access(), Hdf5Kind::property_list);
    records_ = checked(H5Dcreate2(file_, "slots", file_type.get(), space.get(), H5P_DEFAULT,
                                  create.get(), access.get()),
                       where + " (dataset /slots)");
  }
  // /progress: two records of a resumable run, written in turn (see the header).
  if (progress_capacity_ > 0) {
    const hsize_t width = static_cast<hsize_t>(progress_capacity_) + kProgressHeader;
    const hsize_t dims[2] = {2, width};
    const hsize_t chunk[2] = {1, std::min<hsize_t>(width, hsize_t{1} << 30)};
    Hdf5Handle space(checked(H5Screate_simple(2, dims, nullptr), where), Hdf5Kind::dataspace);
    Hdf5Handle create(checked(H5Pcreate(H5P_DATASET_CREATE), where), Hdf5Kind::property_list);
    checked_status(H5Pset_chunk(create.get(), 2, chunk), where);
    const unsigned char zero = 0;
    checked_status(H5Pset_fill_value(create.get(), H5T_NATIVE_UCHAR, &zero), where);
    checked_status(H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY), where);
    checked_status(H5Pset_fill_time(create.get(), H5D_FILL_TIME_ALLOC), where);
    Hdf5Handle access(uncached_access(), Hdf5Kind::property_list);
    progress_ = checked(H5Dcreate2(file_, "progress", H5T_STD_U8LE, space.get(), H5P_DEFAULT,
                                   create.get(), access.get()),
                        where + " (dataset /progress)");
    write_int_attribute(file_, "progress_bytes", progress_capacity_);
  }
  if (!identity_.empty()) write_string_attribute(file_, "run_identity", identity_);
  write_string_attribute(file_, "format", kFormat);
  write_int_attribute(file_, "format_version", shared() ? kSharedFormatVersion : kFormatVersion);
  write_string_attribute(file_, "run_id", run_id_);
  write_int_attribute(file_, "slots", slots_);
  write_int_attribute(file_, "state_size", global_size);
  write_int_attribute(file_, "meta_size", meta_size_);
  write_int_attribute(file_, "compression_level", compression_level_);
  if (shared()) {
    write_int_attribute(file_, "ranks", ranks_);
    std::vector<std::int64_t> slices;
    for (const StateSlice& s : rank_slices_)
      slices.insert(slices.end(), {s.offset, s.run_length, s.runs, s.stride});
    write_int_array_attribute(file_, "rank_slices", slices);
    write_string_attribute(file_, "checksum",
                           "per slot and rank, in /slots[slot, rank]: XXH3-64 of the rank's "
                           "values (its hyperslab of /states, little-endian float64, in order), "
                           "seeded with XXH3-64 of (meta bytes, step as int64, slot as int64, "
                           "run_id, rank as int64)");
    write_string_attribute(file_, "rank_slices_layout",
                           "per rank: offset, run_length, runs, stride — the rank holds runs runs "
                           "of run_length values of each /states row, from offset, stride apart");
  } else {
    write_string_attribute(file_, "checksum",
                           "XXH3-64 of the state bytes (little-endian float64), seeded with "
                           "XXH3-64 of (meta bytes, step as int64, slot as int64, run_id)");
  }
  write_string_attribute(file_, "created", created_);
  checked_status(H5Fflush(file_, H5F_SCOPE_LOCAL), where + " (flush)");
}

Hdf5SnapshotFile Hdf5SnapshotFile::reopen(const std::filesystem::path& path) {
  return open(path, true);
}

Hdf5SnapshotFile Hdf5SnapshotFile::open(const std::filesystem::path& path, bool for_writing) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    detail::fail<StorageError>("snapshot file ", quoted(path), " does not exist");
  QuietHdf5 quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    detail::fail<StorageError>(quoted(path),
                               " is not an HDF5 file (or is truncated or unreadable)");
  }
  Hdf5SnapshotFile file;
  file.path_ = path;
  file.file_ =
      checked(H5Fopen(path.c_str(), for_writing ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT),
              "opening snapshot file " + quoted(path) + (for_writing ? " to resume its run" : ""));
  file.writable_ = for_writing;
  std::string format;
  std::int64_t version = 0, slots = 0, state_size = 0, meta_size = 0, compression = 0;
  if (!read_string_attribute(file.file_, "format", format) || format != kFormat)
    detail::fail<StorageError>(quoted(path), " is an HDF5 file but not a rewind snapshot file");
  if (!read_int_attribute(file.file_, "format_version", version) ||
      (version != kFormatVersion && version != kSharedFormatVersion))
    detail::fail<StorageError>(quoted(path), " has snapshot format version ", version,
                               "; this rewind reads versions ", kFormatVersion, " and ",
                               kSharedFormatVersion);
  if (!read_string_attribute(file.file_, "run_id", file.run_id_) ||
      !read_int_attribute(file.file_, "slots", slots) ||
      !read_int_attribute(file.file_, "state_size", state_size) ||
      !read_int_attribute(file.file_, "meta_size", meta_size))
    detail::fail<StorageError>(quoted(path), " lacks the attributes of a rewind snapshot file");
  read_int_attribute(file.file_, "compression_level", compression);
  // state_size <= 2^56: a snapshot's bytes (8 per value, plus the metadata) fit 64 bits.
  if (slots < 1 || slots > (1 << 30) || state_size < 1 || state_size > (std::int64_t{1} << 56) ||
      meta_size < 0 || meta_size > (1 << 16))
    detail::fail<StorageError>(quoted(path), " records impossible sizes (", slots, " slots of ",
                               state_size, " values, ", meta_size, " metadata bytes)");
  file.slots_ = static_cast<int>(slots);
  file.slice_ = StateSlice::whole_state(state_size);
  file.state_size_ = state_size;
  if (version == kSharedFormatVersion) {
    std::int64_t ranks = 0;
    std::vector<std::int64_t> slices;
    if (!read_int_attribute(file.file_, "ranks", ranks) || ranks < 1 || ranks > (1 << 20) ||
        !read_int_array_attribute(file.file_, "rank_slices", slices) ||
        slices.size() != 4 * static_cast<std::size_t>(ranks))
      detail::fail<StorageError>(quoted(path),
                                 " is a shared snapshot file without readable ranks and "
                                 "rank_slices attributes");
    file.ranks_ = static_cast<int>(ranks);
    file.rank_ = 0;
    Index covered = 0;
    for (std::int64_t k = 0; k < ranks; ++k) {
      const std::int64_t* v = slices.data() + 4 * k;
      const StateSlice slice{state_size, v[0], v[1], v[2], v[3]};
      if (slice.offset < 0 || slice.run_length < 0 || slice.runs < 1 ||
          slice.offset + (slice.runs - 1) * slice.stride + slice.run_length > state_size)
        detail::fail<StorageError>(quoted(path), " records an impossible slice for rank ", k);
      covered += slice.values();
      file.rank_slices_.push_back(slice);
    }
    if (covered != state_size)
      detail::fail<StorageError>(quoted(path), ": the ranks' slices cover ", covered,
                                 " values of a state of ", state_size);
    // Read as rank 0's view (read() and state_size()); verify() checks every rank.
    file.slice_ = file.rank_slices_.front();
    file.state_size_ = file.slice_.values();
  }
  file.meta_size_ = static_cast<int>(meta_size);
  file.compression_level_ = static_cast<int>(compression);
  file.chunk_width_ = std::min<Index>(state_size, kMaxChunkWidth);
  Hdf5Handle access(uncached_access(), Hdf5Kind::property_list);
  file.states_ =
      checked(H5Dopen2(file.file_, "states", access.get()), "opening /states of " + quoted(path));
  file.records_ =
      checked(H5Dopen2(file.file_, "slots", access.get()), "opening /slots of " + quoted(path));
  file.record_type_ = make_record_type(file.meta_size_, false);
  // The attributes must describe the datasets: /states holds slots x state_size values and
  // /slots one record per slot (a file whose attributes say otherwise would be read out of
  // bounds, or sized by numbers nothing backs).
  const auto extent = [&](hid_t dataset, const char* name) {
    Hdf5Handle space(checked(H5Dget_space(dataset), "the dataspace of /" + std::string(name)),
                     Hdf5Kind::dataspace);
    hsize_t dims[2] = {0, 0};
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != rank)
      detail::fail<StorageError>(quoted(path), ": /", name, " has an unreadable shape");
    return std::vector<hsize_t>(dims, dims + rank);
  };
  const std::vector<hsize_t> states = extent(file.states_, "states");
  if (states.size() != 2 || states[0] != static_cast<hsize_t>(slots) ||
      states[1] != static_cast<hsize_t>(state_size))
    detail::fail<StorageError>(quoted(path), ": /states is not ", slots, " slots of ", state_size,
                               " values, as its attributes say");
  if (extent(file.records_, "slots")[0] != static_cast<hsize_t>(slots))
    detail::fail<StorageError>(quoted(path), ": /slots does not hold ", slots,
                               " records, as its attributes say");
  // And their types must be the ones rewind writes: HDF5 1.10 converts a foreign compound type
  // past the end of its own buffers (found by fuzzing), so nothing else is read.
  const auto has_type = [&](hid_t dataset, hid_t expected) {
    Hdf5Handle type(H5Dget_type(dataset), Hdf5Kind::datatype);
    return type.get() >= 0 && H5Tequal(type.get(), expected) > 0;
  };
  Hdf5Handle record_file_type(make_record_type(file.meta_size_, true), Hdf5Kind::datatype);
  if (!has_type(file.states_, H5T_IEEE_F64LE) || !has_type(file.records_, record_file_type.get()))
    detail::fail<StorageError>(quoted(path),
                               ": /states or /slots does not have the type rewind writes");
  read_string_attribute(file.file_, "run_identity", file.identity_);
  std::int64_t progress_bytes = 0;
  if (read_int_attribute(file.file_, "progress_bytes", progress_bytes) && progress_bytes > 0) {
    if (progress_bytes > kMaxProgressBytes || version != kFormatVersion)
      detail::fail<StorageError>(quoted(path), " records an impossible progress record size (",
                                 progress_bytes, " bytes)");
    file.progress_ = checked(H5Dopen2(file.file_, "progress", access.get()),
                             "opening /progress of " + quoted(path));
    const std::vector<hsize_t> shape = extent(file.progress_, "progress");
    if (shape.size() != 2 || shape[0] != 2 ||
        shape[1] != static_cast<hsize_t>(progress_bytes) + kProgressHeader ||
        !has_type(file.progress_, H5T_STD_U8LE))
      detail::fail<StorageError>(quoted(path), ": /progress is not two records of ", progress_bytes,
                                 " bytes, as its attributes say");
    file.progress_capacity_ = progress_bytes;
  }
  if (for_writing && file.progress_ < 0)
    detail::fail<StorageError>(quoted(path),
                               " was not made to be resumed (no /progress dataset): it was "
                               "written by a run without --resume");
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    file.device_ = info.st_dev;
    file.inode_ = info.st_ino;
  }
  if (file.progress_ >= 0) file.read_progress();  // learns the newest sequence number
  return file;
}

Hdf5SnapshotFile::Hdf5SnapshotFile(Hdf5SnapshotFile&& other) noexcept {
  *this = std::move(other);
}

Hdf5SnapshotFile& Hdf5SnapshotFile::operator=(Hdf5SnapshotFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    run_id_ = std::move(other.run_id_);
    created_ = std::move(other.created_);
    identity_ = std::move(other.identity_);
    progress_capacity_ = other.progress_capacity_;
    progress_sequence_ = other.progress_sequence_;
    slots_ = other.slots_;
    slice_ = other.slice_;
    rank_ = other.rank_;
    ranks_ = other.ranks_;
    rank_slices_ = std::move(other.rank_slices_);
    state_size_ = other.state_size_;
    meta_size_ = other.meta_size_;
    compression_level_ = other.compression_level_;
    writable_ = other.writable_;
    chunk_width_ = other.chunk_width_;
    file_ = std::exchange(other.file_, -1);
    states_ = std::exchange(other.states_, -1);
    records_ = std::exchange(other.records_, -1);
    record_type_ = std::exchange(other.record_type_, -1);
    progress_ = std::exchange(other.progress_, -1);
    device_ = other.device_;
    inode_ = other.inode_;
  }
  return *this;
}

Hdf5SnapshotFile::~Hdf5SnapshotFile() {
  release();
}

void Hdf5SnapshotFile::release() noexcept {
  QuietHdf5 quiet;
  if (record_type_ >= 0) H5Tclose(record_type_);
  if (progress_ >= 0) H5Dclose(progress_);
  if (records_ >= 0) H5Dclose(records_);
  if (states_ >= 0) H5Dclose(states_);
  if (file_ >= 0) H5Fclose(file_);
  record_type_ = records_ = states_ = file_ = progress_ = -1;
  H5Eclear2(H5E_DEFAULT);
}

void Hdf5SnapshotFile::close() {
  if (file_ < 0) return;
  QuietHdf5 quiet;
  const std::string where = "closing snapshot file " + quoted(path_);
  if (writable_ && H5Fflush(file_, H5F_SCOPE_LOCAL) < 0) {
    const std::string text = hdf5_error_text();
    release();
    throw StorageError(failure_message(where, text));
  }
  herr_t status = 0;
  H5Tclose(record_type_);
  if (progress_ >= 0) H5Dclose(progress_);
  H5Dclose(records_);
  H5Dclose(states_);
  status = H5Fclose(file_);
  record_type_ = records_ = states_ = file_ = progress_ = -1;
  if (status < 0) fail_hdf5(where);
}

namespace {
// fsync of the file or directory at `path`; false (errno set) when it cannot be opened or synced.
bool sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return synced;
}
}  // namespace

void Hdf5SnapshotFile::publish_as(const std::filesystem::path& final_path) {
  if (file_ < 0)
    detail::fail<StorageError>("publishing snapshot file ", quoted(path_), " as ",
                               quoted(final_path), ": the file is closed");
  if (writable_) checked_status(H5Fflush(file_, H5F_SCOPE_LOCAL), "flushing " + quoted(path_));
  if (!sync_path(path_, O_RDONLY))
    detail::fail<StorageError>("syncing snapshot file ", quoted(path_),
                               " to disk: ", std::strerror(errno));
  // link() refuses an existing target, so a file that appeared meanwhile is never replaced.
  // File systems without hard links get renameat2's RENAME_NOREPLACE, which refuses one just as
  // atomically, and those without that either (some network and FUSE file systems) a plain
  // rename() after the same check — where a file appearing between the two could still be
  // replaced. (tests/checkpoint/store/publish_without_hard_links_test.cpp takes each path.)
  if (::link(path_.c_str(), final_path.c_str()) == 0) {
    ::unlink(path_.c_str());
  } else {
    const int link_error = errno;
    const auto refuse_existing = [&] {
      detail::fail<StorageError>("snapshot file ", quoted(final_path),
                                 " already exists; rewind never overwrites one");
    };
    std::error_code exists_error;
    if (link_error == EEXIST ||
        std::filesystem::exists(std::filesystem::symlink_status(final_path, exists_error)))
      refuse_existing();
    if (link_error != EPERM && link_error != ENOTSUP && link_error != EOPNOTSUPP &&
        link_error != EMLINK)
      detail::fail<StorageError>("naming snapshot file ", quoted(path_), " ", quoted(final_path),
                                 ": ", std::strerror(link_error));
    if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) != 0) {
      const int rename_errno = errno;
      if (rename_errno == EEXIST) refuse_existing();
      if (rename_errno != EINVAL && rename_errno != ENOSYS && rename_errno != ENOTSUP &&
          rename_errno != EOPNOTSUPP)
        detail::fail<StorageError>("naming snapshot file ", quoted(path_), " ", quoted(final_path),
                                   ": ", std::strerror(rename_errno));
      std::error_code rename_error;
      std::filesystem::rename(path_, final_path, rename_error);
      if (rename_error)
        detail::fail<StorageError>("naming snapshot file ", quoted(path_), " ", quoted(final_path),
                                   ": ", rename_error.message());
    }
  }
  path_ = final_path;
  const std::filesystem::path directory =
      final_path.has_parent_path() ? final_path.parent_path() : std::filesystem::path(".");
  // A directory that cannot be synced (some network file systems) still holds the new name for
  // every process on this machine; only a power loss could undo it, so this is not an error.
  sync_path(directory, O_RDONLY | O_DIRECTORY);
}

bool Hdf5SnapshotFile::remove() noexcept {
  release();
  if (path_.empty()) return true;
  std::error_code error;
  std::filesystem::remove(path_, error);
  return !error;
}

void Hdf5SnapshotFile::check_slot(int slot, const char* operation) const {
  if (file_ < 0)
    detail::fail<StorageError>(operation, " slot ", slot, " of ", quoted(path_),
                               ": the file is closed");
  if (slot < 0 || slot >= slots_)
    detail::fail<InvalidArgument>(operation, " slot ", slot, " of ", quoted(path_),
                                  ": outside [0, ", slots_, ")");
}

void Hdf5SnapshotFile::check_file_in_place(const char* operation, int slot, Index step) const {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0)
    detail::fail<StorageError>(operation, " y_", step, " (slot ", slot, "): snapshot file ",
                               quoted(path_), " was removed while the run was using it");
  if (static_cast<std::uint64_t>(info.st_dev) != device_ ||
      static_cast<std::uint64_t>(info.st_ino) != inode_)
    detail::fail<StorageError>(operation, " y_", step, " (slot ", slot, "): snapshot file ",
                               quoted(path_),
                               " was replaced by another file while the run was using it");
}

void Hdf5SnapshotFile::write(int slot, Index step, std::span<const double> state,
                             std::span<const std::byte> meta) {
  check_slot(slot, "writing");
  if (!writable_)
    detail::fail<StorageError>("writing slot ", slot, " of ", quoted(path_), ": opened read-only");
  if (static_cast<Index>(state.size()) != state_size_ ||
      meta.size() != static_cast<std::size_t>(meta_size_))
    detail::fail<InvalidArgument>("writing slot ", slot, " of ", quoted(path_), ": ", state.size(),
                                  " values and ", meta.size(), " metadata bytes for a file of ",
                                  state_size_, " and ", meta_size_);
  if (step < 0) detail::fail<InvalidArgument>("writing slot ", slot, ": step ", step, " < 0");
  check_file_in_place("writing", slot, step);
  QuietHdf5 quiet;
  std::ostringstream where_stream;
  where_stream << "writing y_" << step << " to slot " << slot << " of snapshot file "
               << quoted(path_);
  const std::string where = where_stream.str();

  const SlotSpaces row = state_row_spaces(slots_, slice_, slot, where);
  checked_status(H5Dwrite(states_, H5T_NATIVE_DOUBLE, row.memory.get(), row.file.get(), H5P_DEFAULT,
                          state.data()),
                 where);

  // The record last, so that a crash between the two leaves a checksum that fails.
  std::vector<unsigned char> record(kMetaOffset + static_cast<std::size_t>(meta_size_), 0);
  const std::int64_t step64 = step;
  const std::uint64_t checksum = snapshot_checksum(state, meta, step, slot, run_id_, rank_);
  std::memcpy(record.data() + kStepOffset, &step64, sizeof step64);
  std::memcpy(record.data() + kChecksumOffset, &checksum, sizeof checksum);
  std::memcpy(record.data() + kRunIdOffset, run_id_.data(), std::min(run_id_.size(), kRunIdLength));
  if (meta_size_ > 0) std::memcpy(record.data() + kMetaOffset, meta.data(), meta.size());
  const SlotSpaces element =
      record_spaces(slots_, shared() ? ranks_ : 0, slot, std::max(rank_, 0), where);
  checked_status(H5Dwrite(records_, record_type_, element.memory.get(), element.file.get(),
                          H5P_DEFAULT, record.data()),
                 where + " (slot record)");
}

void Hdf5SnapshotFile::read_state(int slot, const StateSlice& slice,
                                  std::span<double> state) const {
  QuietHdf5 quiet;
  const std::string where =
      "reading slot " + std::to_string(slot) + " of snapshot file " + quoted(path_);
  const SlotSpaces row = state_row_spaces(slots_, slice, slot, where);
  checked_status(H5Dread(states_, H5T_NATIVE_DOUBLE, row.memory.get(), row.file.get(), H5P_DEFAULT,
                         state.data()),
                 where + " (the file may be truncated or damaged)");
}

namespace {

struct RawRecord {
  SnapshotSlotRecord record;
  std::vector<std::byte> meta;
};

// ranks: 0 in a file of one process, else the ranks sharing it.
RawRecord read_record(std::int64_t records, std::int64_t record_type, int slots, int ranks,
                      int slot, int rank, int meta_size, const std::filesystem::path& path) {
  QuietHdf5 quiet;
  const std::string where =
      "reading the record of slot " + std::to_string(slot) + " of snapshot file " + quoted(path);
  std::vector<unsigned char> buffer(kMetaOffset + static_cast<std::size_t>(meta_size), 0);
  const SlotSpaces element = record_spaces(slots, ranks, slot, rank, where);
  checked_status(H5Dread(records, record_type, element.memory.get(), element.file.get(),
                         H5P_DEFAULT, buffer.data()),
                 where + " (the file may be truncated or damaged)");
  RawRecord raw;
  raw.record.slot = slot;
  raw.record.rank = rank;
  std::int64_t step = 0;
  std::memcpy(&step, buffer.data() + kStepOffset, sizeof step);
  std::memcpy(&raw.record.checksum, buffer.data() + kChecksumOffset, sizeof raw.record.checksum);
  const char* id = reinterpret_cast<const char*>(buffer.data() + kRunIdOffset);
  raw.record.run_id.assign(id, strnlen(id, kRunIdLength));
  raw.record.step = step;
  raw.meta.resize(static_cast<std::size_t>(meta_size));
  if (meta_size > 0) std::memcpy(raw.meta.data(), buffer.data() + kMetaOffset, raw.meta.size());
  return raw;
}

}  // namespace

void Hdf5SnapshotFile::read(int slot, Index expected_step, std::span<double> state,
                            std::span<std::byte> meta) {
  check_slot(slot, "reading");
  if (static_cast<Index>(state.size()) != state_size_ ||
      meta.size() != static_cast<std::size_t>(meta_size_))
    detail::fail<InvalidArgument>("reading slot ", slot, " of ", quoted(path_), ": buffers of ",
                                  state.size(), " values and ", meta.size(),
                                  " bytes for a file of ", state_size_, " and ", meta_size_);
  if (writable_) check_file_in_place("reading", slot, expected_step);
  RawRecord raw = read_record(records_, record_type_, slots_, shared() ? ranks_ : 0, slot,
                              std::max(rank_, 0), meta_size_, path_);
  const auto where = [&] {
    return "reading y_" + std::to_string(expected_step) + " from slot " + std::to_string(slot) +
           " of snapshot file " + quoted(path_);
  };
  if (raw.record.step < 0) detail::fail<StorageError>(where(), ": the slot was never written");
  if (raw.record.run_id != run_id_)
    detail::fail<StorageError>(where(), ": the slot was written by run ", raw.record.run_id,
                               ", not by this run (", run_id_,
                               "); another run wrote into this file");
  if (raw.record.step != expected_step)
    detail::fail<StorageError>(where(), ": the slot holds y_", raw.record.step, " instead");
  read_state(slot, slice_, state);
  const std::uint64_t checksum =
      snapshot_checksum(state, raw.meta, raw.record.step, slot, run_id_, rank_);
  if (checksum != raw.record.checksum) {
    std::ostringstream out;
    out << where() << (shared() ? " (this rank's slice)" : "") << ": checksum mismatch (stored "
        << std::hex << raw.record.checksum << ", computed " << checksum
        << "): the snapshot is corrupt";
    throw StorageError(out.str());
  }
  if (meta_size_ > 0) std::memcpy(meta.data(), raw.meta.data(), raw.meta.size());
}

SnapshotSlotRecord Hdf5SnapshotFile::record(int slot, int rank) const {
  check_slot(slot, "inspecting");
  if (rank < 0 || rank >= ranks_)
    detail::fail<InvalidArgument>("inspecting slot ", slot, " of ", quoted(path_), ": rank ", rank,
                                  " outside [0, ", ranks_, ")");
  SnapshotSlotRecord record = read_record(records_, record_type_, slots_, shared() ? ranks_ : 0,
                                          slot, rank, meta_size_, path_)
                                  .record;
  QuietHdf5 quiet;
  std::int64_t stored = 0;
  for (Index first = 0; first < slice_.global_size; first += chunk_width_) {
    const hsize_t offset[2] = {static_cast<hsize_t>(slot), static_cast<hsize_t>(first)};
    hsize_t bytes = 0;
    if (H5Dget_chunk_storage_size(states_, offset, &bytes) >= 0)
      stored += static_cast<std::int64_t>(bytes);
  }
  H5Eclear2(H5E_DEFAULT);
  record.stored_bytes = stored;
  return record;
}

std::string Hdf5SnapshotFile::verify(int slot) const {
  check_slot(slot, "verifying");
  std::string problems;
  for (int rank = 0; rank < ranks_; ++rank) {
    const auto problem = [&](const std::string& text) {
      if (!problems.empty()) problems += "; ";
      problems += shared() ? "rank " + std::to_string(rank) + ": " + text : text;
    };
    try {
      RawRecord raw = read_record(records_, record_type_, slots_, shared() ? ranks_ : 0, slot, rank,
                                  meta_size_, path_);
      if (raw.record.step < 0) continue;
      if (raw.record.run_id != run_id_) {
        problem("written by run " + raw.record.run_id + ", but the file belongs to run " + run_id_);
        continue;
      }
      const StateSlice& slice = shared() ? rank_slices_[static_cast<std::size_t>(rank)] : slice_;
      std::vector<double> state(static_cast<std::size_t>(slice.values()));
      read_state(slot, slice, state);
      const std::uint64_t checksum =
          snapshot_checksum(state, raw.meta, raw.record.step, slot, run_id_, shared() ? rank : -1);
      if (checksum != raw.record.checksum) {
        std::ostringstream out;
        out << "checksum mismatch (stored " << std::hex << raw.record.checksum << ", computed "
            << checksum << ")";
        problem(out.str());
      }
    } catch (const StorageError& error) {
      problem(error.what());
    }
  }
  return problems;
}

namespace {

std::uint64_t progress_checksum(std::span<const std::byte> payload, std::uint64_t sequence) {
  return XXH3_64bits_withSeed(payload.data(), payload.size(),
                              sequence * 0x9E3779B97F4A7C15ULL ^ payload.size());
}

// The spaces of the first `bytes` bytes of /progress record `index`.
SlotSpaces progress_spaces(std::int64_t capacity, int index, hsize_t bytes,
                           const std::string& where) {
  SlotSpaces spaces;
  const hsize_t dims[2] = {2, static_cast<hsize_t>(capacity) + kProgressHeader};
  spaces.file = Hdf5Handle(checked(H5Screate_simple(2, dims, nullptr), where), Hdf5Kind::dataspace);
  const hsize_t start[2] = {static_cast<hsize_t>(index), 0};
  const hsize_t count[2] = {1, bytes};
  checked_status(
      H5Sselect_hyperslab(spaces.file.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
      where);
  spaces.memory =
      Hdf5Handle(checked(H5Screate_simple(1, &bytes, nullptr), where), Hdf5Kind::dataspace);
  return spaces;
}

}  // namespace

void Hdf5SnapshotFile::write_progress(std::span<const std::byte> progress) {
  const std::string where = "writing a progress record to snapshot file " + quoted(path_);
  if (file_ < 0) detail::fail<StorageError>(where, ": the file is closed");
  if (!writable_) detail::fail<StorageError>(where, ": opened read-only");
  if (progress_ < 0)
    detail::fail<InvalidArgument>(where, ": the file was created without room for one");
  if (static_cast<std::int64_t>(progress.size()) > progress_capacity_)
    detail::fail<InvalidArgument>(where, ": ", progress.size(), " bytes, room for ",
                                  progress_capacity_);
  QuietHdf5 quiet;
  const std::uint64_t sequence = progress_sequence_ + 1;
  std::vector<std::byte> record(kProgressHeader + progress.size());
  const std::uint64_t header[4] = {kProgressMagic, sequence, progress.size(),
                                   progress_checksum(progress, sequence)};
  std::memcpy(record.data(), header, sizeof header);
  if (!progress.empty())
    std::memcpy(record.data() + kProgressHeader, progress.data(), progress.size());
  const SlotSpaces spaces =
      progress_spaces(progress_capacity_, static_cast<int>(sequence % 2), record.size(), where);
  checked_status(H5Dwrite(progress_, H5T_NATIVE_UCHAR, spaces.memory.get(), spaces.file.get(),
                          H5P_DEFAULT, record.data()),
                 where);
  progress_sequence_ = sequence;
}

std::vector<std::byte> Hdf5SnapshotFile::read_progress() const {
  std::vector<ProgressRecord> records = progress_records();
  if (records.empty()) return {};
  return std::move(records.back().payload);
}

std::vector<Hdf5SnapshotFile::ProgressRecord> Hdf5SnapshotFile::progress_records() const {
  if (file_ < 0 || progress_ < 0) return {};
  QuietHdf5 quiet;
  const std::string where = "reading the progress records of snapshot file " + quoted(path_);
  std::vector<ProgressRecord> records;
  for (int index = 0; index < 2; ++index) {
    std::uint64_t header[4] = {0, 0, 0, 0};
    {
      const SlotSpaces spaces = progress_spaces(progress_capacity_, index, kProgressHeader, where);
      if (H5Dread(progress_, H5T_NATIVE_UCHAR, spaces.memory.get(), spaces.file.get(), H5P_DEFAULT,
                  header) < 0)
        continue;  // unreadable: as if torn
    }
    if (header[0] != kProgressMagic || header[1] == 0 ||
        header[1] % 2 != static_cast<std::uint64_t>(index) ||
        header[2] > static_cast<std::uint64_t>(progress_capacity_))
      continue;
    std::vector<std::byte> record(kProgressHeader + header[2]);
    const SlotSpaces spaces = progress_spaces(progress_capacity_, index, record.size(), where);
    if (H5Dread(progress_, H5T_NATIVE_UCHAR, spaces.memory.get(), spaces.file.get(), H5P_DEFAULT,
                record.data()) < 0)
      continue;
    const std::span<const std::byte> payload(record.data() + kProgressHeader, header[2]);
    if (progress_checksum(payload, header[1]) != header[3]) continue;  // torn by a kill
    records.push_back({header[1], std::vector<std::byte>(payload.begin(), payload.end())});
  }
  H5Eclear2(H5E_DEFAULT);
  std::sort(records.begin(), records.end(), [](const ProgressRecord& a, const ProgressRecord& b) {
    return a.sequence < b.sequence;
  });
  // A writer continues after the newest record (never overwriting it first).
  if (!records.empty()) progress_sequence_ = std::max(progress_sequence_, records.back().sequence);
  return records;
}

void Hdf5SnapshotFile::continue_after_progress(std::uint64_t sequence) {
  const std::string where = "rewinding the progress records of snapshot file " + quoted(path_);
  if (file_ < 0) detail::fail<StorageError>(where, ": the file is closed");
  if (!writable_) detail::fail<StorageError>(where, ": opened read-only");
  if (progress_ < 0)
    detail::fail<InvalidArgument>(where, ": the file was created without room for records");
  for (const ProgressRecord& record : progress_records()) {
    if (record.sequence <= sequence) continue;
    QuietHdf5 quiet;
    const std::byte zeros[kProgressHeader] = {};
    const SlotSpaces spaces = progress_spaces(
        progress_capacity_, static_cast<int>(record.sequence % 2), kProgressHeader, where);
    checked_status(H5Dwrite(progress_, H5T_NATIVE_UCHAR, spaces.memory.get(), spaces.file.get(),
                            H5P_DEFAULT, zeros),
                   where);
    checked_status(H5Fflush(file_, H5F_SCOPE_LOCAL), where);
  }
  progress_sequence_ = sequence;
}

bool Hdf5SnapshotFile::holds(int slot, Index step) const {
  if (file_ < 0 || slot < 0 || slot >= slots_ || shared()) return false;
  try {
    const RawRecord raw =
        read_record(records_, record_type_, slots_, 0, slot, 0, meta_size_, path_);
    if (raw.record.step != step || raw.record.run_id != run_id_) return false;
    return verify(slot).empty();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace rwd
