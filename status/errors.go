package status

import "errors"

// Sentinel errors of the package; callers branch on them with errors.Is.
var (
	// ErrInvalidOptions is returned by [New] and [NewClusterMonitor] when an option is out of
	// range (a negative period or threshold, for example). The message names the field.
	ErrInvalidOptions = errors.New("status: invalid options")

	// ErrInvalidMemberStatus is wrapped by extractors when a member object's status field
	// has the wrong type (a string where a count belongs). The Collector reports the cluster
	// not ready with the message, which names the field and the cluster, and goes on.
	ErrInvalidMemberStatus = errors.New("status: invalid member status")

	// ErrInvalidStatus is wrapped, with federation.Terminal, by Collector.Reconcile when the
	// federated object's own status cannot be decoded (status.clusters is not a list of
	// objects, for instance): writing it back would lose what another loop wrote.
	ErrInvalidStatus = errors.New("status: invalid federated status")
)

// errReadTimeout and errProbeTimeout are the causes of a member read's or a probe's context
// when its timeout (on the injected clock) passed.
var (
	errReadTimeout  = errors.New("status: member read timed out")
	errProbeTimeout = errors.New("status: probe timed out")
)

// Reasons of a federated object's Ready condition, written by the Collector.
const (
	// ReasonReady: every placed cluster has fresh data and reports its member object up to
	// date and fully available.
	ReasonReady = "Ready"
	// ReasonNotReady: some clusters with fresh data report their member object missing, not
	// up to date or not fully available; the message names them and why.
	ReasonNotReady = "NotReady"
	// ReasonStale: every cluster with fresh data is ready, but some placed clusters have
	// none (unreachable, not Ready, or not read for StaleAfter); the message names them.
	ReasonStale = "StaleClusters"
	// ReasonNoQuorum: fewer than a majority of the placed clusters have fresh data, so the
	// Ready condition is Unknown and status.aggregated keeps its last good values.
	ReasonNoQuorum = "NoQuorum"
	// ReasonNoClusters: status.clusters lists no cluster and sync has passed over the object
	// (nothing is placed, or nothing is any more). Before sync's first pass the Collector
	// writes no Ready condition.
	ReasonNoClusters = "NoClusters"
)

// Reasons of a Cluster's Ready and Offline conditions, written by the ClusterMonitor.
const (
	// ReasonClusterReady: the API server answered its last probes ready.
	ReasonClusterReady = "ClusterReady"
	// ReasonClusterNotReady: the API server answered, but not ready (/readyz failed).
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonClusterUnreachable: the API server did not answer (refused, timed out).
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonClientUnavailable: the ClusterSet has no usable client for the cluster (its
	// Secret is missing or its credentials are bad, or the set has not built it yet).
	ReasonClientUnavailable = "ClientUnavailable"
	// ReasonProbing: a new cluster whose first probe failed; Ready stays Unknown until
	// FailureThreshold probes have failed or SuccessThreshold have succeeded.
	ReasonProbing = "Probing"
	// ReasonClusterReachable: the Offline condition is False because the API server answers.
	ReasonClusterReachable = "ClusterReachable"
)

// Reasons of a Cluster's Failover condition, written by the ClusterMonitor: the stages a
// cluster goes through when it stops being Ready (see the package documentation's table).
const (
	// ReasonFailoverNoSchedule: not Ready; its not-ready taint is NoSchedule, so it gets no
	// new placements and keeps what runs there. The message says when NoExecute comes.
	ReasonFailoverNoSchedule = "NoSchedule"
	// ReasonFailoverNoExecute: not Ready for EvictionDelay; its not-ready taint is NoExecute,
	// so placements that do not tolerate it move their replicas away.
	ReasonFailoverNoExecute = "NoExecute"
	// ReasonFailoverRecovered: Ready again; the monitor's taints are gone. The condition is
	// then False.
	ReasonFailoverRecovered = "Recovered"
	// ReasonFailoverFleetDisrupted: not Ready while the fleet is disrupted (every cluster, or
	// a large share of it, lost together: placement.FleetDisruption), the control plane's own
	// outage: its not-ready taint stays NoSchedule and its replicas stay. NoExecute can come
	// only EvictionDelay after the fleet is out of the disruption.
	ReasonFailoverFleetDisrupted = "FleetDisrupted"
)

// Reasons of a Cluster's CredentialsExpiring condition, written by the ClusterMonitor from
// when the member client's credentials expire (federation.CredentialsExpiryGetter).
const (
	// ReasonCredentialsValid: the credentials expire later than MonitorOptions.
	// CredentialsWarning from now; the message says when. The condition is False.
	ReasonCredentialsValid = "CredentialsValid"
	// ReasonCredentialsExpiring: the credentials expire within CredentialsWarning. The
	// condition is True, with a Warning event.
	ReasonCredentialsExpiring = "CredentialsExpiring"
	// ReasonCredentialsExpired: the credentials have expired; the member refuses them. The
	// condition is True, with a Warning event.
	ReasonCredentialsExpired = "CredentialsExpired"
)
