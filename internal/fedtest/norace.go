//go:build !race

package fedtest

// raceBuild says the test binary was built with -race.
const raceBuild = false
