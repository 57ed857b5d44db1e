package doclinks

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// skipDirs are folders that hold no documentation of ours: build outputs, installed tools, caches.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".tools": true, "cdk.out": true,
	"dist": true, ".demo": true, ".bench": true, ".test": true}

// link is one Markdown link found in a file.
type link struct {
	file   string // the Markdown file, relative to the root
	line   int
	target string
}

// Broken is a link that does not resolve, and why.
type Broken struct {
	File   string
	Line   int
	Target string
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", b.File, b.Line, b.Target, b.Reason)
}

// inlineLink matches [text](target) and ![alt](target); the target ends at the first space or ')'.
var inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan matches inline code, which may hold bracket-and-parenthesis text that is not a link.
var codeSpan = regexp.MustCompile("`[^`]*`")

// Check walks root and returns every relative link in its Markdown files that does not resolve.
func Check(root string) ([]Broken, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(path), ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{} // file → its headings' anchors, read once
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		a, err := headingAnchors(path)
		anchors[path] = a
		return a, err
	}
	var broken []Broken
	for _, f := range files {
		links, err := linksIn(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range links {
			if reason := resolve(f, l.target, anchorsOf); reason != "" {
				broken = append(broken, Broken{File: rel, Line: l.line, Target: l.target, Reason: reason})
			}
		}
	}
	return broken, nil
}

// resolve says why target, linked from the Markdown file from, does not resolve ("" when it does).
// Absolute URLs (http:, mailto: …) are not checked: they are outside the repository.
func resolve(from, target string, anchorsOf func(string) (map[string]bool, error)) string {
	u, err := url.Parse(target)
	if err != nil {
		return "not a valid link: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	path := from
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return "an absolute path; link relative to the file"
		}
		path = filepath.Join(filepath.Dir(from), filepath.FromSlash(u.Path))
		info, err := os.Stat(path)
		if err != nil {
			return "no such file or folder"
		}
		if info.IsDir() && u.Fragment != "" {
			return "a heading of a folder"
		}
	}
	if u.Fragment == "" {
		return ""
	}
	if !strings.EqualFold(filepath.Ext(path), ".md") {
		return "" // a line anchor of a source file, say: GitHub's, not checked here
	}
	a, err := anchorsOf(path)
	if err != nil {
		return "reading its headings: " + err.Error()
	}
	if !a[u.Fragment] {
		return fmt.Sprintf("%s has no heading with the anchor #%s", filepath.Base(path), u.Fragment)
	}
	return ""
}

// linksIn returns the links of a Markdown file, outside fenced code blocks and inline code.
func linksIn(path string) ([]link, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []link
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{file: path, line: n, target: m[1]})
		}
	}
	return out, sc.Err()
}

// headingAnchors returns the anchors GitHub gives a Markdown file's ATX headings (# …), outside fenced
// code blocks; a repeated heading gets -1, -2 … as GitHub numbers them.
func headingAnchors(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if len(line)-len(text) > 6 || (text != "" && text[0] != ' ') {
			continue // not a heading: more than six #, or no space after them
		}
		slug := Anchor(text)
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors, nil
}

// Anchor is the anchor GitHub gives a heading's text: lower case, punctuation dropped (hyphens and
// underscores kept), each space a hyphen.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
