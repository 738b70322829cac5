package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codeNames is what the module's Go code names: its packages, every declared name (types,
// functions, methods, fields, variables, constants) and every string literal (the stable
// codes, states and stored names the map quotes); and the web UI's source, searched as text.
type codeNames struct {
	declared, literals map[string]bool
	files              map[string]bool // base names of the tree's files
	ui                 strings.Builder // webui/src's scripts
}

func readCodeNames(t *testing.T) *codeNames {
	t.Helper()
	n := &codeNames{declared: map[string]bool{"parla": true}, literals: map[string]bool{}, files: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist":
				return filepath.SkipDir
			}
			n.declared[d.Name()] = true
			return nil
		}
		n.files[d.Name()] = true
		if strings.HasPrefix(filepath.ToSlash(path), "webui/src/") && regexp.MustCompile(`\.(js|jsx)$`).MatchString(path) {
			b, err := os.ReadFile(path)
			n.ui.Write(b)
			return err
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			// Of the tests, only their names count: the invariants name the test that holds each.
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Test") {
					n.declared[fn.Name.Name] = true
				}
			}
			return nil
		}
		n.declared[f.Name.Name] = true
		ast.Inspect(f, func(node ast.Node) bool {
			switch x := node.(type) {
			case *ast.FuncDecl:
				n.declared[x.Name.Name] = true
			case *ast.TypeSpec:
				n.declared[x.Name.Name] = true
			case *ast.ValueSpec:
				for _, id := range x.Names {
					n.declared[id.Name] = true
				}
			case *ast.Field:
				for _, id := range x.Names {
					n.declared[id.Name] = true
				}
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					if s, err := strconv.Unquote(x.Value); err == nil {
						n.literals[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var (
	quoted     = regexp.MustCompile("`([^`]+)`")
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	fileName   = regexp.MustCompile(`\.(go|js|jsx|mjs|json|md|yaml|sh)$`)
)

// missing says why a name quoted in the map names nothing of the code, or "" when it does.
// Paths (with a slash or a file's extension) must exist, a glob must match; a file name
// alone must be a file of the tree; an import path of another module or the standard
// library must be imported somewhere. Identifiers, dotted or not, must be declared in the
// module's Go code (each part), be a string it uses (a stable code, a state, a stored
// name), or a word of the web UI's scripts. Routes, commands and SQL fragments are not names and are passed over.
func (n *codeNames) missing(name string) string {
	switch {
	case strings.HasPrefix(name, "/"), strings.ContainsAny(name, " ?$"):
		return ""
	case strings.Contains(name, "/") || fileName.MatchString(name):
		if m, _ := filepath.Glob(filepath.FromSlash(name)); len(m) > 0 {
			return ""
		}
		if !strings.Contains(name, "/") && n.files[name] {
			return ""
		}
		if n.literals[name] {
			return "" // an import path, or a stored name such as kept.json
		}
		for l := range n.literals {
			if strings.HasSuffix(l, "/"+name) {
				return ""
			}
		}
		return "no such file or path"
	case identifier.MatchString(name):
		if n.literals[name] || regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(n.ui.String()) {
			return "" // a string the code uses, or a name of the web UI's
		}
		for _, part := range strings.Split(name, ".") {
			if !n.declared[part] {
				return part + " is declared nowhere in the module's Go code"
			}
		}
		return ""
	}
	return ""
}

// TestArchitectureNamesExist holds ARCHITECTURE.md to the code: every name it quotes
// (in backticks) still exists, so a renamed file or type cannot leave the map behind.
func TestArchitectureNamesExist(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	names := readCodeNames(t)
	seen := map[string]bool{}
	// The fences of the folder map are no quotes; the map's own lines are read as any other.
	text := strings.ReplaceAll(string(doc), "```", "")
	for _, m := range quoted.FindAllStringSubmatch(text, -1) {
		name := strings.TrimSpace(m[1])
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if why := names.missing(name); why != "" {
			t.Errorf("ARCHITECTURE.md names `%s`: %s", name, why)
		}
	}
	if len(seen) < 50 {
		t.Fatalf("read %d names from ARCHITECTURE.md; the map quotes more", len(seen))
	}
}
