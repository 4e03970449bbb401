package fedkit_test

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestDocLinks checks the doc links of every package of the module: a [Name] or [Type.Method]
// that names nothing exported in its package renders as plain bracketed text on pkg.go.dev
// and in gopls, silently (federation's errors.go linked a [ValidationError] that did not
// exist), and so does a [pkg.Name] to a package of this module that has no such name, or a
// link definition to its pkg.go.dev page. Links to packages outside the module, and to
// packages a file does not import, are not checked.
func TestDocLinks(t *testing.T) {
	pkgs := parseModule(t)
	syms := map[string]map[string]bool{} // import path -> its names, "Type.Method" included
	for _, p := range pkgs {
		syms[p.importPath] = p.symbols()
	}
	var broken []string
	for _, p := range pkgs {
		parser := p.doc.Parser()
		for _, c := range p.docComments() {
			where := p.fset.Position(c.Pos())
			rel, _ := filepath.Rel(".", where.Filename)
			for _, text := range linkedText(parser.Parse(c.Text())) {
				switch x := text.(type) {
				case comment.Plain:
					for _, m := range unresolved(string(x)) {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": "+m+" names nothing in package "+p.doc.Name)
					}
				case *comment.Link:
					if m := checkedURL(x.URL, syms); m != "" {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": "+m)
					}
				case *comment.DocLink:
					names, ok := syms[x.ImportPath]
					if !ok || x.ImportPath == p.importPath {
						continue // outside the module, or resolved in the package already
					}
					name := x.Name
					if x.Recv != "" {
						name = x.Recv + "." + x.Name
					}
					if !names[name] {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": ["+path.Base(x.ImportPath)+"."+name+"] names nothing in "+x.ImportPath)
					}
				}
			}
		}
	}
	sort.Strings(broken)
	if len(broken) > 0 {
		t.Errorf("broken doc links:\n%s", strings.Join(broken, "\n"))
	}
}

// godocPrefix starts the pkg.go.dev address of this module's packages, which a link
// definition ("[federation.Key]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#Key")
// uses where a doc link cannot resolve: the root package's tutorial imports nothing.
const godocPrefix = "https://pkg.go.dev/" + module + "/"

// checkedURL returns what is wrong with a link to a name of this module's documentation, or
// "" when the link is fine or points elsewhere.
func checkedURL(url string, syms map[string]map[string]bool) string {
	rest, ok := strings.CutPrefix(url, godocPrefix)
	if !ok {
		return ""
	}
	pkg, name, _ := strings.Cut(rest, "#")
	names, ok := syms[module+"/"+pkg]
	switch {
	case !ok:
		return url + " names no package of the module"
	case name != "" && !names[name]:
		return url + " names nothing in " + module + "/" + pkg
	}
	return ""
}

// modulePackage is one package of the module, parsed without its tests.
type modulePackage struct {
	importPath string
	fset       *token.FileSet
	files      []*ast.File
	doc        *doc.Package
}

// parseModule parses every package of the module (not the nested modules of examples/, not
// testdata).
func parseModule(t *testing.T) []*modulePackage {
	t.Helper()
	var out []*modulePackage
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		base := d.Name()
		if dir != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != "." {
			return filepath.SkipDir // a module of its own
		}
		fset := token.NewFileSet()
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var files []*ast.File
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			return nil
		}
		importPath := module
		if dir != "." {
			importPath = module + "/" + filepath.ToSlash(dir)
		}
		// doc.NewFromFiles drops unexported declarations only from its lists, not from
		// the symbols a link may name: PreserveAST keeps the files usable below.
		dp, err := doc.NewFromFiles(fset, files, importPath, doc.AllDecls|doc.PreserveAST)
		if err != nil {
			return err
		}
		out = append(out, &modulePackage{importPath: importPath, fset: fset, files: files, doc: dp})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// symbols returns the package's top-level names and its types' methods and fields, as doc
// links name them.
func (p *modulePackage) symbols() map[string]bool {
	out := map[string]bool{}
	for _, f := range p.files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					out[d.Name.Name] = true
					continue
				}
				out[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
						for _, f := range fieldsOf(s.Type) {
							for _, n := range f.Names {
								out[s.Name.Name+"."+n.Name] = true
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// docComments returns the comments that documentation renders: the package's, and those of
// declarations, struct fields and interface methods.
func (p *modulePackage) docComments() []*ast.CommentGroup {
	var out []*ast.CommentGroup
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			var cg *ast.CommentGroup
			switch n := n.(type) {
			case *ast.File:
				cg = n.Doc
			case *ast.GenDecl:
				cg = n.Doc
			case *ast.FuncDecl:
				cg = n.Doc
			case *ast.TypeSpec:
				cg = n.Doc
			case *ast.ValueSpec:
				cg = n.Doc
			case *ast.Field:
				cg = n.Doc
			case *ast.BlockStmt:
				return false // comments inside function bodies are not documentation
			}
			if cg != nil {
				out = append(out, cg)
			}
			return true
		})
	}
	return out
}

func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

func fieldsOf(x ast.Expr) []*ast.Field {
	switch x := x.(type) {
	case *ast.StructType:
		return x.Fields.List
	case *ast.InterfaceType:
		return x.Methods.List
	}
	return nil
}

// linkedText returns the text of a parsed comment's paragraphs, lists and headings (not its
// code blocks), links and plain text flattened.
func linkedText(d *comment.Doc) []comment.Text {
	var out []comment.Text
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Italic:
				out = append(out, comment.Plain(t))
			case *comment.Link:
				out = append(out, t)
				walk(t.Text)
			default:
				out = append(out, t)
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						walk(p.Text)
					}
				}
			}
		}
	}
	return out
}

// linkLike matches what go/doc/comment would take for a doc link to an exported name: [Name],
// [Type.Name], [*Name], not preceded or followed by a letter, digit or underscore, nor quoted.
// Bracketed lower-case words ("[redacted]") are left alone: they are text as often as links
// to unexported names, which documentation does not show anyway.
var linkLike = regexp.MustCompile(`(^|[^\w\]"'` + "`" + `])(\[\*?[A-Z]\w*(\.[A-Za-z_]\w*)?\])($|[^\w\[(:"'` + "`" + `])`)

// unresolved returns the bracketed names in plain text that the comment parser left as text.
func unresolved(s string) []string {
	var out []string
	for _, m := range linkLike.FindAllStringSubmatch(s, -1) {
		out = append(out, m[2])
	}
	return out
}
