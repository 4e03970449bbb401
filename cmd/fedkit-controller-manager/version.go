package main

import "runtime/debug"

// version is the program's version, set by the linker:
//
//	go build -ldflags "-X main.version=v0.4.0" ./cmd/fedkit-controller-manager
//
// The Dockerfile, .ko.yaml and `make image` set it. It is the package's one variable, and
// only the linker writes it; buildVersion falls back to the build information without it.
var version string

// buildVersion is the version the program reports (--version, its log, its Leases): linked
// when the linker set it, else the main module's version in the build information (a tagged
// `go install ...@v0.4.0` gives v0.4.0; `go build` in a git checkout a pseudo-version naming
// the commit, "+dirty" when the tree had changes), else "(devel)".
func buildVersion(linked string) string {
	if linked != "" {
		return linked
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
