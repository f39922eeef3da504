// Writes time_series_layouts.h5, the fixture of time_series_test.cpp: one group per layout that
// load_time_series_hdf5 must read (written the way h5py/numpy write them) or refuse. Not built by
// CMake (the tests do not include HDF5's headers); to regenerate:
//   g++ -std=c++20 -I/usr/include/hdf5/serial make_time_series_layouts.cpp -lhdf5_serial -o make
//   ./make time_series_layouts.h5
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

hid_t must(hid_t id, const char* what) {
  if (id < 0) {
    std::fprintf(stderr, "failed: %s\n", what);
    std::exit(1);
  }
  return id;
}

// A dataset of the given file type and extent from memory of the given type.
void dataset(hid_t group, const char* name, hid_t file_type, hid_t memory_type,
             std::vector<hsize_t> extent, const void* data) {
  const hid_t space =
      must(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr), name);
  const hid_t set =
      must(H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), name);
  must(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
  H5Dclose(set);
  H5Sclose(space);
}

// What h5py writes for attrs['names'] = ['a', 'b'] (variable-length UTF-8 strings; rank 1) or
// attrs['names'] = 'a' (rank 0).
void vlen_names(hid_t group, std::vector<const char*> names, bool scalar) {
  const hid_t type = must(H5Tcopy(H5T_C_S1), "type");
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hsize_t n = names.size();
  const hid_t space =
      must(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "space");
  const hid_t attribute =
      must(H5Acreate2(group, "names", type, space, H5P_DEFAULT, H5P_DEFAULT), "names");
  must(H5Awrite(attribute, type, names.data()), "names");
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

// What h5py writes for attrs['names'] = numpy.array([b'p', b'q']) (fixed-length, null-padded).
void fixed_names(hid_t group, const char* packed, std::size_t size, hsize_t n) {
  const hid_t type = must(H5Tcopy(H5T_C_S1), "type");
  H5Tset_size(type, size);
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  const hid_t space = must(H5Screate_simple(1, &n, nullptr), "space");
  const hid_t attribute =
      must(H5Acreate2(group, "names", type, space, H5P_DEFAULT, H5P_DEFAULT), "names");
  must(H5Awrite(attribute, type, packed), "names");
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

hid_t group(hid_t file, const char* name) {
  return must(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), name);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.h5\n", argv[0]);
    return 2;
  }
  const hid_t file = must(H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), argv[1]);
  const double nan = std::nan("");
  {  // numpy: t = np.arange(5) (int64), y = float32 [5 × 2]; names = ['x', 'v']
    const hid_t g = group(file, "h5py_style");
    const std::int64_t t[5] = {0, 1, 2, 3, 4};
    const float y[10] = {0.5f, -1.0f, 0.25f, 2.0f, 1e-3f, 3.0f, -0.125f, 4.0f, 7.0f, 5.0f};
    dataset(g, "t", H5T_STD_I64LE, H5T_NATIVE_INT64, {5}, t);
    dataset(g, "y", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {5, 2}, y);
    vlen_names(g, {"x", "v"}, false);
    H5Gclose(g);
  }
  {  // one component as a 1-D y; names = 'u' (a scalar string)
    const hid_t g = group(file, "one_component");
    const double t[4] = {0.0, 0.5, 1.0, 1.5}, y[4] = {1.0, 0.5, 0.25, 0.125};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4}, y);
    vlen_names(g, {"u"}, true);
    H5Gclose(g);
  }
  {  // names as a fixed-length byte-string array, numpy.array([b'p', b'q'])
    const hid_t g = group(file, "fixed_names");
    const double t[3] = {0.0, 1.0, 2.0}, y[6] = {1, 2, 3, 4, 5, 6};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 2}, y);
    fixed_names(g, "pq", 1, 2);
    H5Gclose(g);
  }
  {  // no y
    const hid_t g = group(file, "missing_y");
    const double t[3] = {0.0, 1.0, 2.0};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, t);
    H5Gclose(g);
  }
  {  // t as a column [3 × 1]
    const hid_t g = group(file, "t_2d");
    const double t[3] = {0.0, 1.0, 2.0}, y[3] = {1, 2, 3};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 1}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 1}, y);
    H5Gclose(g);
  }
  {  // y stored transposed: [dimension × points] instead of [points × dimension]
    const hid_t g = group(file, "transposed_y");
    const double t[4] = {0.0, 1.0, 2.0, 3.0}, y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 4}, y);
    H5Gclose(g);
  }
  {  // NaN at row 1, column 1 of y
    const hid_t g = group(file, "nan_in_y");
    const double t[3] = {0.0, 1.0, 2.0}, y[6] = {1, 2, 3, nan, 5, 6};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 2}, y);
    H5Gclose(g);
  }
  {  // t[2] < t[1]
    const hid_t g = group(file, "decreasing_t");
    const double t[3] = {0.0, 2.0, 1.0}, y[3] = {1, 2, 3};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 1}, y);
    H5Gclose(g);
  }
  {  // t holds strings
    const hid_t g = group(file, "string_t");
    const hid_t type = must(H5Tcopy(H5T_C_S1), "type");
    H5Tset_size(type, 2);
    dataset(g, "t", type, type, {3}, "0\0001\0002");
    const double y[3] = {1, 2, 3};
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 1}, y);
    H5Tclose(type);
    H5Gclose(g);
  }
  {  // a single point
    const hid_t g = group(file, "one_point");
    const double t[1] = {0.0}, y[2] = {1, 2};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1, 2}, y);
    H5Gclose(g);
  }
  {  // three names for two components
    const hid_t g = group(file, "wrong_names");
    const double t[3] = {0.0, 1.0, 2.0}, y[6] = {1, 2, 3, 4, 5, 6};
    dataset(g, "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, t);
    dataset(g, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 2}, y);
    vlen_names(g, {"a", "b", "c"}, false);
    H5Gclose(g);
  }
  H5Fclose(file);
  return 0;
}
