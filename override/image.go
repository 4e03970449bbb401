package override

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/imageref"
)

// overrideImage applies an image override to one image reference. The grammar and the rules
// (Docker's, see package internal/imageref) are shared with validation in package
// federation: an override that validates rewrites every image it can parse. An image that
// does not parse, or a part of the override that is invalid, is an error wrapping
// ErrInvalidImage, never skipped: a skipped image would keep pulling from the registry the
// override was meant to replace.
func overrideImage(image string, o *federation.ImageOverride) (string, error) {
	im, err := imageref.Parse(image)
	if err == nil {
		im, err = im.Replace(imageref.Reference{Registry: o.Registry, Repository: o.Repository, Tag: o.Tag, Digest: o.Digest})
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidImage, err)
	}
	return im.String(), nil
}
