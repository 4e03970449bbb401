package status

import (
	"encoding/json"
	"fmt"
)

// capRemote bounds the encoded size of a remote status to limit bytes, so that a member
// object with a huge status (hundreds of clusters of them) cannot push the federated object
// past etcd's size limit. Over the limit, only the conditions are kept, when they fit; else
// a note of the size replaces the whole. A limit of 0 or less means no limit.
func capRemote(remote map[string]any, limit int) map[string]any {
	if remote == nil || limit <= 0 {
		return remote
	}
	size := encodedSize(remote)
	if size <= limit {
		return remote
	}
	if conds, ok := remote["conditions"]; ok {
		kept := map[string]any{
			"conditions": conds,
			"truncated":  fmt.Sprintf("status of %d bytes exceeds the limit of %d; only its conditions are kept", size, limit),
		}
		if encodedSize(kept) <= limit {
			return kept
		}
	}
	return map[string]any{"truncated": fmt.Sprintf("status of %d bytes exceeds the limit of %d", size, limit)}
}

// encodedSize is the length of v's JSON encoding (a value that does not encode counts as
// unbounded, so it is dropped).
func encodedSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return len(b)
}
