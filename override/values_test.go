package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
)

// TestDecodeValueFastPath checks the direct decoding against the API machinery's decoder on
// the values it handles and on those it must hand over.
func TestDecodeValueFastPath(t *testing.T) {
	for _, raw := range []string{
		`null`, `true`, `false`, ` 7 `, `0`, `-12`, `9223372036854775807`, `9223372036854775808`, `-0`, `01`,
		`1.5`, `1e3`, `"plain"`, `""`, `"with \"escape\""`, `"é"`, `"a\u0041"`, `{"a":1}`, `[1,"x"]`, `"unterminated`, `tru`,
	} {
		want, wantErr := (&federation.RawValue{Raw: []byte(raw)}).Decode()
		got, err := decodeValue([]byte(raw))
		require.Equal(t, wantErr != nil, err != nil, "%s: error %v; want %v", raw, err, wantErr)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decodeValue(%s) mismatch (-want +got):\n%s", raw, diff)
		}
	}
}
