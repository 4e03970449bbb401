package override

import (
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/federation"
)

// Image is a parsed container image reference, in the parts image overrides replace. Parts
// are kept as written, so an image whose parts do not change is rendered back unchanged
// ("nginx" stays "nginx", not docker.io/library/nginx:latest).
type Image struct {
	// Registry is the registry host with its port, or "" when the reference has none
	// (Docker Hub, see NormalizedRegistry).
	Registry string
	// Repository is the path within the registry, e.g. "nginx" or "team/app".
	Repository string
	// Tag is the tag, or "" (which means "latest" when there is no digest either).
	Tag string
	// Digest is algorithm:hex, or "".
	Digest string
}

// ParseImage parses an image reference with Docker's rules: name[:tag][@digest], where the
// name's first component is a registry if it contains "." or ":", is "localhost", or has an
// upper-case letter. It fails with ErrInvalidImage for anything else, including an empty
// string.
func ParseImage(s string) (Image, error) {
	var im Image
	if s == "" {
		return im, fmt.Errorf("%w: empty", ErrInvalidImage)
	}
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, im.Digest = rest[:i], rest[i+1:]
		if !federation.ValidImageDigest(im.Digest) {
			return Image{}, fmt.Errorf("%w: %q: bad digest %q", ErrInvalidImage, s, im.Digest)
		}
	}
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		rest, im.Tag = rest[:i], rest[i+1:]
		if !federation.ValidImageTag(im.Tag) {
			return Image{}, fmt.Errorf("%w: %q: bad tag %q", ErrInvalidImage, s, im.Tag)
		}
	}
	if len(rest) > 255 {
		return Image{}, fmt.Errorf("%w: %q: name longer than 255 characters", ErrInvalidImage, s)
	}
	im.Repository = rest
	if i := strings.IndexByte(rest, '/'); i >= 0 && looksLikeRegistry(rest[:i]) {
		im.Registry, im.Repository = rest[:i], rest[i+1:]
		if !federation.ValidImageRegistry(im.Registry) {
			return Image{}, fmt.Errorf("%w: %q: bad registry %q", ErrInvalidImage, s, im.Registry)
		}
	}
	if !federation.ValidImageRepository(im.Repository) {
		return Image{}, fmt.Errorf("%w: %q: bad repository %q (lower-case letters, digits and separators)", ErrInvalidImage, s, im.Repository)
	}
	return im, nil
}

// looksLikeRegistry is Docker's rule for the first component of a name: "a.b/c" and
// "host:5000/c" name a registry, "team/app" is a Docker Hub repository. Getting this wrong
// would send a mirror override to the wrong place, so it follows Docker exactly,
// upper-case rule included (repositories are lower case, so "Host/app" names a registry).
func looksLikeRegistry(c string) bool {
	return strings.ContainsAny(c, ".:") || c == "localhost" || strings.ToLower(c) != c
}

// String renders the reference: [registry/]repository[:tag][@digest].
func (im Image) String() string {
	var b strings.Builder
	b.Grow(len(im.Registry) + len(im.Repository) + len(im.Tag) + len(im.Digest) + 3)
	if im.Registry != "" {
		b.WriteString(im.Registry)
		b.WriteByte('/')
	}
	b.WriteString(im.Repository)
	if im.Tag != "" {
		b.WriteByte(':')
		b.WriteString(im.Tag)
	}
	if im.Digest != "" {
		b.WriteByte('@')
		b.WriteString(im.Digest)
	}
	return b.String()
}

// NormalizedRegistry returns the registry, "docker.io" when there is none (or it is the old
// index.docker.io).
func (im Image) NormalizedRegistry() string {
	if im.Registry == "" || im.Registry == "index.docker.io" {
		return "docker.io"
	}
	return im.Registry
}

// NormalizedRepository returns the repository, with Docker Hub's "library/" for official
// images: "nginx" is "library/nginx".
func (im Image) NormalizedRepository() string {
	if im.NormalizedRegistry() == "docker.io" && !strings.Contains(im.Repository, "/") {
		return "library/" + im.Repository
	}
	return im.Repository
}

// NormalizedTag returns the tag, "latest" when there is neither tag nor digest.
func (im Image) NormalizedTag() string {
	if im.Tag == "" && im.Digest == "" {
		return "latest"
	}
	return im.Tag
}

// Override returns the image with the parts o sets replaced (see federation.ImageOverride):
// a new registry spells out a Docker Hub repository ("nginx" -> "library/nginx"); a new tag
// drops the digest and a new digest drops the tag, unless o sets both. The parts o sets are
// checked with the same grammar as ParseImage.
func (im Image) Override(o federation.ImageOverride) (Image, error) {
	switch {
	case o.Registry != "" && !federation.ValidImageRegistry(o.Registry):
		return im, fmt.Errorf("%w: bad registry %q", ErrInvalidImage, o.Registry)
	case o.Repository != "" && !federation.ValidImageRepository(o.Repository):
		return im, fmt.Errorf("%w: bad repository %q", ErrInvalidImage, o.Repository)
	case o.Tag != "" && !federation.ValidImageTag(o.Tag):
		return im, fmt.Errorf("%w: bad tag %q", ErrInvalidImage, o.Tag)
	case o.Digest != "" && !federation.ValidImageDigest(o.Digest):
		return im, fmt.Errorf("%w: bad digest %q", ErrInvalidImage, o.Digest)
	}
	if o.Registry != "" {
		// Mirrors of Docker Hub serve official images under library/: "nginx" on
		// docker.io is library/nginx on the mirror.
		im.Repository = im.NormalizedRepository()
		im.Registry = o.Registry
	}
	if o.Repository != "" {
		im.Repository = o.Repository
	}
	if im.Registry == "" {
		// Without a registry, a repository whose first component looks like one would be
		// read back as a registry: name Docker Hub explicitly.
		if i := strings.IndexByte(im.Repository, '/'); i >= 0 && looksLikeRegistry(im.Repository[:i]) {
			im.Registry = "docker.io"
		}
	}
	// A digest pins the content, so keeping an old digest would silently ignore a new
	// tag (and the reverse); kustomize's image transformer behaves the same way.
	switch {
	case o.Tag != "" && o.Digest != "":
		im.Tag, im.Digest = o.Tag, o.Digest
	case o.Tag != "":
		im.Tag, im.Digest = o.Tag, ""
	case o.Digest != "":
		im.Tag, im.Digest = "", o.Digest
	}
	if len(im.Repository)+len(im.Registry)+1 > 255 {
		return im, fmt.Errorf("%w: %q: name longer than 255 characters", ErrInvalidImage, im.String())
	}
	return im, nil
}
