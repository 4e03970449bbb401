package federation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/internal/imageref"
	"github.com/fedkit/fedkit/internal/jsonpointer"
)

// validateTypedOverrides checks the typed overriders of one entry: replicas are
// non-negative; image overrides change something, with a well-formed registry, repository,
// tag and digest, at most one per container name (and one for all containers); container
// overrides name a container once, with valid env var names set or removed but not both;
// label and annotation keys are qualified names (label values valid label values), and no
// key is both set and removed.
func validateTypedOverrides(o ClusterOverride, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if o.Replicas != nil && *o.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), *o.Replicas, "must be non-negative"))
	}
	images := map[string]bool{}
	for i, im := range o.Images {
		ip := path.Child("images").Index(i)
		if images[im.ContainerName] {
			what := "every container"
			if im.ContainerName != "" {
				what = "container " + im.ContainerName
			}
			errs = append(errs, field.Duplicate(ip.Child("containerName"), fmt.Sprintf("%s already has an image override in this entry", what)))
		}
		images[im.ContainerName] = true
		errs = append(errs, validateImageOverride(im, ip)...)
	}
	containers := map[string]bool{}
	for i, c := range o.Containers {
		cp := path.Child("containers").Index(i)
		errs = append(errs, uniqueName(containers, c.Name, cp.Child("name"), "the container to change")...)
		set := map[string]bool{}
		for j, e := range c.Env {
			errs = append(errs, uniqueName(set, e.Name, cp.Child("env").Index(j).Child("name"), "an environment variable name")...)
		}
		for j, name := range c.RemoveEnv {
			ep := cp.Child("removeEnv").Index(j)
			switch {
			case name == "":
				errs = append(errs, field.Required(ep, "an environment variable name"))
			case set[name]:
				errs = append(errs, field.Invalid(ep, name, "is also set in env"))
			}
		}
	}
	errs = append(errs, validateMapOverride(o.Labels, true, path.Child("labels"))...)
	errs = append(errs, validateMapOverride(o.Annotations, false, path.Child("annotations"))...)
	return errs
}

func validateMapOverride(m *MapOverride, labels bool, path *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	for k, v := range m.Set {
		kp := path.Child("set").Key(k)
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(kp, k, msg))
		}
		if labels {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(kp, v, msg))
			}
		}
	}
	for i, k := range m.Remove {
		kp := path.Child("remove").Index(i)
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(kp, k, msg))
		}
		if _, ok := m.Set[k]; ok {
			errs = append(errs, field.Invalid(kp, k, "is also set"))
		}
	}
	return errs
}

// typedPaths returns the JSON pointers of the labels, annotations and replica count that the
// entry's typed overriders write, each mapped to the field that writes it.
func typedPaths(o ClusterOverride) map[string]string {
	paths := map[string]string{}
	if o.Replicas != nil {
		paths["/spec/replicas"] = "replicas"
	}
	for name, m := range map[string]*MapOverride{"labels": o.Labels, "annotations": o.Annotations} {
		if m == nil {
			continue
		}
		for k := range m.Set {
			paths["/metadata/"+name+"/"+jsonpointer.Escape(k)] = name + ".set"
		}
		for _, k := range m.Remove {
			paths["/metadata/"+name+"/"+jsonpointer.Escape(k)] = name + ".remove"
		}
	}
	return paths
}

// validateImageOverride checks the parts an image override sets. The grammar is Docker's
// (github.com/distribution/reference), from package internal/imageref, with which package
// override parses and rewrites whole references.
func validateImageOverride(im ImageOverride, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if im.Registry == "" && im.Repository == "" && im.Tag == "" && im.Digest == "" {
		errs = append(errs, field.Required(path, "at least one of registry, repository, tag or digest"))
	}
	if im.Registry != "" && !imageref.ValidRegistry(im.Registry) {
		errs = append(errs, field.Invalid(path.Child("registry"), im.Registry, "must be a host name or IP address with an optional port, e.g. mirror.example.com:5000"))
	}
	if im.Repository != "" && !imageref.ValidRepository(im.Repository) {
		errs = append(errs, field.Invalid(path.Child("repository"), im.Repository, "must be lower-case path components separated by \"/\", e.g. library/nginx"))
	}
	if im.Tag != "" && !imageref.ValidTag(im.Tag) {
		errs = append(errs, field.Invalid(path.Child("tag"), im.Tag, "must be letters, digits, \"_\", \".\" and \"-\", not starting with \".\" or \"-\", at most 128 characters"))
	}
	if im.Digest != "" && !imageref.ValidDigest(im.Digest) {
		errs = append(errs, field.Invalid(path.Child("digest"), im.Digest, "must be algorithm:hex, e.g. sha256: and 64 lower-case hex digits"))
	}
	return errs
}
