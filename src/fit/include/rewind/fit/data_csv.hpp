// rewind/fit/data_csv.hpp — a measured series from a CSV file, as rwd::fit takes it.
//
//   rwd::TimeSeries data = rwd::load_data_csv("data/sir_infected.csv");
//   data.columns;   // {"I"}: the header's names after the first (time) column
//   data.times;     // the first column, in the file's unit
//   data.values;    // rows × columns; NaN where the file has no value
//
// The format: lines starting with '#' and blank lines are comments, anywhere. The first other
// line is the header: comma-separated names, the first for time (any name: t, day, year), the
// others the measured quantities (a model's state names when the data go to rwd::fit). Every
// later line is one time: a time, then one value per column. A value that is empty, "nan",
// "NaN" or "NA" is missing (NaN); a time may not be missing. Spaces around a cell are ignored;
// "\r\n" line ends are read as "\n".
//
// Refused with rwd::InvalidArgument naming the file and the line (1-based, as an editor counts):
// no such file or not readable; no header; a header with fewer than two names, an empty name or
// a name given twice; a row with another number of cells than the header; a cell that is not a
// number (the column named); a missing time; no data row. Times are checked by rwd::fit itself
// (finite, strictly increasing, after t0), naming the row.
#pragma once

#include <filesystem>

#include "rewind/fit/fit_data.hpp"

namespace rwd {

TimeSeries load_data_csv(const std::filesystem::path& file);

}  // namespace rwd
