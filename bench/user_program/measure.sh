#!/usr/bin/env bash
# What a user's program compiles, links and loads (bench/results/user_program.md):
#   bench/user_program/measure.sh BUILD OUTDIR
# compiles examples/pendulum_gradient.cpp and bench/user_program/ode2_revolve.cpp (twice each, CPU
# seconds of /usr/bin/time) with the flags BUILD uses for examples/pendulum_gradient, links each
# with that example's link line, and prints its DT_NEEDED entries, the number of libraries ldd
# lists (and how many of them are HDF5 or Open MPI), the HDF5/MPI libraries on its link line,
# and the program's last line of output.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1; out=$2; mkdir -p $out
dir=$build/examples/CMakeFiles/pendulum_gradient.dir
eval "$(grep -E '^CXX_(DEFINES|INCLUDES|FLAGS) =' $dir/flags.make | sed 's/ = /="/; s/$/"/')"
src=$(dirname $(dirname $(grep -o '\-I[^ ]*src/adjoint/include' <<<"$CXX_INCLUDES" | head -1 | cut -c3-)))
src=${src%/src}
link=$(cat $dir/link.txt)
for p in $src/examples/pendulum_gradient.cpp $here/ode2_revolve.cpp; do
  name=$(basename $p .cpp)
  for i in 1 2; do
    /usr/bin/time -f "compile $name %U %S" -o $out/$name.compile.$i g++ $CXX_DEFINES $CXX_INCLUDES $CXX_FLAGS -c $p -o $out/$name.o
  done
  l=${link//CMakeFiles\/pendulum_gradient.dir\/pendulum_gradient.cpp.o/$out/$name.o}
  l=${l//-o pendulum_gradient/-o $out/$name}
  (cd $build/examples && /usr/bin/time -f "link $name %U %S" -o $out/$name.link bash -c "$l")
  cat $out/$name.compile.1 $out/$name.compile.2 $out/$name.link
  echo "needed $name: $(readelf -d $out/$name | grep -o 'Shared library: \[[^]]*\]' | sed 's/Shared library: //' | tr '\n' ' ')"
  echo "ldd $name: $(ldd $out/$name | wc -l) ; hdf5/mpi: $(ldd $out/$name | grep -cE 'libhdf5|libmpi|open-rte|open-pal' || true)"
  echo "link line $name: $(grep -oE 'lib(hdf5|mpi)[^ ]*' <<<"$l" | tr '\n' ' ')"
  echo "run $name: $($out/$name | tail -1)"
done
