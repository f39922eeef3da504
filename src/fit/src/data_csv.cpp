// src/fit/src/data_csv.cpp — see rewind/fit/data_csv.hpp.
#include "rewind/fit/data_csv.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "rewind/error.hpp"

namespace rwd {
namespace {

using detail::fail;

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string::size_type begin = 0;
  while (true) {
    const auto comma = line.find(',', begin);
    cells.push_back(trimmed(line.substr(begin, comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return cells;
}

bool is_missing(const std::string& cell) {
  return cell.empty() || cell == "nan" || cell == "NaN" || cell == "NA";
}

// The whole cell as a number, or nothing.
bool parse_number(const std::string& cell, double* value) {
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(cell.c_str(), &end);
  return end != cell.c_str() && *end == '\0' && errno != ERANGE;
}

}  // namespace

TimeSeries load_data_csv(const std::filesystem::path& file) {
  const std::string name = file.string();
  if (!std::filesystem::exists(file))
    fail<InvalidArgument>("data file '", name, "' does not exist");
  std::ifstream in(file);
  if (!in) fail<InvalidArgument>("data file '", name, "' cannot be read");
  TimeSeries data;
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  std::string line;
  for (Index number = 1; std::getline(in, line); ++number) {
    const std::string text = trimmed(line);
    if (text.empty() || text.front() == '#') continue;
    std::vector<std::string> cells = cells_of(text);
    if (header.empty()) {
      if (cells.size() < 2)
        fail<InvalidArgument>(name, " line ", number, ": the header '", text,
                              "' names a time column and no measured column");
      double number_value = 0.0;
      if (std::all_of(cells.begin(), cells.end(),
                      [&](const std::string& cell) { return parse_number(cell, &number_value); }))
        fail<InvalidArgument>(name, " line ", number, ": '", text,
                              "' is numbers, not a header; the first line that is not a comment "
                              "names the columns (e.g. t,I)");
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (cells[c].empty())
          fail<InvalidArgument>(name, " line ", number, ": header column ", c + 1, " has no name");
        if (std::find(cells.begin(), cells.begin() + static_cast<long>(c), cells[c]) !=
            cells.begin() + static_cast<long>(c))
          fail<InvalidArgument>(name, " line ", number, ": the header names '", cells[c],
                                "' twice");
      }
      header = cells;
      continue;
    }
    if (cells.size() != header.size())
      fail<InvalidArgument>(name, " line ", number, ": ", cells.size(), " cells, but the header '",
                            header.front(), ",…' has ", header.size());
    std::vector<double> row(cells.size());
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (is_missing(cells[c])) {
        if (c == 0) fail<InvalidArgument>(name, " line ", number, ": the time is missing");
        row[c] = std::numeric_limits<double>::quiet_NaN();
      } else if (!parse_number(cells[c], &row[c])) {
        fail<InvalidArgument>(name, " line ", number, ": ", header[c], " = '", cells[c],
                              "' is not a number (an empty cell, nan or NA marks a missing "
                              "value)");
      }
    }
    rows.push_back(std::move(row));
  }
  if (header.empty()) fail<InvalidArgument>("data file '", name, "' has no header line");
  if (rows.empty()) fail<InvalidArgument>("data file '", name, "' has a header but no data row");
  data.columns.assign(header.begin() + 1, header.end());
  const auto columns = static_cast<Index>(data.columns.size());
  data.values.resize(static_cast<Index>(rows.size()), columns);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    data.times.push_back(rows[k][0]);
    for (Index c = 0; c < columns; ++c)
      data.values(static_cast<Index>(k), c) = rows[k][static_cast<std::size_t>(c) + 1];
  }
  return data;
}

}  // namespace rwd
