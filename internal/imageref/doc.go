// Package imageref reads and writes container image references.
//
//	ref, err := imageref.Parse("nginx:1.27")
//	fmt.Println(ref.NormalizedRegistry(), ref.String())
//
// It uses the grammar Docker and containerd use (github.com/distribution/reference), without
// depending on them. Package federation validates image overrides with it. Package override
// rewrites the images of containers with it. So both accept exactly the same references.
//
// It imports nothing from fedkit, so that package federation may import it.
package imageref
