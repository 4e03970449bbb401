package federation

// EffectiveFailover returns the failover settings that apply to an object: its placement's
// spec.placement.failover when set, else its ReplicaSchedulingPreference's (rsp may be nil),
// else none. The result is a copy with the defaults filled in: PurgeMode Graciously,
// GracePeriodSeconds 600 and, when Application is set, its ToleranceSeconds 300 and
// BackoffSeconds 600.
func EffectiveFailover(p Placement, rsp *ReplicaSchedulingPreference) Failover {
	var f Failover
	switch {
	case p.Failover != nil:
		f = *p.Failover.DeepCopy()
	case rsp != nil && rsp.Spec.Failover != nil:
		f = *rsp.Spec.Failover.DeepCopy()
	}
	if f.PurgeMode == "" {
		f.PurgeMode = PurgeGraciously
	}
	if f.GracePeriodSeconds == nil {
		v := DefaultGracePeriodSeconds
		f.GracePeriodSeconds = &v
	}
	if a := f.Application; a != nil {
		if a.ToleranceSeconds == nil {
			v := DefaultApplicationToleranceSeconds
			a.ToleranceSeconds = &v
		}
		if a.BackoffSeconds == nil {
			v := DefaultApplicationBackoffSeconds
			a.BackoffSeconds = &v
		}
	}
	return f
}
