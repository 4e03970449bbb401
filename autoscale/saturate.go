package autoscale

import "math"

// add is a+b saturated: a sum of the members' replicas never wraps.
func add(a, b int32) int32 {
	if s := int64(a) + int64(b); s < math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}

// addMilli is a+b saturated, for the milli-values of an External metric's series.
func addMilli(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
