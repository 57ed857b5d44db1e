package launchtemplate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small TOML reader (this file) and writer (toml_write.go) for the subset Bottlerocket user data uses:
// tables, dotted and quoted keys, strings (basic, literal, multi-line), integers, floats, booleans,
// arrays and inline tables. Arrays of tables and dates are refused with a clear error. Values read are
// string, int64, float64, bool, []any and tomlTable. Writing sorts keys and drops comments: the result
// is equivalent TOML, not the user's text.

type tomlTable map[string]any

// parseTOML reads a document into its root table.
func parseTOML(text string) (tomlTable, error) {
	p := &tomlParser{src: text}
	root := tomlTable{}
	current := root
	for {
		p.skipBlank()
		if p.eof() {
			return root, nil
		}
		switch {
		case strings.HasPrefix(p.rest(), "[["):
			return nil, p.errorf("arrays of tables are not supported")
		case p.peek() == '[':
			p.pos++
			keys, err := p.key()
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			if p.eof() || p.peek() != ']' {
				return nil, p.errorf("expected ] after table name")
			}
			p.pos++
			if current, err = descend(root, keys, p); err != nil {
				return nil, err
			}
		default:
			if err := p.keyValue(current); err != nil {
				return nil, err
			}
		}
		if err := p.endOfLine(); err != nil {
			return nil, err
		}
	}
}

// descend walks (creating as needed) the tables named by keys.
func descend(t tomlTable, keys []string, p *tomlParser) (tomlTable, error) {
	for _, k := range keys {
		switch v := t[k].(type) {
		case nil:
			next := tomlTable{}
			t[k] = next
			t = next
		case tomlTable:
			t = v
		default:
			return nil, p.errorf("key %q is already a value, not a table", k)
		}
	}
	return t, nil
}

type tomlParser struct {
	src string
	pos int
}

func (p *tomlParser) eof() bool    { return p.pos >= len(p.src) }
func (p *tomlParser) peek() byte   { return p.src[p.pos] }
func (p *tomlParser) rest() string { return p.src[p.pos:] }

func (p *tomlParser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:min(p.pos, len(p.src))], "\n")
	return fmt.Errorf("TOML line %d: %s", line, fmt.Sprintf(format, args...))
}

func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.pos++
	}
}

// skipBlank skips spaces, newlines and comments.
func (p *tomlParser) skipBlank() {
	for !p.eof() {
		switch p.peek() {
		case ' ', '\t', '\r', '\n':
			p.pos++
		case '#':
			p.skipComment()
		default:
			return
		}
	}
}

func (p *tomlParser) skipComment() {
	for !p.eof() && p.peek() != '\n' {
		p.pos++
	}
}

func (p *tomlParser) endOfLine() error {
	p.skipSpace()
	if !p.eof() && p.peek() == '#' {
		p.skipComment()
	}
	if p.eof() {
		return nil
	}
	if strings.HasPrefix(p.rest(), "\r\n") {
		p.pos += 2
		return nil
	}
	if p.peek() == '\n' {
		p.pos++
		return nil
	}
	return p.errorf("unexpected %q at end of line", p.peek())
}

// key reads a dotted key.
func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("expected a key")
		}
		var k string
		var err error
		switch p.peek() {
		case '"':
			k, err = p.basicString()
		case '\'':
			k, err = p.literalString()
		default:
			start := p.pos
			for !p.eof() && isBareKeyChar(p.peek()) {
				p.pos++
			}
			if start == p.pos {
				return nil, p.errorf("expected a key, found %q", p.peek())
			}
			k = p.src[start:p.pos]
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		p.skipSpace()
		if p.eof() || p.peek() != '.' {
			return keys, nil
		}
		p.pos++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// keyValue reads "key = value" into t.
func (p *tomlParser) keyValue(t tomlTable) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	if p.eof() || p.peek() != '=' {
		return p.errorf("expected = after key %q", strings.Join(keys, "."))
	}
	p.pos++
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return err
	}
	parent, err := descend(t, keys[:len(keys)-1], p)
	if err != nil {
		return err
	}
	last := keys[len(keys)-1]
	if _, exists := parent[last]; exists {
		return p.errorf("key %q is defined twice", strings.Join(keys, "."))
	}
	parent[last] = v
	return nil
}

func (p *tomlParser) value() (any, error) {
	if p.eof() {
		return nil, p.errorf("expected a value")
	}
	switch c := p.peek(); {
	case c == '"':
		return p.basicString()
	case c == '\'':
		return p.literalString()
	case c == '[':
		return p.array()
	case c == '{':
		return p.inlineTable()
	}
	start := p.pos
	for !p.eof() && strings.IndexByte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_+-.:", p.peek()) >= 0 {
		p.pos++
	}
	word := p.src[start:p.pos]
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "+nan", "-nan":
		return math.NaN(), nil
	case "":
		return nil, p.errorf("expected a value, found %q", p.peek())
	}
	if n, err := strconv.ParseInt(word, 0, 64); err == nil && !strings.ContainsAny(word, ".eE") {
		return n, nil
	}
	if !strings.ContainsAny(word, ":xob") {
		if f, err := strconv.ParseFloat(strings.ReplaceAll(word, "_", ""), 64); err == nil {
			return f, nil
		}
	}
	return nil, p.errorf("unsupported value %q (dates are not supported)", word)
}

func (p *tomlParser) array() ([]any, error) {
	p.pos++ // [
	out := []any{}
	for {
		p.skipBlank()
		if p.eof() {
			return nil, p.errorf("unterminated array")
		}
		if p.peek() == ']' {
			p.pos++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipBlank()
		if p.eof() {
			return nil, p.errorf("unterminated array")
		}
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
		default:
			return nil, p.errorf("expected , or ] in array, found %q", p.peek())
		}
	}
}

func (p *tomlParser) inlineTable() (tomlTable, error) {
	p.pos++ // {
	t := tomlTable{}
	p.skipSpace()
	if !p.eof() && p.peek() == '}' {
		p.pos++
		return t, nil
	}
	for {
		if err := p.keyValue(t); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("unterminated inline table")
		}
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return t, nil
		default:
			return nil, p.errorf("expected , or } in inline table, found %q", p.peek())
		}
	}
}

func (p *tomlParser) literalString() (string, error) {
	if strings.HasPrefix(p.rest(), "'''") {
		p.pos += 3
		end := strings.Index(p.rest(), "'''")
		if end < 0 {
			return "", p.errorf("unterminated multi-line literal string")
		}
		s := strings.TrimPrefix(strings.TrimPrefix(p.src[p.pos:p.pos+end], "\r"), "\n")
		p.pos += end + 3
		return s, nil
	}
	p.pos++
	end := strings.IndexAny(p.rest(), "'\n")
	if end < 0 || p.src[p.pos+end] != '\'' {
		return "", p.errorf("unterminated literal string")
	}
	s := p.src[p.pos : p.pos+end]
	p.pos += end + 1
	return s, nil
}

func (p *tomlParser) basicString() (string, error) {
	multi := strings.HasPrefix(p.rest(), `"""`)
	if multi {
		p.pos += 3
		if strings.HasPrefix(p.rest(), "\r\n") {
			p.pos += 2
		} else if strings.HasPrefix(p.rest(), "\n") {
			p.pos++
		}
	} else {
		p.pos++
	}
	var b strings.Builder
	for {
		if p.eof() {
			return "", p.errorf("unterminated string")
		}
		c := p.peek()
		switch {
		case multi && strings.HasPrefix(p.rest(), `"""`):
			p.pos += 3
			return b.String(), nil
		case !multi && c == '"':
			p.pos++
			return b.String(), nil
		case !multi && c == '\n':
			return "", p.errorf("newline in a single-line string")
		case c == '\\':
			if err := p.escape(&b, multi); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

func (p *tomlParser) escape(b *strings.Builder, multi bool) error {
	p.pos++ // backslash
	if p.eof() {
		return p.errorf("unterminated escape")
	}
	c := p.peek()
	p.pos++
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case '"', '\\':
		b.WriteByte(c)
	case 'u', 'U':
		size := 4
		if c == 'U' {
			size = 8
		}
		if len(p.rest()) < size {
			return p.errorf("short unicode escape")
		}
		n, err := strconv.ParseUint(p.src[p.pos:p.pos+size], 16, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return p.errorf("bad unicode escape %q", p.src[p.pos:p.pos+size])
		}
		b.WriteRune(rune(n))
		p.pos += size
	case ' ', '\t', '\r', '\n':
		if !multi {
			return p.errorf("bad escape \\%c", c)
		}
		// A line-ending backslash joins lines: skip the whitespace and newlines that follow.
		p.pos--
		for !p.eof() && strings.IndexByte(" \t\r\n", p.peek()) >= 0 {
			p.pos++
		}
	default:
		return p.errorf("bad escape \\%c", c)
	}
	return nil
}
