package dns_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/external-dns/endpoint"
)

// zoneServer is an authoritative DNS server on 127.0.0.1 for the records of external-dns
// endpoints, as a provider programmed by external-dns would serve them: it answers A, AAAA
// and CNAME questions, follows CNAMEs inside its records (RFC 1034 4.3.2), and answers
// NXDOMAIN for names it does not have.
type zoneServer struct {
	addr   string
	server *mdns.Server
	done   chan struct{}

	mu      sync.Mutex
	records map[string][]mdns.RR // by lower-case FQDN
}

// serveZone starts a server on a free UDP port of 127.0.0.1; the test's cleanup stops it.
func serveZone(t *testing.T) *zoneServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	z := &zoneServer{addr: pc.LocalAddr().String(), done: make(chan struct{}), records: map[string][]mdns.RR{}}
	started := make(chan struct{})
	z.server = &mdns.Server{PacketConn: pc, Handler: z, NotifyStartedFunc: func() { close(started) }}
	go func() {
		defer close(z.done)
		_ = z.server.ActivateAndServe()
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the DNS server did not start")
	}
	t.Cleanup(func() {
		_ = z.server.Shutdown()
		<-z.done
	})
	return z
}

// set replaces the served records with those of eps.
func (z *zoneServer) set(t *testing.T, eps []*endpoint.Endpoint) {
	t.Helper()
	records := map[string][]mdns.RR{}
	for _, ep := range eps {
		name := mdns.Fqdn(strings.ToLower(ep.DNSName))
		hdr := func(typ uint16) mdns.RR_Header {
			return mdns.RR_Header{Name: name, Rrtype: typ, Class: mdns.ClassINET, Ttl: uint32(ep.RecordTTL)}
		}
		for _, target := range ep.Targets {
			var rr mdns.RR
			switch ep.RecordType {
			case endpoint.RecordTypeA:
				rr = &mdns.A{Hdr: hdr(mdns.TypeA), A: net.ParseIP(target).To4()}
			case endpoint.RecordTypeAAAA:
				rr = &mdns.AAAA{Hdr: hdr(mdns.TypeAAAA), AAAA: net.ParseIP(target)}
			case endpoint.RecordTypeCNAME:
				rr = &mdns.CNAME{Hdr: hdr(mdns.TypeCNAME), Target: mdns.Fqdn(strings.ToLower(target))}
			default:
				t.Fatalf("record type %s of %s is not served", ep.RecordType, ep.DNSName)
			}
			records[name] = append(records[name], rr)
		}
	}
	z.mu.Lock()
	z.records = records
	z.mu.Unlock()
}

// ServeDNS answers one question.
func (z *zoneServer) ServeDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	m := new(mdns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		z.mu.Lock()
		z.answer(m, req.Question[0])
		z.mu.Unlock()
	}
	_ = w.WriteMsg(m)
}

func (z *zoneServer) answer(m *mdns.Msg, q mdns.Question) {
	name := strings.ToLower(q.Name)
	for hops := 0; hops < 8; hops++ {
		rrs, ok := z.records[name]
		if !ok {
			m.Rcode = mdns.RcodeNameError
			return
		}
		i := slices.IndexFunc(rrs, func(rr mdns.RR) bool { return rr.Header().Rrtype == mdns.TypeCNAME })
		if i >= 0 && q.Qtype != mdns.TypeCNAME {
			m.Answer = append(m.Answer, rrs[i])
			name = rrs[i].(*mdns.CNAME).Target
			continue
		}
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
		}
		return
	}
}

// resolver returns a real net.Resolver (Go's own DNS client) that asks only this server.
func (z *zoneServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", z.addr)
	}}
}

// lookup asks the server for name as a client would: its addresses through a real
// net.Resolver (Go's own DNS client, which follows the CNAMEs), and the canonical name at the
// end of its CNAME chain, followed one CNAME question at a time (net.Resolver.LookupCNAME
// reports either the first or the last name of a longer chain, depending on which of its A
// and AAAA answers it reads first). It returns "canonical -> addr,addr", or "NXDOMAIN".
func (z *zoneServer) lookup(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := z.resolver().LookupHost(ctx, name+".")
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return "NXDOMAIN"
	}
	require.NoError(t, err, name)
	slices.Sort(addrs)
	canonical := mdns.Fqdn(name)
	for hops := 0; ; hops++ {
		require.Less(t, hops, 8, "%s: CNAME loop", name)
		q := new(mdns.Msg)
		q.SetQuestion(canonical, mdns.TypeCNAME)
		in, err := mdns.ExchangeContext(ctx, q, z.addr)
		require.NoError(t, err, name)
		if len(in.Answer) == 0 {
			break
		}
		canonical = in.Answer[0].(*mdns.CNAME).Target
	}
	return fmt.Sprintf("%s -> %s", strings.TrimSuffix(canonical, "."), strings.Join(addrs, ","))
}
