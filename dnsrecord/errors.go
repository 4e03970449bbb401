package dnsrecord

import "errors"

// Sentinel errors. Callers branch on them with errors.Is; the errors returned wrap them with
// the record, the field and the cluster at fault.
var (
	// ErrInvalidRecord is returned by ServiceEndpoints and IngressEndpoints, and by the
	// controller, when a record cannot be turned into DNS names: a part of a name that is not
	// a DNS label (spec.externalName, spec.dnsPrefix, spec.domainRef, a cluster's region or
	// zone, the domain), a name longer than 253 characters, a load-balancer IP that does not
	// parse, a negative recordTTL or one above MaxTTL. The controller reports it in the Ready
	// condition and waits for the record (or the Cluster) to change.
	ErrInvalidRecord = errors.New("dnsrecord: invalid record")

	// ErrResolve is returned by ServiceEndpoints and IngressEndpoints when a load balancer's
	// hostname cannot be resolved to IP addresses. The error names the hostname and the
	// cluster and wraps the Resolver's error. The controller retries it with backoff.
	ErrResolve = errors.New("dnsrecord: cannot resolve load-balancer hostname")

	// ErrInvalidOptions is wrapped by [New]'s error when an option is invalid (an
	// Options.Shard out of range); the message names the field.
	ErrInvalidOptions = errors.New("dnsrecord: invalid options")
)
