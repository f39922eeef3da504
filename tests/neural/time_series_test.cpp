// Time series files: CSV and HDF5 round trips bit for bit, what a CSV may contain (comments,
// blank lines, CRLF, quotes), malformed CSV named by line and column, HDF5 layouts as h5py
// writes them and the ones refused (fixture data/time_series_layouts.h5, made by
// data/make_time_series_layouts.cpp), missing files and unknown extensions.
#include <gtest/gtest.h>

#include <bit>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>

#include "rewind/error.hpp"
#include "rewind/neural/time_series.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace {

using rwd::Index;
using rwd::training::TimeSeries;

const std::filesystem::path kLayouts = std::filesystem::path(REWIND_SOURCE_DIR) / "tests" /
                                       "neural" / "data" / "time_series_layouts.h5";

// Values that only 17 significant digits bring back: thirds, subnormals, the extremes, −0,
// and times one ulp apart.
TimeSeries awkward_series() {
  TimeSeries s;
  s.names = {"u", "v_2", "w (m/s)"};
  s.values.resize(3, 7);
  double t = 0.1;
  for (Index k = 0; k < 7; ++k) {
    s.times.push_back(t);
    t = k == 2 ? std::nextafter(t, 1.0) : t + 1.0 / 3.0;
    for (Index i = 0; i < 3; ++i)
      s.values(i, k) =
          std::exp(0.3 * static_cast<double>(k)) / (3.0 + static_cast<double>(i)) - 1e-300;
  }
  s.values(0, 1) = std::numeric_limits<double>::denorm_min();
  s.values(1, 1) = -1e-310;
  s.values(2, 1) = std::numeric_limits<double>::max();
  s.values(0, 2) = -0.0;
  s.values(1, 2) = std::numeric_limits<double>::lowest();
  s.values(2, 2) = std::numeric_limits<double>::min();
  s.values(0, 3) = 0.1;
  s.values(1, 3) = -1.0 / 3.0;
  s.values(2, 3) = 1e22;
  return s;
}

void expect_same_bits(const TimeSeries& a, const TimeSeries& b) {
  ASSERT_EQ(a.times.size(), b.times.size());
  ASSERT_EQ(a.values.rows(), b.values.rows());
  ASSERT_EQ(a.values.cols(), b.values.cols());
  for (std::size_t k = 0; k < a.times.size(); ++k)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.times[k]), std::bit_cast<std::uint64_t>(b.times[k]))
        << "time " << k;
  for (Index k = 0; k < a.values.cols(); ++k)
    for (Index i = 0; i < a.values.rows(); ++i)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(a.values(i, k)),
                std::bit_cast<std::uint64_t>(b.values(i, k)))
          << "component " << i << " point " << k << ": " << a.values(i, k) << " vs "
          << b.values(i, k);
  EXPECT_EQ(a.names, b.names);
}

TEST(TimeSeries, CsvAndHdf5RoundTripBitForBit) {
  rwd::test::ScratchDirectory dir("series");
  const TimeSeries s = awkward_series();
  rwd::training::save_time_series_csv(dir / "s.csv", s);
  expect_same_bits(rwd::training::load_time_series(dir / "s.csv"), s);
  expect_same_bits(rwd::training::load_time_series_csv(dir / "s.csv"), s);
  rwd::training::save_time_series_hdf5(dir / "s.h5", s);
  expect_same_bits(rwd::training::load_time_series(dir / "s.h5"), s);
  expect_same_bits(rwd::training::load_time_series_hdf5(dir / "s.h5", "/"), s);
  // CSV → HDF5 → CSV: the same bits all the way.
  rwd::training::save_time_series_hdf5(dir / "s2.hdf5",
                                       rwd::training::load_time_series(dir / "s.csv"));
  expect_same_bits(rwd::training::load_time_series(dir / "s2.hdf5"), s);
  // Only the three files (no temporary files left behind).
  EXPECT_EQ(dir.files().size(), 3u);
}

TEST(TimeSeries, CsvIsWrittenWith17SignificantDigitsAndAHeader) {
  rwd::test::ScratchDirectory dir("series");
  TimeSeries s;
  s.times = {0.0, 0.1};
  s.values.resize(2, 2);
  s.values << 1.0, 1.0 / 3.0, -2.5, 1e-320;
  rwd::training::save_time_series_csv(dir / "s.csv", s);  // no names: y0, y1
  std::ifstream in(dir / "s.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text,
            "t,y0,y1\n0,1,-2.5\n0.10000000000000001,0.33333333333333331,9.9998886718268301e-321\n");
  const TimeSeries back = rwd::training::load_time_series(dir / "s.csv");
  EXPECT_EQ(back.names, (std::vector<std::string>{"y0", "y1"}));
  EXPECT_EQ(back.dimension(), 2);
  EXPECT_EQ(back.points(), 2);
}

TEST(TimeSeries, SavingReplacesAnExistingFileWhole) {
  rwd::test::ScratchDirectory dir("series");
  const TimeSeries s = awkward_series();
  rwd::training::save_time_series_csv(dir / "s.csv", s);
  rwd::training::save_time_series_hdf5(dir / "s.h5", s);
  TimeSeries shorter = s;
  shorter.times.resize(3);
  shorter.values.conservativeResize(Eigen::NoChange, 3);
  rwd::training::save_time_series_csv(dir / "s.csv", shorter);
  rwd::training::save_time_series_hdf5(dir / "s.h5", shorter);
  expect_same_bits(rwd::training::load_time_series(dir / "s.csv"), shorter);
  expect_same_bits(rwd::training::load_time_series(dir / "s.h5"), shorter);
  EXPECT_EQ(dir.files().size(), 2u);
}

TEST(TimeSeries, SavingThroughASymbolicLinkReplacesItsTarget) {
  rwd::test::ScratchDirectory dir("series");
  const TimeSeries s = awkward_series();
  rwd::training::save_time_series_csv(dir / "real.csv", s);
  std::filesystem::create_symlink(dir / "real.csv", dir / "link.csv");
  TimeSeries other = s;
  other.values *= 0.5;
  rwd::training::save_time_series_csv(dir / "link.csv", other);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.csv"));
  expect_same_bits(rwd::training::load_time_series(dir / "real.csv"), other);
}

TEST(TimeSeries, ShippedSpiralDataLoads) {
  const TimeSeries s = rwd::training::load_time_series(std::filesystem::path(REWIND_SOURCE_DIR) /
                                                       "data" / "spiral.csv");
  EXPECT_EQ(s.dimension(), 2);
  EXPECT_EQ(s.points(), 1000);
  EXPECT_EQ(s.names, (std::vector<std::string>{"y0", "y1"}));
  EXPECT_EQ(s.times.front(), 0.0);
  EXPECT_EQ(s.values(0, 0), 2.0);
}

TEST(TimeSeries, SavingRefusesInvalidSeriesAndMissingDirectories) {
  rwd::test::ScratchDirectory dir("series");
  const TimeSeries good = awkward_series();
  TimeSeries bad = good;
  bad.values(1, 4) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(rwd::training::save_time_series_csv(dir / "bad.csv", bad), rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::save_time_series_hdf5(dir / "bad.h5", bad), rwd::InvalidArgument);
  bad = good;
  bad.names[1] = "a,b";  // would add a column to the header
  EXPECT_THROW(rwd::training::save_time_series_csv(dir / "bad.csv", bad), rwd::InvalidArgument);
  bad.names[1] = "u";  // twice
  EXPECT_THROW(rwd::training::save_time_series_csv(dir / "bad.csv", bad), rwd::InvalidArgument);
  bad.names = {"u"};  // too few
  EXPECT_THROW(rwd::training::save_time_series_csv(dir / "bad.csv", bad), rwd::InvalidArgument);
  bad = good;
  bad.times.pop_back();  // times and values disagree
  EXPECT_THROW(rwd::training::save_time_series_csv(dir / "bad.csv", bad), rwd::InvalidArgument);
  EXPECT_TRUE(dir.files().empty()) << "nothing is written for a refused series";
  try {
    rwd::training::save_time_series_csv(dir / "no" / "such" / "dir.csv", good);
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const rwd::StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("dir.csv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rwd::training::save_time_series_hdf5(dir / "no" / "such.h5", good),
               rwd::StorageError);
  EXPECT_THROW(rwd::training::save_time_series_hdf5(dir.path(), good), rwd::StorageError);
}

std::filesystem::path write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

TEST(TimeSeries, CsvMayHaveCommentsBlankLinesCrlfQuotesAndSigns) {
  rwd::test::ScratchDirectory dir("series");
  const auto file = write_text(dir / "ok.csv",
                               "\xEF\xBB\xBF# exported by a spreadsheet\r\n"
                               "\r\n"
                               "\"time\", \"x\" ,\"y\"\r\n"
                               "# the first sample\r\n"
                               "0, +1.5, -2\r\n"
                               "   \r\n"
                               "1e-1,3,4E2\r\n"
                               "  # an indented comment\n"
                               "0.25,-0,.5\n");
  const TimeSeries s = rwd::training::load_time_series(file);
  EXPECT_EQ(s.names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(s.times, (std::vector<double>{0.0, 0.1, 0.25}));
  Eigen::MatrixXd expected(2, 3);
  expected << 1.5, 3.0, -0.0, -2.0, 400.0, 0.5;
  EXPECT_EQ(s.values, expected);
}

TEST(TimeSeries, CsvIgnoresTheLocale) {
  // strtod and printf follow LC_NUMERIC; under a decimal-comma locale they would read "1.5" as 1
  // and write "1,5". The files must not depend on it.
  const char* locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  const char* chosen = nullptr;
  for (const char* name : locales)
    if (std::setlocale(LC_NUMERIC, name)) {
      chosen = name;
      break;
    }
  if (!chosen) GTEST_SKIP() << "no decimal-comma locale installed";
  struct Restore {
    ~Restore() { std::setlocale(LC_NUMERIC, "C"); }
  } restore;
  rwd::test::ScratchDirectory dir("series");
  const TimeSeries s = awkward_series();
  rwd::training::save_time_series_csv(dir / "s.csv", s);
  expect_same_bits(rwd::training::load_time_series(dir / "s.csv"), s);
}

// The message of the error that loading `text` as CSV raises, checking its type.
template <class E = rwd::InvalidArgument>
std::string csv_error(const rwd::test::ScratchDirectory& dir, const std::string& text) {
  const auto file = write_text(dir / "bad.csv", text);
  try {
    rwd::training::load_time_series(file);
  } catch (const E& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("bad.csv"), std::string::npos)
        << "the message names the file: " << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type for:\n" << text << "\n" << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

// Whether the message has the part.
constexpr auto& has = rwd::testing::contains;

TEST(TimeSeries, MalformedCsvIsNamedByLineAndColumn) {
  rwd::test::ScratchDirectory dir("series");
  std::string m = csv_error(dir, "t,a,b\n0,1,2\n# comment\n1,3\n");
  EXPECT_TRUE(has(m, "line 4") && has(m, "2 columns") && has(m, "3")) << m;  // ragged
  m = csv_error(dir, "t,a,b\n0,1,2\n1,3,4,5\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "4 columns")) << m;
  m = csv_error(dir, "t,a\n0,1\n1,abc\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "column 2") && has(m, "'a'") &&
              has(m, "'abc' is not a number"))
      << m;
  m = csv_error(dir, "t,a\n0,1\n1,2.5x\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "'2.5x'")) << m;
  m = csv_error(dir, "t,a\n0,1\n1,\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "column 2")) << m;  // empty field
  m = csv_error(dir, "t,a,b\n0,1,2\n1,2,nan\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "column 3") && has(m, "'b'") && has(m, "finite")) << m;
  m = csv_error(dir, "t,a\n0,1\n1,-inf\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "finite")) << m;
  m = csv_error(dir, "t,a\nnan,1\n1,2\n");
  EXPECT_TRUE(has(m, "line 2") && has(m, "column 1")) << m;
  m = csv_error(dir, "t,a\n0,1\n1,1e999\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "range")) << m;
  m = csv_error(dir, "t,a\n0,1\n2,2\n# c\n1,3\n");
  EXPECT_TRUE(has(m, "line 5") && has(m, "increase") && has(m, "line 3")) << m;  // decreasing
  m = csv_error(dir, "t,a\n0,1\n0,2\n");
  EXPECT_TRUE(has(m, "line 3") && has(m, "increase")) << m;  // repeated
  m = csv_error(dir, "t,a\n0,1\n");
  EXPECT_TRUE(has(m, "at least 2")) << m;
  m = csv_error(dir, "0,1\n1,2\n2,3\n");
  EXPECT_TRUE(has(m, "line 1") && has(m, "header")) << m;  // no header: would lose the first row
  m = csv_error(dir, "t\n0\n1\n");
  EXPECT_TRUE(has(m, "line 1") && has(m, "header")) << m;
  m = csv_error(dir, "t,a,\n0,1,\n1,2,\n");
  EXPECT_TRUE(has(m, "line 1") && has(m, "column 3") && has(m, "empty")) << m;
  m = csv_error(dir, "t,a,a\n0,1,2\n1,2,3\n");
  EXPECT_TRUE(has(m, "'a'")) << m;  // duplicate names
  m = csv_error(dir, "# only a comment\n\n");
  EXPECT_TRUE(has(m, "no header")) << m;
  m = csv_error(dir, "");
  EXPECT_TRUE(has(m, "no header")) << m;
}

TEST(TimeSeries, MissingDirectoriesAndBinaryFilesAreStorageErrors) {
  rwd::test::ScratchDirectory dir("series");
  for (const char* name : {"absent.csv", "absent.h5", "absent.hdf5"}) {
    try {
      rwd::training::load_time_series(dir / name);
      ADD_FAILURE() << name << " loaded";
    } catch (const rwd::StorageError& e) {
      EXPECT_TRUE(has(e.what(), name) && has(e.what(), "does not exist")) << e.what();
    }
  }
  std::filesystem::create_directory(dir / "folder.csv");
  EXPECT_THROW(rwd::training::load_time_series(dir / "folder.csv"), rwd::StorageError);
  // A text file named .h5, and an HDF5 file named .csv.
  write_text(dir / "fake.h5", "t,a\n0,1\n1,2\n");
  EXPECT_THROW(rwd::training::load_time_series(dir / "fake.h5"), rwd::StorageError);
  rwd::training::save_time_series_hdf5(dir / "real.h5", awkward_series());
  std::filesystem::copy_file(dir / "real.h5", dir / "real.csv");
  try {
    rwd::training::load_time_series(dir / "real.csv");
    ADD_FAILURE() << "an HDF5 file loaded as CSV";
  } catch (const rwd::StorageError& e) {
    EXPECT_TRUE(has(e.what(), "real.csv") && has(e.what(), "HDF5")) << e.what();
  }
  std::string binary = "t,a\n0,1\n1,";
  binary += '\0';
  binary += "\x01\x02\n";
  EXPECT_TRUE(has(csv_error<rwd::StorageError>(dir, binary), "line 3")) << "binary data";
  // A truncated HDF5 file.
  const auto bytes = rwd::test::read_bytes(dir / "real.h5");
  std::ofstream(dir / "cut.h5", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  EXPECT_THROW(rwd::training::load_time_series(dir / "cut.h5"), rwd::StorageError);
}

TEST(TimeSeries, UnknownExtensionsAreRefused) {
  rwd::test::ScratchDirectory dir("series");
  write_text(dir / "data.txt", "t,a\n0,1\n1,2\n");
  try {
    rwd::training::load_time_series(dir / "data.txt");
    ADD_FAILURE() << "data.txt loaded";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_TRUE(has(e.what(), "data.txt") && has(e.what(), ".txt") && has(e.what(), ".csv"))
        << e.what();
  }
  write_text(dir / "data", "t,a\n0,1\n1,2\n");
  EXPECT_THROW(rwd::training::load_time_series(dir / "data"), rwd::InvalidArgument);
  write_text(dir / "DATA.CSV", "t,a\n0,1\n1,2\n");
  EXPECT_EQ(rwd::training::load_time_series(dir / "DATA.CSV").points(), 2);
}

TEST(TimeSeries, Hdf5AsH5pyWritesIt) {
  // int64 times, float32 values [points × dimension], names a list of str.
  const TimeSeries s = rwd::training::load_time_series_hdf5(kLayouts, "h5py_style");
  EXPECT_EQ(s.times, (std::vector<double>{0, 1, 2, 3, 4}));
  ASSERT_EQ(s.dimension(), 2);
  ASSERT_EQ(s.points(), 5);
  EXPECT_EQ(s.names, (std::vector<std::string>{"x", "v"}));
  EXPECT_EQ(s.values(0, 0), 0.5);  // row 0 of y is point 0
  EXPECT_EQ(s.values(1, 0), -1.0);
  EXPECT_EQ(s.values(0, 2), static_cast<double>(1e-3f));
  EXPECT_EQ(s.values(1, 4), 5.0);
  // A leading slash is the same group.
  EXPECT_EQ(rwd::training::load_time_series_hdf5(kLayouts, "/h5py_style").values, s.values);

  const TimeSeries one = rwd::training::load_time_series_hdf5(kLayouts, "one_component");
  EXPECT_EQ(one.dimension(), 1);
  EXPECT_EQ(one.points(), 4);
  EXPECT_EQ(one.names, (std::vector<std::string>{"u"}));
  EXPECT_EQ(one.values(0, 3), 0.125);

  const TimeSeries fixed = rwd::training::load_time_series_hdf5(kLayouts, "fixed_names");
  EXPECT_EQ(fixed.names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(fixed.values(1, 2), 6.0);
}

template <class E>
std::string hdf5_error(const std::string& group) {
  try {
    rwd::training::load_time_series_hdf5(kLayouts, group);
  } catch (const E& e) {
    EXPECT_TRUE(has(e.what(), "time_series_layouts.h5")) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "group " << group << ": wrong error type: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "group " << group << " loaded";
  return "";
}

TEST(TimeSeries, Hdf5LayoutsThatAreRefused) {
  std::string m = hdf5_error<rwd::StorageError>("/");
  EXPECT_TRUE(has(m, "no dataset 't'")) << m;
  m = hdf5_error<rwd::StorageError>("no_such_group");
  EXPECT_TRUE(has(m, "no group 'no_such_group'")) << m;
  m = hdf5_error<rwd::StorageError>("missing_y");
  EXPECT_TRUE(has(m, "no dataset 'y'")) << m;
  m = hdf5_error<rwd::StorageError>("t_2d");
  EXPECT_TRUE(has(m, "'t' must be one-dimensional")) << m;
  m = hdf5_error<rwd::StorageError>("transposed_y");
  EXPECT_TRUE(has(m, "4 times") && has(m, "2 rows")) << m;
  m = hdf5_error<rwd::StorageError>("string_t");
  EXPECT_TRUE(has(m, "'t' holds strings")) << m;
  m = hdf5_error<rwd::InvalidArgument>("nan_in_y");
  EXPECT_TRUE(has(m, "'y' row 1 column 1") && has(m, "finite")) << m;
  m = hdf5_error<rwd::InvalidArgument>("decreasing_t");
  EXPECT_TRUE(has(m, "'t' row 2") && has(m, "increase")) << m;
  m = hdf5_error<rwd::InvalidArgument>("one_point");
  EXPECT_TRUE(has(m, "at least 2")) << m;
  m = hdf5_error<rwd::InvalidArgument>("wrong_names");
  EXPECT_TRUE(has(m, "3 names for 2 components")) << m;
}

// Found by fuzzing (tests/fuzz/findings/): a file whose datasets declare more values than any
// machine holds is refused naming them, before any read — it was an uncaught std::bad_alloc.
TEST(TimeSeries, Hdf5DeclaringMoreThanMemoryHoldsIsRefused) {
  const std::filesystem::path file = std::filesystem::path(REWIND_SOURCE_DIR) / "tests" / "fuzz" /
                                     "findings" / "time_series_huge_extent.h5";
  try {
    rwd::training::load_time_series(file);
    ADD_FAILURE() << "loaded";
  } catch (const rwd::StorageError& e) {
    EXPECT_TRUE(has(e.what(), "time_series_huge_extent.h5")) << e.what();
    EXPECT_TRUE(has(e.what(), "more than this machine can allocate")) << e.what();
  }
}

TEST(TimeSeries, ValidateNamesWhatIsWrong) {
  TimeSeries s = awkward_series();
  EXPECT_NO_THROW(s.validate());
  s.names.clear();
  EXPECT_NO_THROW(s.validate()) << "names are optional in memory";
  s.times[4] = s.times[3];
  try {
    s.validate("my data");
    ADD_FAILURE() << "repeated time accepted";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_TRUE(has(e.what(), "my data") && has(e.what(), "point 4")) << e.what();
  }
  s = awkward_series();
  s.values(2, 5) = std::numeric_limits<double>::infinity();
  try {
    s.validate();
    ADD_FAILURE() << "Inf accepted";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_TRUE(has(e.what(), "component 2 at point 5")) << e.what();
  }
  s = awkward_series();
  s.names[0] = " u";
  EXPECT_THROW(s.validate(), rwd::InvalidArgument);
  s.names[0] = "";
  EXPECT_THROW(s.validate(), rwd::InvalidArgument);
  s.names[0] = "a\nb";
  EXPECT_THROW(s.validate(), rwd::InvalidArgument);
  TimeSeries empty;
  EXPECT_THROW(empty.validate(), rwd::InvalidArgument);
}

}  // namespace
