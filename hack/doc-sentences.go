//go:build ignore

// Command doc-sentences measures the package documentation of every doc.go under the current
// directory: the sentences of its paragraphs, their average and longest length in words, and
// how many sentences have more than 30 words. Code blocks, headings and (without -lists) lists
// are not counted.
// It flags a doc.go whose package sentence is not followed by a code block a user can copy.
// The last line is the average of the packages' averages.
//
//	go run hack/doc-sentences.go          # one line per doc.go
//	go run hack/doc-sentences.go -long 40 # also print each sentence longer than 40 words
//	go run hack/doc-sentences.go -lists   # count list items' sentences too
package main

import (
	"flag"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// sentenceEnd ends a sentence: a full stop, question or exclamation mark, then a space.
var sentenceEnd = regexp.MustCompile(`([.?!])\s+`)

func main() {
	long := flag.Int("long", 0, "print sentences with more words than this (0: none)")
	lists := flag.Bool("lists", false, "count the sentences of list items too")
	flag.Parse()
	var files []string
	filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != "." {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var sum float64
	var n int
	for _, f := range files {
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || af.Doc == nil {
			fmt.Fprintf(os.Stderr, "%s: no package comment\n", f)
			continue
		}
		var p comment.Parser
		d := p.Parse(af.Doc.Text())
		var sentences []string
		// The package sentence, then code: a code block among the first two blocks.
		startsWithCode := false
		for i, b := range d.Content {
			if _, ok := b.(*comment.Code); ok && i < 2 {
				startsWithCode = true
			}
			switch b := b.(type) {
			case *comment.Paragraph:
				sentences = append(sentences, split(plain(b.Text))...)
			case *comment.List:
				if !*lists {
					continue
				}
				for _, it := range b.Items {
					for _, c := range it.Content {
						if para, ok := c.(*comment.Paragraph); ok {
							sentences = append(sentences, split(plain(para.Text))...)
						}
					}
				}
			}
		}
		words := 0
		longest, over30 := 0, 0
		for _, s := range sentences {
			w := len(strings.Fields(s))
			words += w
			longest = max(longest, w)
			if w > 30 {
				over30++
			}
			if *long > 0 && w > *long {
				fmt.Printf("  %s (%d): %s\n", f, w, s)
			}
		}
		avg := 0.0
		if len(sentences) > 0 {
			avg = float64(words) / float64(len(sentences))
		}
		sum += avg
		n++
		code := ""
		if !startsWithCode {
			code = "  (does not start with a code block)"
		}
		fmt.Printf("%-32s %5d words %4d sentences  avg %5.1f  max %3d  >30: %3d%s\n", filepath.Dir(f), words, len(sentences), avg, longest, over30, code)
	}
	if n > 0 {
		fmt.Printf("%-32s average of %d packages' averages: %.1f\n", "all", n, sum/float64(n))
	}
}

// plain flattens a paragraph's text: links become their text.
func plain(ts []comment.Text) string {
	var b strings.Builder
	for _, t := range ts {
		switch x := t.(type) {
		case comment.Plain:
			b.WriteString(string(x))
		case comment.Italic:
			b.WriteString(string(x))
		case *comment.Link:
			b.WriteString(plain(x.Text))
		case *comment.DocLink:
			b.WriteString(plain(x.Text))
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// split cuts a paragraph into sentences at a '.', '?' or '!' followed by a space, except after
// "e.g", "i.e", "etc" and "vs".
func split(s string) []string {
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringIndex(s, -1) {
		before := s[start:m[0]]
		if strings.HasSuffix(before, "e.g") || strings.HasSuffix(before, "i.e") || strings.HasSuffix(before, " etc") || strings.HasSuffix(before, " vs") {
			continue
		}
		if t := strings.TrimSpace(s[start : m[0]+1]); t != "" {
			out = append(out, t)
		}
		start = m[1]
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}
