package main

import (
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importRule is one row of ARCHITECTURE.md's "What may import what" table.
type importRule struct {
	uses    []string // every package of ours it imports, module-relative ("api/orders")
	mustNot []string // outside packages it must not import
}

// readImportRules parses the table of ARCHITECTURE.md's "What may import what": the
// document is the rule, so what it says and what the test enforces cannot drift apart.
func readImportRules(t *testing.T) map[string]importRule {
	t.Helper()
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## What may import what")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no "What may import what" section`)
	}
	rules := map[string]importRule{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // not a row of the table (its header, its rule, the prose)
		}
		name := codeSpans(cells[1])[0]
		if name == "parla" {
			name = "."
		}
		rules[name] = importRule{uses: codeSpans(cells[2]), mustNot: codeSpans(cells[3])}
	}
	if len(rules) == 0 {
		t.Fatal("no rows in ARCHITECTURE.md's import table")
	}
	return rules
}

// codeSpans returns the `quoted` names of a table cell.
func codeSpans(cell string) []string {
	var out []string
	for i, part := range strings.Split(cell, "`") {
		if i%2 == 1 {
			out = append(out, part)
		}
	}
	return out
}

// modulePackages lists the module's packages, module-relative ("." for main).
func modulePackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if p == "parla" {
			pkgs = append(pkgs, ".")
		} else {
			pkgs = append(pkgs, strings.TrimPrefix(p, "parla/"))
		}
	}
	return pkgs
}

// imports are a package's non-test imports in every build the project makes (with and
// without the whisper tag).
func imports(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	for _, tags := range [][]string{nil, {"whisper"}} {
		ctx := gobuild.Default
		ctx.BuildTags = tags
		pkg, err := ctx.ImportDir(filepath.FromSlash(dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		all = append(all, pkg.Imports...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

func TestImportRules(t *testing.T) {
	rules := readImportRules(t)
	for _, dir := range modulePackages(t) {
		rule, ok := rules[dir]
		if !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md's import table", dir)
			continue
		}
		delete(rules, dir)
		var ours []string
		for _, imp := range imports(t, dir) {
			if rel, ok := strings.CutPrefix(imp, "parla/"); ok {
				ours = append(ours, rel)
			}
			if slices.Contains(rule.mustNot, imp) {
				t.Errorf("%s imports %s, which its row forbids", dir, imp)
			}
		}
		for _, imp := range ours {
			if !slices.Contains(rule.uses, imp) {
				t.Errorf("%s imports %s; its row allows only %v", dir, imp, rule.uses)
			}
		}
		for _, use := range rule.uses {
			if !slices.Contains(ours, use) {
				t.Errorf("ARCHITECTURE.md says %s imports %s; it does not", dir, use)
			}
		}
	}
	for dir := range rules {
		t.Errorf("ARCHITECTURE.md has a row for %s, which is no package of the module", dir)
	}
}
