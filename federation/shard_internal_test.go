package federation

import "testing"

// TestJumpHashReference checks jumpHash against values of the paper's reference C++ code
// (keys 0, 1, 0xdeadbeef and 0x0ddc0ffeebadf00d into 1 to 19 buckets).
func TestJumpHashReference(t *testing.T) {
	for _, tc := range []struct {
		key  uint64
		want []int // want[i] is the bucket among i+1
	}{
		{0, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []int{0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17}},
		{0xdeadbeef, []int{0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16}},
		{0x0ddc0ffeebadf00d, []int{0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15}},
	} {
		for i, want := range tc.want {
			if got := jumpHash(tc.key, i+1); got != want {
				t.Errorf("jumpHash(%#x, %d) = %d; want %d", tc.key, i+1, got, want)
			}
		}
	}
}
