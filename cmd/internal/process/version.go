package process

import "runtime/debug"

// Version is the version a program reports (--version, its log, its Leases): linked when the
// linker set it (-ldflags "-X main.version=v0.4.0"), else the main module's version in the
// build information (a tagged `go install ...@v0.4.0` gives v0.4.0; `go build` in a git
// checkout a pseudo-version naming the commit, "+dirty" when the tree had changes), else
// "(devel)".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
