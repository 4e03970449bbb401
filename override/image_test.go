package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseImage(t *testing.T) {
	tests := []struct {
		in   string
		want override.Image
		norm [3]string // normalized registry, repository, tag
	}{
		{in: "nginx", want: override.Image{Repository: "nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "nginx:1.27", want: override.Image{Repository: "nginx", Tag: "1.27"}, norm: [3]string{"docker.io", "library/nginx", "1.27"}},
		{in: "bitnami/redis", want: override.Image{Repository: "bitnami/redis"}, norm: [3]string{"docker.io", "bitnami/redis", "latest"}},
		{in: "docker.io/nginx", want: override.Image{Registry: "docker.io", Repository: "nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "index.docker.io/library/nginx", want: override.Image{Registry: "index.docker.io", Repository: "library/nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "localhost/app", want: override.Image{Registry: "localhost", Repository: "app"}, norm: [3]string{"localhost", "app", "latest"}},
		{in: "localhost:5000/app:v1", want: override.Image{Registry: "localhost:5000", Repository: "app", Tag: "v1"}, norm: [3]string{"localhost:5000", "app", "v1"}},
		{in: "registry.example.com:5000/team/app/api:2.0", want: override.Image{Registry: "registry.example.com:5000", Repository: "team/app/api", Tag: "2.0"}, norm: [3]string{"registry.example.com:5000", "team/app/api", "2.0"}},
		{in: "[fd00::1]:5000/app", want: override.Image{Registry: "[fd00::1]:5000", Repository: "app"}, norm: [3]string{"[fd00::1]:5000", "app", "latest"}},
		{in: "Registry/app", want: override.Image{Registry: "Registry", Repository: "app"}, norm: [3]string{"Registry", "app", "latest"}},
		{in: "nginx@" + digest, want: override.Image{Repository: "nginx", Digest: digest}, norm: [3]string{"docker.io", "library/nginx", ""}},
		{in: "quay.io/org/app:v1@" + digest, want: override.Image{Registry: "quay.io", Repository: "org/app", Tag: "v1", Digest: digest}, norm: [3]string{"quay.io", "org/app", "v1"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := override.ParseImage(tc.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseImage(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			require.Equal(t, tc.in, got.String(), "String() must render the reference as written")
			require.Equal(t, tc.norm, [3]string{got.NormalizedRegistry(), got.NormalizedRepository(), got.NormalizedTag()})
		})
	}
}

func TestParseImageErrors(t *testing.T) {
	for _, in := range []string{"", "Nginx", "nginx:", "nginx:-x", "nginx@sha256:abc", "nginx@", "a//b", "/nginx", "nginx/", "bad host/app", "registry:port/app", "a:b:c", "UPPER/Case"} {
		t.Run(in, func(t *testing.T) {
			_, err := override.ParseImage(in)
			require.ErrorIs(t, err, override.ErrInvalidImage)
		})
	}
}

func TestImageOverride(t *testing.T) {
	tests := []struct {
		image string
		o     federation.ImageOverride
		want  string
	}{
		{image: "nginx", o: federation.ImageOverride{Registry: "mirror.eu"}, want: "mirror.eu/library/nginx"},
		{image: "nginx:1.27", o: federation.ImageOverride{Registry: "mirror.eu:5000"}, want: "mirror.eu:5000/library/nginx:1.27"},
		{image: "bitnami/redis", o: federation.ImageOverride{Registry: "mirror.eu"}, want: "mirror.eu/bitnami/redis"},
		{image: "quay.io/org/app:v1", o: federation.ImageOverride{Registry: "mirror.eu"}, want: "mirror.eu/org/app:v1"},
		{image: "nginx", o: federation.ImageOverride{Tag: "1.27"}, want: "nginx:1.27"},
		{image: "nginx@" + digest, o: federation.ImageOverride{Tag: "1.27"}, want: "nginx:1.27"},
		{image: "nginx:1.27", o: federation.ImageOverride{Digest: digest}, want: "nginx@" + digest},
		{image: "nginx:1.27", o: federation.ImageOverride{Tag: "1.28", Digest: digest}, want: "nginx:1.28@" + digest},
		{image: "nginx:1.27", o: federation.ImageOverride{Repository: "team/web"}, want: "team/web:1.27"},
		{image: "nginx:1.27", o: federation.ImageOverride{Repository: "my.registry/web"}, want: "docker.io/my.registry/web:1.27"},
		{image: "localhost:5000/app", o: federation.ImageOverride{Registry: "r.io", Repository: "x/app", Tag: "2"}, want: "r.io/x/app:2"},
	}
	for _, tc := range tests {
		t.Run(tc.image+" "+tc.want, func(t *testing.T) {
			im, err := override.ParseImage(tc.image)
			require.NoError(t, err)
			got, err := im.Override(tc.o)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.String())
			again, err := override.ParseImage(got.String())
			require.NoError(t, err, "the result must parse")
			require.Equal(t, got.NormalizedRepository(), again.NormalizedRepository())
		})
	}
	im, _ := override.ParseImage("nginx")
	_, err := im.Override(federation.ImageOverride{Tag: "bad tag"})
	require.ErrorIs(t, err, override.ErrInvalidImage)
}

// FuzzParseImage: parsing never panics, and what parses renders back to the same string and
// parses again to the same parts.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"nginx", "localhost:5000/a/b:c", "[::1]:1/x@" + digest, "A/b", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		im, err := override.ParseImage(s)
		if err != nil {
			return
		}
		if im.String() != s {
			t.Fatalf("ParseImage(%q).String() = %q", s, im.String())
		}
		again, err := override.ParseImage(im.String())
		if err != nil || again != im {
			t.Fatalf("reparse of %q = %+v, %v; want %+v", s, again, err, im)
		}
		out, err := im.Override(federation.ImageOverride{Registry: "mirror.example.com:5000", Tag: "v1"})
		if err == nil {
			if _, err := override.ParseImage(out.String()); err != nil {
				t.Fatalf("override of %q gave unparsable %q: %v", s, out.String(), err)
			}
		}
	})
}
