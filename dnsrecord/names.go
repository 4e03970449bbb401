package dnsrecord

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// maxName is the longest DNS name, in characters without the trailing dot (RFC 1035).
const maxName = 253

// addr is one target address. netip.Addr orders IPv4 before IPv6 and numerically within each,
// so 10.0.0.9 sorts before 10.0.0.10.
type addr = netip.Addr

// checkName checks that value, when set, is a sequence of DNS labels (a leading "*" label is
// allowed when wildcard is true).
func checkName(what, field, value string, wildcard bool) error {
	if value == "" {
		return nil
	}
	for i, label := range strings.Split(value, ".") {
		if wildcard && i == 0 && label == "*" {
			continue
		}
		if msg := labelProblem(label); msg != "" {
			return fmt.Errorf("%w: %s: %s %q: %s", ErrInvalidRecord, what, field, value, msg)
		}
	}
	return nil
}

// checkClusterPart checks a region or zone: one DNS label.
func checkClusterPart(what, field, cluster, value string) error {
	if msg := labelProblem(value); msg != "" {
		return fmt.Errorf("%w: %s: %s (cluster %q) %q: %s", ErrInvalidRecord, what, field, cluster, value, msg)
	}
	return nil
}

// labelProblem says what is wrong with a DNS label, or "". Letters, digits, '-' and '_' are
// allowed (underscores appear in service names such as _sip._tcp), not starting or ending
// with '-', at most 63 of them.
func labelProblem(label string) string {
	switch {
	case label == "":
		return "has an empty label"
	case len(label) > 63:
		return fmt.Sprintf("label %q is longer than 63 characters", label)
	case label[0] == '-' || label[len(label)-1] == '-':
		return fmt.Sprintf("label %q starts or ends with '-'", label)
	}
	for _, c := range label {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Sprintf("label %q has the character %q; only letters, digits, '-' and '_' are allowed", label, c)
		}
	}
	return ""
}

// resolve returns the addresses of a cluster's load balancer: its IPs, and its hostnames'
// addresses through r.
func resolve(ctx context.Context, r Resolver, what, field, cluster string, lb corev1.LoadBalancerStatus) ([]addr, error) {
	var out []addr
	for i, in := range lb.Ingress {
		switch {
		case in.IP != "":
			a, err := parseAddr(in.IP)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %s.loadBalancer.ingress[%d].ip (cluster %q): %v", ErrInvalidRecord, what, field, i, cluster, err)
			}
			out = append(out, a)
		case in.Hostname != "":
			if r == nil {
				return nil, fmt.Errorf("%w: %s: cluster %q: hostname %q: no Resolver", ErrResolve, what, cluster, in.Hostname)
			}
			ips, err := r.LookupHost(ctx, in.Hostname)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: cluster %q: hostname %q: %w", ErrResolve, what, cluster, in.Hostname, err)
			}
			for _, ip := range ips {
				a, err := parseAddr(ip)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: cluster %q: hostname %q resolved to %v", ErrResolve, what, cluster, in.Hostname, err)
				}
				out = append(out, a)
			}
		}
	}
	return out, nil
}

func parseAddr(s string) (addr, error) {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return addr{}, fmt.Errorf("%q is not an IP address", s)
	case a.Zone() != "":
		return addr{}, fmt.Errorf("%q has a zone; a DNS record cannot", s)
	}
	return a.Unmap(), nil
}

// builder collects the targets of each name and the name it falls back to.
type builder struct {
	names map[string]*pending
}

type pending struct {
	targets []addr
	up      string // the CNAME target when there are no targets; "" = drop
}

// add gives name the targets, and up as the CNAME target should it end with none. DNS names
// compare without regard to case (RFC 4343): both are lower-cased, so names that differ only
// in case merge into one record.
func (b *builder) add(name string, targets []addr, up string) {
	name, up = strings.ToLower(name), strings.ToLower(up)
	if b.names == nil {
		b.names = map[string]*pending{}
	}
	p := b.names[name]
	if p == nil {
		p = &pending{}
		b.names[name] = p
	}
	p.targets = append(p.targets, targets...)
	if p.up == "" {
		p.up = up
	}
}

// endpoints returns the records, sorted by name then type (A, AAAA, CNAME), with sorted
// unique targets.
func (b *builder) endpoints(what string, ttl int64, labels map[string]string) ([]Endpoint, error) {
	var out []Endpoint
	for _, name := range slices.Sorted(maps.Keys(b.names)) {
		if len(name) > maxName {
			return nil, fmt.Errorf("%w: %s: the name %q is longer than %d characters", ErrInvalidRecord, what, name, maxName)
		}
		p := b.names[name]
		slices.SortFunc(p.targets, func(x, y addr) int { return x.Compare(y) })
		p.targets = slices.Compact(p.targets)
		var v4, v6 []string
		for _, a := range p.targets {
			if a.Is4() {
				v4 = append(v4, a.String())
			} else {
				v6 = append(v6, a.String())
			}
		}
		ep := func(typ string, targets []string) Endpoint {
			return Endpoint{DNSName: name, Targets: targets, RecordType: typ, RecordTTL: ttl, Labels: maps.Clone(labels)}
		}
		switch {
		case len(v4)+len(v6) > 0:
			if len(v4) > 0 {
				out = append(out, ep(RecordTypeA, v4))
			}
			if len(v6) > 0 {
				out = append(out, ep(RecordTypeAAAA, v6))
			}
		case p.up != "":
			out = append(out, ep(RecordTypeCNAME, []string{p.up}))
		}
	}
	return out, nil
}
