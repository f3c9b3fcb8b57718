package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Every link of README.md and docs/*.md to a heading of one of them
// (`[text](#anchor)`, `[text](file.md#anchor)`) names an anchor the
// heading gives, as GitHub spells them: the heading's text in lower case,
// its punctuation dropped (an en dash too, which leaves no hyphen),
// spaces made hyphens, "-1", "-2", ... after repeats.
func TestDocLinksMatchHeadings(t *testing.T) {
	root := repoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(root, "README.md")}, docs...)
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		a, err := headingAnchors(f)
		if err != nil {
			t.Fatal(err)
		}
		anchors[f] = a
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, m := range anchorLink.FindAllStringSubmatch(line, -1) {
				target := f
				if m[1] != "" {
					target = filepath.Join(filepath.Dir(f), m[1])
				}
				a, ok := anchors[target]
				if !ok {
					continue // not one of the checked files
				}
				checked++
				if !a[m[2]] {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s:%d: no heading of %s gives the anchor #%s", rel, n+1, filepath.Base(target), m[2])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no link to a heading found")
	}
}

// anchorLink matches a Markdown link to an anchor: group 1 the file (empty
// for the same file), group 2 the anchor.
var anchorLink = regexp.MustCompile(`\]\(([^)\s#]*)#([^)\s]+)\)`)

// headingLine matches an ATX heading: group 1 its text.
var headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// inlineLink matches an inline link, group 1 its text.
var inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// headingAnchors returns the anchors of the headings of the Markdown file
// at path, outside fenced blocks.
func headingAnchors(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := headingSlug(inlineLink.ReplaceAllString(m[1], "$1"))
		if k, ok := seen[s]; ok {
			seen[s] = k + 1
			s = fmt.Sprintf("%s-%d", s, k+1)
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	return out, nil
}

// headingSlug is GitHub's anchor of a heading's text: letters, marks,
// digits, connector punctuation, spaces and hyphens kept, in lower case,
// each space a hyphen.
func headingSlug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
