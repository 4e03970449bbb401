package storytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Block is one block of a story file.
type Block struct {
	// Comment is the comment and blank lines before the block, verbatim.
	Comment string
	// Lines are the block's lines before "----"; nil for the comment after the last block.
	Lines []string
	// Want is the output expected (its lines joined by "\n").
	Want string
	// Line is the line number of the block's first line in its file.
	Line int
}

// Command is the block's first line.
func (b Block) Command() string {
	if len(b.Lines) == 0 {
		return ""
	}
	return b.Lines[0]
}

// Input is the block's lines after its first, joined by "\n".
func (b Block) Input() string {
	if len(b.Lines) < 2 {
		return ""
	}
	return strings.Join(b.Lines[1:], "\n")
}

// String is the block as its file holds it, with the blank line that ends it.
func (b Block) String() string {
	var s strings.Builder
	s.WriteString(b.Comment)
	if b.Lines == nil {
		return s.String()
	}
	for _, l := range b.Lines {
		s.WriteString(l + "\n")
	}
	s.WriteString("----\n")
	if b.Want != "" {
		s.WriteString(b.Want + "\n")
	}
	s.WriteString("\n")
	return s.String()
}

// Parse splits a story file into its blocks. A comment after the last block is one more
// Block, without Lines. A block without a "----" line is an error naming its line.
func Parse(text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	var comment strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			if strings.TrimSpace(l) != "" || comment.Len() > 0 {
				comment.WriteString(l + "\n")
			}
			continue
		}
		b := Block{Comment: comment.String(), Line: i + 1}
		comment.Reset()
		for ; ; i++ {
			if i >= len(lines) {
				return nil, fmt.Errorf("line %d: %q has no ---- line", b.Line, lines[b.Line-1])
			}
			if lines[i] == "----" {
				break
			}
			b.Lines = append(b.Lines, lines[i])
		}
		var want []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		b.Want = strings.Join(want, "\n")
		blocks = append(blocks, b)
	}
	if c := strings.TrimRight(comment.String(), "\n"); c != "" {
		blocks = append(blocks, Block{Comment: c + "\n"})
	}
	return blocks, nil
}

// Format is blocks as a file holds them.
func Format(blocks []Block) string {
	var out strings.Builder
	for _, b := range blocks {
		out.WriteString(b.String())
	}
	return strings.TrimRight(out.String(), "\n") + "\n"
}

// Files returns the files matching pattern, and fails t when there is none.
func Files(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no story files match %s: %v", pattern, err)
	}
	return files
}

// Run runs file's blocks through run, in order, and reports each block whose output is not
// the one expected, with its file, line and first line (-want +got). With rewrite it writes
// the file back with what run printed instead. It returns how many blocks ran.
func Run(t testing.TB, file string, rewrite bool, run func(Block) string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	n := 0
	for i := range blocks {
		b := &blocks[i]
		if b.Lines == nil {
			continue
		}
		n++
		got := strings.TrimRight(run(*b), "\n")
		if rewrite {
			b.Want = got
		} else if diff := cmp.Diff(b.Want, got); diff != "" {
			t.Errorf("%s:%d: %s (-want +got):\n%s", file, b.Line, b.Command(), diff)
		}
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(Format(blocks)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
