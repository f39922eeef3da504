#!/usr/bin/env bash
# A compiler launcher that times each command: CPU seconds (user, system) and the output file,
# one line per command, appended to $TIME_LOG (bench/results/build_time.md):
#   cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/bench/time_each.sh
#   TIME_LOG=/tmp/times.log cmake --build /tmp/b -j2
#   awk '{print $1 + $2, $3}' /tmp/times.log | sort -gr | head -20     # the heaviest objects
out=unknown
prev=
for a in "$@"; do
  if [[ $prev == -o ]]; then out=$a; fi
  prev=$a
done
exec /usr/bin/time -a -o "${TIME_LOG:-/tmp/times.log}" -f "%U %S $out" "$@"
