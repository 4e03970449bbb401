package main

// version is the program's version, set by the linker:
//
//	go build -ldflags "-X main.version=v0.4.0" ./cmd/fedkit-controller-manager
//
// The Dockerfile, .ko.yaml and `make image` set it. It is the package's one variable, and
// only the linker writes it; process.Version falls back to the build information without it.
var version string
