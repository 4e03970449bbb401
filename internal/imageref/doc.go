// Package imageref reads and writes container image references with the grammar Docker and
// containerd use (github.com/distribution/reference), without depending on them. Package
// federation validates image overrides with it and package override rewrites the images of
// containers with it, so both accept exactly the same references.
//
// It imports nothing from fedkit, so that package federation may import it.
package imageref
