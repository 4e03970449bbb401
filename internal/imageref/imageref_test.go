package imageref_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/internal/imageref"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want imageref.Reference
		norm [3]string // normalized registry, repository, tag
	}{
		{in: "nginx", want: imageref.Reference{Repository: "nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "nginx:1.27", want: imageref.Reference{Repository: "nginx", Tag: "1.27"}, norm: [3]string{"docker.io", "library/nginx", "1.27"}},
		{in: "bitnami/redis", want: imageref.Reference{Repository: "bitnami/redis"}, norm: [3]string{"docker.io", "bitnami/redis", "latest"}},
		{in: "docker.io/nginx", want: imageref.Reference{Registry: "docker.io", Repository: "nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "index.docker.io/library/nginx", want: imageref.Reference{Registry: "index.docker.io", Repository: "library/nginx"}, norm: [3]string{"docker.io", "library/nginx", "latest"}},
		{in: "localhost/app", want: imageref.Reference{Registry: "localhost", Repository: "app"}, norm: [3]string{"localhost", "app", "latest"}},
		{in: "localhost:5000/app:v1", want: imageref.Reference{Registry: "localhost:5000", Repository: "app", Tag: "v1"}, norm: [3]string{"localhost:5000", "app", "v1"}},
		{in: "registry.example.com:5000/team/app/api:2.0", want: imageref.Reference{Registry: "registry.example.com:5000", Repository: "team/app/api", Tag: "2.0"}, norm: [3]string{"registry.example.com:5000", "team/app/api", "2.0"}},
		{in: "[fd00::1]:5000/app", want: imageref.Reference{Registry: "[fd00::1]:5000", Repository: "app"}, norm: [3]string{"[fd00::1]:5000", "app", "latest"}},
		{in: "Registry/app", want: imageref.Reference{Registry: "Registry", Repository: "app"}, norm: [3]string{"Registry", "app", "latest"}},
		{in: "nginx@" + digest, want: imageref.Reference{Repository: "nginx", Digest: digest}, norm: [3]string{"docker.io", "library/nginx", ""}},
		{in: "quay.io/org/app:v1@" + digest, want: imageref.Reference{Registry: "quay.io", Repository: "org/app", Tag: "v1", Digest: digest}, norm: [3]string{"quay.io", "org/app", "v1"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := imageref.Parse(tc.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			require.Equal(t, tc.in, got.String(), "String() must render the reference as written")
			require.Equal(t, tc.norm, [3]string{got.NormalizedRegistry(), got.NormalizedRepository(), got.NormalizedTag()})
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "Nginx", "nginx:", "nginx:-x", "nginx@sha256:abc", "nginx@", "a//b", "/nginx", "nginx/", "bad host/app", "registry:port/app", "a:b:c", "UPPER/Case"} {
		t.Run(in, func(t *testing.T) {
			_, err := imageref.Parse(in)
			require.Error(t, err)
		})
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		image string
		o     imageref.Reference
		want  string
	}{
		{image: "nginx", o: imageref.Reference{Registry: "mirror.eu"}, want: "mirror.eu/library/nginx"},
		{image: "nginx:1.27", o: imageref.Reference{Registry: "mirror.eu:5000"}, want: "mirror.eu:5000/library/nginx:1.27"},
		{image: "bitnami/redis", o: imageref.Reference{Registry: "mirror.eu"}, want: "mirror.eu/bitnami/redis"},
		{image: "quay.io/org/app:v1", o: imageref.Reference{Registry: "mirror.eu"}, want: "mirror.eu/org/app:v1"},
		{image: "nginx", o: imageref.Reference{Tag: "1.27"}, want: "nginx:1.27"},
		{image: "nginx@" + digest, o: imageref.Reference{Tag: "1.27"}, want: "nginx:1.27"},
		{image: "nginx:1.27", o: imageref.Reference{Digest: digest}, want: "nginx@" + digest},
		{image: "nginx:1.27", o: imageref.Reference{Tag: "1.28", Digest: digest}, want: "nginx:1.28@" + digest},
		{image: "nginx:1.27", o: imageref.Reference{Repository: "team/web"}, want: "team/web:1.27"},
		{image: "nginx:1.27", o: imageref.Reference{Repository: "my.registry/web"}, want: "docker.io/my.registry/web:1.27"},
		{image: "localhost:5000/app", o: imageref.Reference{Registry: "r.io", Repository: "x/app", Tag: "2"}, want: "r.io/x/app:2"},
	}
	for _, tc := range tests {
		t.Run(tc.image+" "+tc.want, func(t *testing.T) {
			im, err := imageref.Parse(tc.image)
			require.NoError(t, err)
			got, err := im.Replace(tc.o)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.String())
			again, err := imageref.Parse(got.String())
			require.NoError(t, err, "the result must parse")
			require.Equal(t, got.NormalizedRepository(), again.NormalizedRepository())
		})
	}
	im, _ := imageref.Parse("nginx")
	_, err := im.Replace(imageref.Reference{Tag: "bad tag"})
	require.EqualError(t, err, `bad tag "bad tag"`)
}

// FuzzParse: parsing never panics, and what parses renders back to the same string and
// parses again to the same parts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"nginx", "localhost:5000/a/b:c", "[::1]:1/x@" + digest, "A/b", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		im, err := imageref.Parse(s)
		if err != nil {
			return
		}
		if im.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, im.String())
		}
		again, err := imageref.Parse(im.String())
		if err != nil || again != im {
			t.Fatalf("reparse of %q = %+v, %v; want %+v", s, again, err, im)
		}
		out, err := im.Replace(imageref.Reference{Registry: "mirror.example.com:5000", Tag: "v1"})
		if err == nil {
			if _, err := imageref.Parse(out.String()); err != nil {
				t.Fatalf("override of %q gave unparsable %q: %v", s, out.String(), err)
			}
		}
	})
}

func TestImageGrammar(t *testing.T) {
	for _, s := range []string{"docker.io", "localhost", "localhost:5000", "10.1.2.3:443", "[::1]", "[fd00::1]:5000", "My-Registry.example.com"} {
		require.True(t, imageref.ValidRegistry(s), s)
	}
	for _, s := range []string{"", ":5000", "a..b", "-a.com", "a.com:", "a.com:port", "[::1", "a_b.com", "[x]"} {
		require.False(t, imageref.ValidRegistry(s), s)
	}
	for _, s := range []string{"nginx", "library/nginx", "a/b/c", "a.b_c__d---e", "0"} {
		require.True(t, imageref.ValidRepository(s), s)
	}
	for _, s := range []string{"", "Nginx", "a//b", "/a", "a/", "a..b", "a_-b", "_a"} {
		require.False(t, imageref.ValidRepository(s), s)
	}
	require.True(t, imageref.ValidTag("v1.2.3-rc_1"))
	require.False(t, imageref.ValidTag(".x"))
	require.False(t, imageref.ValidTag("a:b"))
	require.True(t, imageref.ValidDigest(digest))
	require.True(t, imageref.ValidDigest("sha512:"+strings.Repeat("ab", 64)))
	require.True(t, imageref.ValidDigest("multihash+base58:"+strings.Repeat("a", 32)))
	for _, s := range []string{"sha256:abc", "sha256:" + strings.Repeat("A", 64), "sha512:" + strings.Repeat("a", 64), ":abc", "sha256", "x:" + strings.Repeat("a", 31), "-x:" + strings.Repeat("a", 32)} {
		require.False(t, imageref.ValidDigest(s), s)
	}
}
