package fedtest

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Stories runs the story file of a pure decision (testdata/*.txt): blocks separated by blank
// lines; a block is comment lines (#), commands, "----" and what run printed for the
// commands. run is given each block's commands in turn, so state can carry over from block
// to block. A block of comments alone is kept as it is. With rewrite, the file is written
// back with what run printed, instead of compared.
func Stories(t *testing.T, file string, rewrite bool, run func(commands []string) string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("story %s: %v", file, err)
	}
	var out strings.Builder
	for _, block := range strings.Split(strings.TrimRight(string(data), "\n"), "\n\n") {
		lines := strings.Split(strings.TrimLeft(block, "\n"), "\n")
		i := 0
		for i < len(lines) && strings.HasPrefix(lines[i], "#") {
			out.WriteString(lines[i] + "\n")
			i++
		}
		if i == len(lines) {
			out.WriteString("\n")
			continue
		}
		sep := i
		for sep < len(lines) && lines[sep] != "----" {
			sep++
		}
		if sep == len(lines) {
			t.Fatalf("story %s: the block at %q has no ---- line", file, lines[i])
		}
		commands := lines[i:sep]
		want := strings.Join(lines[sep+1:], "\n")
		got := run(commands)
		if !rewrite && got != want {
			t.Errorf("story %s, block %q (-want +got):\n%s", file, commands[0], cmp.Diff(want, got))
		}
		out.WriteString(strings.Join(commands, "\n") + "\n----\n")
		if got != "" {
			out.WriteString(got + "\n")
		}
		out.WriteString("\n")
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatalf("story %s: %v", file, err)
		}
	}
}
