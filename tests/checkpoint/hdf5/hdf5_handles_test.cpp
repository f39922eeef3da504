// The HDF5 plumbing shared by snapshot, parameter and time-series files: a handle closes its
// identifier with the function of its kind, exactly once, also after moves; QuietHdf5 silences
// HDF5 and restores its printer; the error stack comes back as text and is cleared.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "rewind/hdf5/hdf5_errors.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"
#include "support/scratch_directory.hpp"

namespace rwd::detail {
namespace {

bool is_open(hid_t id) {
  return H5Iis_valid(id) > 0;
}

TEST(Hdf5Handle, ClosesEachKindOnScopeExit) {
  test::ScratchDirectory dir("rewind-hdf5-handles");
  const std::string path = (dir / "handles.h5").string();
  hid_t file = -1, group = -1, space = -1, type = -1, set = -1, attribute = -1, list = -1;
  {
    Hdf5Handle f(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), Hdf5Kind::file);
    Hdf5Handle g(H5Gcreate2(f.get(), "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), Hdf5Kind::group);
    const hsize_t n = 4;
    Hdf5Handle s(H5Screate_simple(1, &n, nullptr), Hdf5Kind::dataspace);
    Hdf5Handle t(H5Tcopy(H5T_NATIVE_DOUBLE), Hdf5Kind::datatype);
    Hdf5Handle p(H5Pcreate(H5P_DATASET_CREATE), Hdf5Kind::property_list);
    Hdf5Handle d(H5Dcreate2(g.get(), "d", t.get(), s.get(), H5P_DEFAULT, p.get(), H5P_DEFAULT),
                 Hdf5Kind::dataset);
    Hdf5Handle a(H5Acreate2(d.get(), "a", t.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT),
                 Hdf5Kind::attribute);
    for (const Hdf5Handle* h : {&f, &g, &s, &t, &p, &d, &a}) ASSERT_TRUE(h->valid());
    file = f.get(), group = g.get(), space = s.get(), type = t.get();
    set = d.get(), attribute = a.get(), list = p.get();
    for (hid_t id : {file, group, space, type, set, attribute, list}) EXPECT_TRUE(is_open(id));
  }
  QuietHdf5 quiet;
  for (hid_t id : {file, group, space, type, set, attribute, list}) EXPECT_FALSE(is_open(id)) << id;
  H5Eclear2(H5E_DEFAULT);
}

TEST(Hdf5Handle, MovesOwnershipAndClosesOnce) {
  Hdf5Handle a(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace);
  const hid_t id = a.get();
  Hdf5Handle b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from holds nothing
  EXPECT_EQ(b.get(), id);
  EXPECT_EQ(b.kind(), Hdf5Kind::dataspace);
  Hdf5Handle c(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace);
  const hid_t other = c.get();
  c = std::move(b);  // closes what c held
  EXPECT_EQ(c.get(), id);
  QuietHdf5 quiet;
  EXPECT_FALSE(is_open(other));
  EXPECT_TRUE(is_open(id));
  EXPECT_EQ(c.close(), 0);
  EXPECT_FALSE(c.valid());
  EXPECT_FALSE(is_open(id));
  EXPECT_EQ(c.close(), 0);  // nothing held: nothing to close
  H5Eclear2(H5E_DEFAULT);
}

TEST(Hdf5Handle, ReleaseHandsOverAndNegativeIdsAreNeverClosed) {
  hid_t id = -1;
  {
    Hdf5Handle h(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace);
    id = h.release();
    EXPECT_FALSE(h.valid());
  }
  EXPECT_TRUE(is_open(id));
  EXPECT_GE(H5Sclose(id), 0);
  Hdf5Handle failed(-1, Hdf5Kind::file);
  EXPECT_FALSE(failed.valid());
  EXPECT_EQ(failed.close(), 0);
}

TEST(QuietHdf5, SilencesAndRestoresTheErrorPrinter) {
  H5E_auto2_t before = nullptr;
  void* before_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &before, &before_data);
  ASSERT_NE(before, nullptr);  // HDF5 prints errors by default
  {
    QuietHdf5 quiet;
    H5E_auto2_t inside = before;
    void* inside_data = nullptr;
    H5Eget_auto2(H5E_DEFAULT, &inside, &inside_data);
    EXPECT_EQ(inside, nullptr);
  }
  H5E_auto2_t after = nullptr;
  void* after_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &after, &after_data);
  EXPECT_EQ(after, before);
  EXPECT_EQ(after_data, before_data);
}

TEST(Hdf5Errors, TheStackAsTextApiCallFirstThenCleared) {
  QuietHdf5 quiet;
  H5Eclear2(H5E_DEFAULT);
  EXPECT_EQ(hdf5_error_text(), "");
  EXPECT_EQ(hdf5_error_suffix(), "");

  Hdf5Handle missing(H5Fopen("/nonexistent/rewind/none.h5", H5F_ACC_RDONLY, H5P_DEFAULT),
                     Hdf5Kind::file);
  ASSERT_FALSE(missing.valid());
  const std::string text = hdf5_error_text();
  EXPECT_NE(text.find("unable to open file"), std::string::npos) << text;
  EXPECT_NE(text.find("No such file or directory"), std::string::npos) << text;    // innermost
  EXPECT_LT(text.find("unable to open file"), text.find("No such file")) << text;  // API first
  EXPECT_EQ(hdf5_error_text(), "");                                                // cleared

  ASSERT_LT(H5Fopen("/nonexistent/rewind/none.h5", H5F_ACC_RDONLY, H5P_DEFAULT), 0);
  const std::string suffix = hdf5_error_suffix();
  EXPECT_EQ(suffix, " [HDF5: " + text + "]");
}

}  // namespace
}  // namespace rwd::detail
