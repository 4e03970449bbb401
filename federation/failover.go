package federation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PurgeModes returns the purge modes a Failover may name, in the order of the enum.
func PurgeModes() []PurgeMode {
	return []PurgeMode{PurgeImmediately, PurgeGraciously, PurgeNever}
}

// EffectiveFailover returns the failover settings that apply to an object: its placement's
// spec.failover, else the preference's (rsp may be nil), else the defaults. The result has
// every timer filled in (PurgeGraciously, DefaultGracePeriodSeconds, and the application
// defaults when Application is set). The inputs are not changed. The scheduler, preview and
// application failover all call it, so they cannot disagree.
func EffectiveFailover(p Placement, rsp *ReplicaSchedulingPreference) Failover {
	var f Failover
	switch {
	case p.Failover != nil:
		f = *p.Failover.DeepCopy()
	case rsp != nil && rsp.Spec.Failover != nil:
		f = *rsp.Spec.Failover.DeepCopy()
	}
	defaultFailover(&f)
	return f
}

// defaultFailover fills in absent fields in place: PurgeGraciously, the grace period, and the
// application timers when Application is set. It is idempotent.
func defaultFailover(f *Failover) {
	if f == nil {
		return
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
}

// ValidateFailover checks a failover: a known purge mode ("" is the default) and seconds
// that are not negative. A nil failover is valid.
func ValidateFailover(f *Failover, path *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if f.PurgeMode != "" && !slices.Contains(PurgeModes(), f.PurgeMode) {
		errs = append(errs, field.NotSupported(path.Child("purgeMode"), f.PurgeMode, PurgeModes()))
	}
	errs = append(errs, nonNegative(f.GracePeriodSeconds, path.Child("gracePeriodSeconds"))...)
	if a := f.Application; a != nil {
		ap := path.Child("application")
		errs = append(errs, nonNegative(a.ToleranceSeconds, ap.Child("toleranceSeconds"))...)
		errs = append(errs, nonNegative(a.BackoffSeconds, ap.Child("backoffSeconds"))...)
	}
	return errs
}

func nonNegative(v *int32, path *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(path, *v, "must be non-negative")}
	}
	return nil
}
