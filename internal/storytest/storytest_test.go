package storytest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParse pins the format: comments before a block are kept with it, input and expected
// output are split at "----", a comment after the last block is kept, and a block without
// "----" is an error naming its line.
func TestParse(t *testing.T) {
	text := "# story\nrollout\nstages: [{clusters: [a]}]\n----\n\n# then\n\ndecide\n----\nphase Progressing\nassign a=2\n\n# the end\n"
	blocks, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Comment: "# story\n", Lines: []string{"rollout", "stages: [{clusters: [a]}]"}, Line: 2},
		{Comment: "# then\n\n", Lines: []string{"decide"}, Want: "phase Progressing\nassign a=2", Line: 8},
		{Comment: "# the end\n"},
	}
	if diff := cmp.Diff(want, blocks); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if got := Format(blocks); got != text {
		t.Errorf("Format(Parse(text)) = %q; want the text %q", got, text)
	}
	if got, want := blocks[0].Command(), "rollout"; got != want {
		t.Errorf("Command() = %q; want %q", got, want)
	}
	if got, want := blocks[0].Input(), "stages: [{clusters: [a]}]"; got != want {
		t.Errorf("Input() = %q; want %q", got, want)
	}
	if _, err := Parse("# x\ndecide\nphase Progressing\n"); err == nil || err.Error() != `line 2: "decide" has no ---- line` {
		t.Errorf("a block without ----: %v", err)
	}
}

// TestEveryStoryFormatsBack: every story file of the module is in the format, as Run
// rewrites it: a rewrite changes no file but for what its runs print.
func TestEveryStoryFormatsBack(t *testing.T) {
	files, _ := filepath.Glob("../../scheduler/testdata/*.txt")
	more, _ := filepath.Glob("../../scheduler/testdata/stories/*.txt")
	plan, _ := filepath.Glob("../../sync/plan/testdata/*/*.txt")
	autoscale, _ := filepath.Glob("../../autoscale/testdata/*.txt")
	files = append(append(append(files, more...), plan...), autoscale...)
	if len(files) == 0 {
		t.Fatal("no story files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := Parse(string(data))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if diff := cmp.Diff(string(data), Format(blocks)); diff != "" {
			t.Errorf("%s does not format back (-file +formatted):\n%s", f, diff)
		}
	}
}

// TestRunRewrites: with rewrite, Run writes what the runs print; without, a file that says
// otherwise fails.
func TestRunRewrites(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(file, []byte("# one\necho a\n----\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	echo := func(b Block) string { return b.Command()[len("echo "):] }
	if n := Run(t, file, true, echo); n != 1 {
		t.Errorf("Run ran %d blocks; want 1", n)
	}
	data, _ := os.ReadFile(file)
	if got, want := string(data), "# one\necho a\n----\na\n"; got != want {
		t.Errorf("rewritten: %q; want %q", got, want)
	}
	ft := &fakeT{TB: t}
	Run(ft, file, false, func(Block) string { return "b" })
	if !ft.failed {
		t.Error("Run passed a block whose output is not the one expected")
	}
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
