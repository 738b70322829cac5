package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The invariants ARCHITECTURE.md lists, each held here (or by TestImportRules).

// Invariant 1: the order book never imports River; only the queue's package, River's UI
// in the admin area and main (which hands the UI River's client) do.
func TestOnlyTheQueueImportsRiver(t *testing.T) {
	allowed := []string{"api/orders/jobs", "api/admin", "."}
	for _, dir := range modulePackages(t) {
		for _, imp := range imports(t, dir) {
			if strings.HasPrefix(imp, "github.com/riverqueue/") || strings.HasPrefix(imp, "riverqueue.com/") {
				if !slices.Contains(allowed, dir) {
					t.Errorf("%s imports %s: only %v may import River", dir, imp, allowed)
				}
			}
		}
	}
}

// siteRoutes are the paths the site serves, up to their first parameter: every route
// api/routes.go registers, the prefixes it declares, and the app's pages (pages.json).
func siteRoutes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("api/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, m := range regexp.MustCompile(`(?:app\.\w+\(|Prefix\s*=\s*|: )"(/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		routes = append(routes, m[1])
	}
	pages, err := os.ReadFile("webui/src/pages.json")
	if err != nil {
		t.Fatal(err)
	}
	var byPath map[string]json.RawMessage
	if err := json.Unmarshal(pages, &byPath); err != nil {
		t.Fatal(err)
	}
	for p := range byPath {
		routes = append(routes, p)
	}
	var out []string
	for _, r := range routes {
		if i := strings.IndexAny(r, ":*"); i >= 0 {
			r = r[:i]
		}
		if strings.Trim(r, "/") != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) < 20 {
		t.Fatalf("read %d routes of the site: %v", len(out), out)
	}
	return out
}

// Invariant 2: nothing below api builds a route: no string literal of the order book,
// media or the providers is, or starts with, a path the site serves.
func TestNoRouteBelowAPI(t *testing.T) {
	routes := siteRoutes(t)
	fset := token.NewFileSet()
	for _, root := range []string{"api/orders", "api/credit", "media", "providers"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.HasPrefix(filepath.ToSlash(path), "providers/testkit/") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, r := range routes {
					if s == r || strings.HasPrefix(s, strings.TrimSuffix(r, "/")+"/") {
						t.Errorf("%s: %q is the site's route %s; api hands such paths to the code below it", fset.Position(lit.Pos()), s, r)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Invariant 5: no type of the module has more than 20 methods (tests' own types aside).
func TestTypesHaveAtMostTwentyMethods(t *testing.T) {
	fset := token.NewFileSet()
	count := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			count[filepath.Dir(path)+"."+receiverName(fn.Recv.List[0].Type)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(count) < 50 {
		t.Fatalf("counted the methods of %d types; the module has more", len(count))
	}
	for typ, n := range count {
		if n > 20 {
			t.Errorf("%s has %d methods; the house rule is at most 20", typ, n)
		}
	}
}

// receiverName is the type name of a method's receiver (*T, T, T[P]).
func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
