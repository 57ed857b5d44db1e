package launchtemplate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// writeTOML writes t with keys sorted: each table's plain values under its [header], then its sub-tables.
// Tables inside arrays are written inline.
func writeTOML(t tomlTable) string {
	var b strings.Builder
	writeTable(&b, nil, t)
	return b.String()
}

func writeTable(b *strings.Builder, path []string, t tomlTable) {
	keys := sortedTOMLKeys(t)
	var plain, tables []string
	for _, k := range keys {
		if _, ok := t[k].(tomlTable); ok {
			tables = append(tables, k)
		} else {
			plain = append(plain, k)
		}
	}
	if len(path) > 0 && (len(plain) > 0 || len(tables) == 0) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("[" + joinKeys(path) + "]\n")
	}
	for _, k := range plain {
		b.WriteString(quoteKey(k) + " = " + tomlValue(t[k]) + "\n")
	}
	for _, k := range tables {
		writeTable(b, append(append([]string{}, path...), k), t[k].(tomlTable))
	}
}

func sortedTOMLKeys(t tomlTable) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinKeys(path []string) string {
	quoted := make([]string, len(path))
	for i, k := range path {
		quoted[i] = quoteKey(k)
	}
	return strings.Join(quoted, ".")
}

func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyChar(k[i]) {
			return quoteString(k)
		}
	}
	return k
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return quoteString(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "inf"
		case math.IsInf(v, -1):
			return "-inf"
		case math.IsNaN(v):
			return "nan"
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case bool:
		return strconv.FormatBool(v)
	case []any:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = tomlValue(item)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []string:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = quoteString(item)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case tomlTable:
		keys := sortedTOMLKeys(v)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = quoteKey(k) + " = " + tomlValue(v[k])
		}
		return "{ " + strings.Join(items, ", ") + " }"
	default:
		return quoteString(fmt.Sprint(v))
	}
}

// quoteString writes a basic string, escaping quotes, backslashes and control characters.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
