package imageref

import (
	"errors"
	"fmt"
	"strings"
)

// Reference is a parsed container image reference, in the parts image overrides replace.
// Parts are kept as written, so a reference whose parts do not change is rendered back
// unchanged ("nginx" stays "nginx", not docker.io/library/nginx:latest).
type Reference struct {
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

// Parse parses an image reference with Docker's rules: name[:tag][@digest], where the
// name's first component is a registry if it contains "." or ":", is "localhost", or has an
// upper-case letter. It fails for anything else, including an empty string, with a message
// that quotes the reference and names the bad part.
func Parse(s string) (Reference, error) {
	var im Reference
	if s == "" {
		return im, errors.New("empty")
	}
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, im.Digest = rest[:i], rest[i+1:]
		if !ValidDigest(im.Digest) {
			return Reference{}, fmt.Errorf("%q: bad digest %q", s, im.Digest)
		}
	}
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		rest, im.Tag = rest[:i], rest[i+1:]
		if !ValidTag(im.Tag) {
			return Reference{}, fmt.Errorf("%q: bad tag %q", s, im.Tag)
		}
	}
	if len(rest) > 255 {
		return Reference{}, fmt.Errorf("%q: name longer than 255 characters", s)
	}
	im.Repository = rest
	if i := strings.IndexByte(rest, '/'); i >= 0 && looksLikeRegistry(rest[:i]) {
		im.Registry, im.Repository = rest[:i], rest[i+1:]
		if !ValidRegistry(im.Registry) {
			return Reference{}, fmt.Errorf("%q: bad registry %q", s, im.Registry)
		}
	}
	if !ValidRepository(im.Repository) {
		return Reference{}, fmt.Errorf("%q: bad repository %q (lower-case letters, digits and separators)", s, im.Repository)
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
func (im Reference) String() string {
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
func (im Reference) NormalizedRegistry() string {
	if im.Registry == "" || im.Registry == "index.docker.io" {
		return "docker.io"
	}
	return im.Registry
}

// NormalizedRepository returns the repository, with Docker Hub's "library/" for official
// images: "nginx" is "library/nginx".
func (im Reference) NormalizedRepository() string {
	if im.NormalizedRegistry() == "docker.io" && !strings.Contains(im.Repository, "/") {
		return "library/" + im.Repository
	}
	return im.Repository
}

// NormalizedTag returns the tag, "latest" when there is neither tag nor digest.
func (im Reference) NormalizedTag() string {
	if im.Tag == "" && im.Digest == "" {
		return "latest"
	}
	return im.Tag
}

// Replace returns the reference with the parts that with sets (non-empty) replaced, as an
// image override does: a new registry spells out a Docker Hub repository ("nginx" becomes
// "library/nginx"); a new tag drops the digest and a new digest drops the tag, unless with
// sets both. The parts with sets are checked with the same grammar as Parse.
func (im Reference) Replace(with Reference) (Reference, error) {
	o := with
	switch {
	case o.Registry != "" && !ValidRegistry(o.Registry):
		return im, fmt.Errorf("bad registry %q", o.Registry)
	case o.Repository != "" && !ValidRepository(o.Repository):
		return im, fmt.Errorf("bad repository %q", o.Repository)
	case o.Tag != "" && !ValidTag(o.Tag):
		return im, fmt.Errorf("bad tag %q", o.Tag)
	case o.Digest != "" && !ValidDigest(o.Digest):
		return im, fmt.Errorf("bad digest %q", o.Digest)
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
		return im, fmt.Errorf("%q: name longer than 255 characters", im.String())
	}
	return im, nil
}
