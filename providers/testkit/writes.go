package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// conditionalUpdate is an UPDATE whose WHERE asks more than which row: one that may change
// no row.
var conditionalUpdate = regexp.MustCompile(`(?is)\bUPDATE\b.*\bWHERE\b.*\bAND\b`)

// CheckWrites holds a money package to its rule: every conditional UPDATE in dir's Go
// sources (tests aside) run with ExecContext or Changed has its changed-row count used
// (RowsAffected, or handed on), never dropped; one run through sqldb's Update (which drops
// the count) is named in harmless, by the name it gives, with the reason a no-row change is
// safe; and every name in harmless is one still in use.
func CheckWrites(t *testing.T, dir string, harmless map[string]string) {
	t.Helper()
	dropped, shown := droppedWrites(t, dir, harmless)
	for _, v := range dropped {
		t.Error(v)
	}
	for what := range harmless {
		if !shown[what] {
			t.Errorf("harmless names %q, which no conditional update uses", what)
		}
	}
}

// droppedWrites lists the conditional updates of dir's Go sources (tests aside) whose
// changed-row count is thrown away, and the harmless names met.
func droppedWrites(t *testing.T, dir string, harmless map[string]string) (dropped []string, shown map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	shown = map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if why := droppedWrite(n, harmless, shown); why != "" {
				dropped = append(dropped, fset.Position(n.Pos()).String()+": "+why)
			}
			return true
		})
	}
	return dropped, shown
}

// droppedWrite says what is wrong with a node that runs a conditional update and drops its
// count, or ""; it marks the harmless names it meets in shown.
func droppedWrite(n ast.Node, harmless map[string]string, shown map[string]bool) string {
	if c, ok := n.(*ast.CallExpr); ok && method(c) == "Update" && conditional(c) {
		what := strings.TrimSpace(literal(c.Args[1]))
		shown[what] = true
		if harmless[what] == "" {
			return "a conditional UPDATE through Update (its count dropped) not shown harmless: " + what
		}
		return ""
	}
	var call ast.Expr
	switch s := n.(type) {
	case *ast.ExprStmt:
		call = s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 && isBlank(s.Lhs[0]) {
			call = s.Rhs[0]
		}
	}
	if c, ok := call.(*ast.CallExpr); ok && (method(c) == "ExecContext" || method(c) == "Changed") && conditional(c) {
		return "a conditional UPDATE's count is dropped"
	}
	return ""
}

// method is the name of the method a call calls, or "".
func method(c *ast.CallExpr) string {
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}

// conditional: one of the call's arguments is a conditional UPDATE's SQL.
func conditional(c *ast.CallExpr) bool {
	return slices.ContainsFunc(c.Args, func(a ast.Expr) bool { return conditionalUpdate.MatchString(literal(a)) })
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// literal is the constant text of an expression: string literals, and the literal parts of
// a concatenation.
func literal(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(v.Value)
		return s
	case *ast.BinaryExpr:
		return literal(v.X) + literal(v.Y)
	}
	return ""
}
