package main

import (
	"bytes"
	"sync/atomic"

	"sigs.k8s.io/yaml"
)

// minSplitItems is the size from which a YAML list's items are converted in parallel; below it the
// whole document is converted at once.
const minSplitItems = 64

// listYAMLToJSON converts one YAML document to JSON like yaml.YAMLToJSON. A large list in the layout
// kubectl prints (a top-level "items:" key whose entries start with "- " in column 0) has its items
// converted separately on every CPU and joined: converting YAML is most of the time `nodewright plan`
// spends reading 20,000 pods, and it runs on one CPU otherwise. In that layout every line of an item
// below its "- " line is indented, so a line in column 0 always belongs to the top level. Anything
// else — other layouts, or an item that does not convert alone (an alias of an anchor in another item,
// invalid YAML) — is converted whole, so the decoded objects and error messages are those of
// yaml.YAMLToJSON (the JSON differs only in where "items" comes among the list's keys).
func listYAMLToJSON(doc []byte) ([]byte, error) {
	rest, items, ok := splitYAMLList(doc)
	if !ok || len(items) < minSplitItems {
		return yaml.YAMLToJSON(doc)
	}
	head, err := yaml.YAMLToJSON(rest)
	if err == nil && bytes.Equal(head, []byte("null")) { // nothing but the items
		head = []byte("{}")
	}
	if err != nil || !bytes.HasPrefix(head, []byte("{")) || !bytes.HasSuffix(head, []byte("}")) {
		return yaml.YAMLToJSON(doc)
	}
	converted := make([][]byte, len(items))
	var failed atomic.Bool
	forEachParallel(len(items), func(i int) {
		j, err := yaml.YAMLToJSON(items[i])
		// One item in a sequence converts to "[...]"; anything else is not what the split assumed.
		if err != nil || len(j) < 2 || j[0] != '[' || j[len(j)-1] != ']' {
			failed.Store(true)
			return
		}
		converted[i] = j[1 : len(j)-1]
	})
	if failed.Load() {
		return yaml.YAMLToJSON(doc)
	}
	var out bytes.Buffer
	out.Grow(len(doc))
	out.Write(head[:len(head)-1])
	if len(head) > 2 {
		out.WriteByte(',')
	}
	out.WriteString(`"items":[`)
	for i, j := range converted {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(j)
	}
	out.WriteString("]}")
	return out.Bytes(), nil
}

// splitYAMLList cuts a document into its top-level lines without the "items:" block (rest) and that
// block's entries, each a one-entry YAML sequence. ok is false when the document has no top-level
// "items:" line followed by entries in column 0, or has it twice.
func splitYAMLList(doc []byte) (rest []byte, items [][]byte, ok bool) {
	var restBuf bytes.Buffer
	inItems, seen := false, false
	start := -1 // offset of the current item's first line
	for off := 0; off < len(doc); {
		end := bytes.IndexByte(doc[off:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += off + 1
		}
		line := doc[off:end]
		trimmed := bytes.TrimRight(line, " \t\r\n")
		switch {
		case inItems && (bytes.HasPrefix(line, []byte("- ")) || bytes.Equal(trimmed, []byte("-"))):
			if start >= 0 {
				items = append(items, doc[start:off])
			}
			start = off
		case inItems && (len(trimmed) == 0 || line[0] == ' ' || line[0] == '\t' || line[0] == '#'):
			// a line of the current item (or blank, or a comment)
			if start < 0 && len(trimmed) > 0 && line[0] != '#' {
				return nil, nil, false // indented entries: not kubectl's layout
			}
		case bytes.Equal(trimmed, []byte("items:")):
			if seen {
				return nil, nil, false
			}
			inItems, seen = true, true
		default:
			if inItems {
				if start >= 0 {
					items = append(items, doc[start:off])
				}
				inItems, start = false, -1
			}
			restBuf.Write(line)
			if !bytes.HasSuffix(line, []byte("\n")) {
				restBuf.WriteByte('\n')
			}
		}
		off = end
	}
	if inItems && start >= 0 {
		items = append(items, doc[start:])
	}
	if !seen || len(items) == 0 {
		return nil, nil, false
	}
	return restBuf.Bytes(), items, true
}
