#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 60s): `make fuzz`, or
# `make fuzz FUZZTIME=5s` as CI does. Targets are found by their `func FuzzX(` lines, so a new
# one is fuzzed without editing this script. A failure leaves its input under the package's
# testdata/fuzz/, where `go test` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-60s}"
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	pkg="./$(dirname "${file#./}")"
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "fuzz ${pkg} ${target} for ${fuzztime}"
		go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime"
	done
done
