// Package kubefedref checks fedkit's KubeFed migration against KubeFed v0.10 itself.
//
//	cd internal/kubefedref && go test -race ./...   # its own module
//
// It is a module of its own, so that the main module never depends on KubeFed or its old
// Kubernetes libraries. Its test runs KubeFed's planner on random preferences and cluster
// sets. It runs fedkit's scheduler on the same preferences, converted by package migrate.
//
// `make test` runs it, as it runs examples/controllerruntime.
package kubefedref
