// Package condition holds what every fedkit loop does the same way with its conditions.
//
//	conds, changed := condition.Set(obj.Status.Conditions, metav1.Condition{
//		Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotReady",
//		Message: condition.Truncate(msg, maxMessage),
//	}, now)
//
// The loops write conditions on federated objects and records. Set sets one while keeping
// its transition time. Truncate bounds its message.
package condition
