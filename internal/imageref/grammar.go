package imageref

import "strings"

// The grammar of image references, as Docker and containerd parse them
// (github.com/distribution/reference):
//
//	reference  := name [ ":" tag ] [ "@" digest ]
//	name       := [ registry "/" ] path-component { "/" path-component }
//	registry   := host [ ":" port ]   (host: DNS labels joined by ".", or "[" IPv6 "]")
//	path-component := alnum { separator alnum }  (lower case; separator: ".", "_", "__", "-"+)
//	tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
//	digest     := algorithm ":" hex   (sha256: 64 hex digits, sha512: 128, others >= 32)

// ValidRegistry reports whether s is a registry host with an optional port:
// "registry.example.com", "localhost:5000", "10.0.0.1:5000", "[::1]:5000".
func ValidRegistry(s string) bool {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return false
		}
		host, port = s[1:end], s[end+1:]
		if !validIPv6(host) {
			return false
		}
		if port == "" {
			return true
		}
		if port[0] != ':' {
			return false
		}
		return validPort(port[1:])
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if !validPort(port) {
			return false
		}
	}
	if host == "" {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func validIPv6(s string) bool {
	if len(s) < 2 || strings.Count(s, ":") < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == ':' || c == '.' || isHex(c) || c == '%') {
			return false
		}
	}
	return true
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// ValidRepository reports whether s is a repository path: lower-case components joined
// by "/", e.g. "library/nginx" or "team/app/api".
func ValidRepository(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range strings.Split(s, "/") {
		if !validPathComponent(c) {
			return false
		}
	}
	return true
}

// validPathComponent: [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
func validPathComponent(c string) bool {
	if c == "" || !isLowerAlnum(c[0]) || !isLowerAlnum(c[len(c)-1]) {
		return false
	}
	for i := 0; i < len(c); {
		if isLowerAlnum(c[i]) {
			i++
			continue
		}
		j := i
		for j < len(c) && !isLowerAlnum(c[j]) {
			j++
		}
		switch sep := c[i:j]; {
		case sep == "." || sep == "_" || sep == "__":
		case strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

// ValidTag reports whether s is a tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
func ValidTag(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// ValidDigest reports whether s is algorithm:hex with a known length for sha256 (64)
// and sha512 (128), and at least 32 lower-case hex digits for other algorithms.
func ValidDigest(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	alg, hex := s[:i], s[i+1:]
	for _, part := range strings.FieldsFunc(alg, func(r rune) bool { return r == '+' || r == '.' || r == '_' || r == '-' }) {
		for j := 0; j < len(part); j++ {
			if !isLowerAlnum(part[j]) {
				return false
			}
		}
	}
	if !isLowerAlnum(alg[0]) || !isLowerAlnum(alg[len(alg)-1]) {
		return false
	}
	switch alg {
	case "sha256":
		if len(hex) != 64 {
			return false
		}
	case "sha512":
		if len(hex) != 128 {
			return false
		}
	default:
		if len(hex) < 32 {
			return false
		}
	}
	for j := 0; j < len(hex); j++ {
		if c := hex[j]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }
func isHex(c byte) bool        { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
