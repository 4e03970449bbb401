package fedtest

// Iterations is how many random cases a property test of a pure function draws: n in a
// build without the race detector (`make properties`, a plain `go test`), a fifth of n (at
// least 1) with -race (`make test`), where each case costs several times as much and a
// pure function has no race to find.
func Iterations(n int) int {
	if !raceBuild {
		return n
	}
	return max(1, n/5)
}
