// Package dns_test follows DNS records from a federated Service to a DNS answer: the
// dnsrecord.Controller writes a DNSEndpoint, external-dns's own types decode it (as
// external-dns with --source=crd would), a DNS server on 127.0.0.1 built on
// github.com/miekg/dns (the library CoreDNS is built on) serves the records, and a real
// net.Resolver asks it for the global, region and zone names, before and after a cluster
// fails. It runs once on the in-memory fake fleet, and once on real kube-apiservers started
// by internal/testenv, where the CRDs must be accepted as they are shipped.
//
// sigs.k8s.io/external-dns and github.com/miekg/dns are imported here only, so they cost
// fedkit's library nothing: no package of the module outside this test links them (go list
// -deps ./... names neither). This test binary compiles 12 packages the library does not
// (external-dns's endpoint, apis/v1alpha1, internal/idna and pkg/events, four packages of
// controller-runtime's client, logrus and three small ones of k8s.io), besides miekg/dns; the
// two modules add 2 direct and 2 indirect requirements to go.mod and 16 lines to go.sum. An
// embedder's build, under module graph pruning, reads their go.mod files and never their code.
package dns_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/testenv"
)

// The real API servers: a host and two members.
const (
	hostName = "host"
	eastName = "east"
	westName = "west"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, eastName, westName))
}
