package launchtemplate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
)

// MIME content types of user data parts.
const (
	ContentTypeShell      = `text/x-shellscript; charset="us-ascii"`
	ContentTypeNodeConfig = "application/node.eks.aws"
	ContentTypeCloudInit  = "text/cloud-config"
)

// mimeBoundary is the boundary of the documents Nodewright writes; when a part contains it, a counter is
// appended until it no longer occurs anywhere.
const mimeBoundary = "//nodewright"

// Part is one part of a MIME multipart user data document: its headers and its body, kept byte for byte
// (a Content-Transfer-Encoding stays encoded).
type Part struct {
	Header textproto.MIMEHeader
	Body   string
}

// NewPart returns a part with only a Content-Type header.
func NewPart(contentType, body string) Part {
	return Part{Header: textproto.MIMEHeader{"Content-Type": {contentType}}, Body: body}
}

// ContentType is the part's Content-Type header.
func (p Part) ContentType() string { return p.Header.Get("Content-Type") }

// IsMIME reports whether user data is a MIME document rather than a bare script or config.
func IsMIME(userData string) bool {
	head := strings.TrimLeft(userData, " \t\r\n")
	return hasPrefixFold(head, "MIME-Version:") || hasPrefixFold(head, "Content-Type:")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ParseMIME splits a MIME document into its parts. A multipart document gives its parts (preamble and
// epilogue are dropped); a single-part document gives one part with its own headers.
func ParseMIME(doc string) ([]Part, error) {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(strings.TrimLeft(doc, " \t\r\n"))))
	header, err := r.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("reading MIME headers: %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("reading MIME Content-Type %q: %w", header.Get("Content-Type"), err)
	}
	body, err := io.ReadAll(r.R)
	if err != nil {
		return nil, fmt.Errorf("reading MIME body: %w", err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		part := Part{Header: textproto.MIMEHeader{}, Body: string(body)}
		for key, values := range header {
			if strings.HasPrefix(key, "Content-") {
				part.Header[key] = values
			}
		}
		return []Part{part}, nil
	}
	if params["boundary"] == "" {
		return nil, fmt.Errorf("MIME multipart document has no boundary")
	}
	mr := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
	var parts []Part
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading MIME part %d: %w", len(parts)+1, err)
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading MIME part %d: %w", len(parts)+1, err)
		}
		parts = append(parts, Part{Header: p.Header, Body: string(content)})
	}
}

// WriteMIME writes parts as one multipart/mixed document with LF line endings, headers in sorted order.
func WriteMIME(parts []Part) string {
	boundary := mimeBoundary
	for i := 1; boundaryClashes(boundary, parts); i++ {
		boundary = mimeBoundary + strconv.Itoa(i)
	}
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\n\n", boundary)
	for _, p := range parts {
		b.WriteString("--" + boundary + "\n")
		keys := make([]string, 0, len(p.Header))
		for k := range p.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range p.Header[k] {
				b.WriteString(k + ": " + v + "\n")
			}
		}
		b.WriteString("\n" + p.Body + "\n")
	}
	b.WriteString("--" + boundary + "--\n")
	return b.String()
}

func boundaryClashes(boundary string, parts []Part) bool {
	for _, p := range parts {
		if strings.Contains(p.Body, boundary) {
			return true
		}
		for k, vs := range p.Header {
			if strings.Contains(k, boundary) || strings.Contains(strings.Join(vs, "\n"), boundary) {
				return true
			}
		}
	}
	return false
}

// MergeUserData puts the user's user data first and Nodewright's parts after it, in one multipart
// document, so that whatever runs or merges later (nodeadm's NodeConfig merge, the bootstrap script)
// sees Nodewright's settings last. User data that is not MIME becomes one part whose content type is
// guessed by guess; empty user data adds nothing.
func MergeUserData(userData string, guess func(string) string, ours ...Part) (string, error) {
	var parts []Part
	switch {
	case strings.TrimSpace(userData) == "":
	case IsMIME(userData):
		userParts, err := ParseMIME(userData)
		if err != nil {
			return "", fmt.Errorf("parsing the node class's MIME user data: %w", err)
		}
		parts = userParts
	default:
		parts = []Part{NewPart(guess(userData), userData)}
	}
	return WriteMIME(append(parts, ours...)), nil
}

// guessScript names the content type of a bare script by its first line, as cloud-init does, defaulting
// to a shell script.
func guessScript(text string) string {
	if strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "#cloud-config") {
		return ContentTypeCloudInit
	}
	return ContentTypeShell
}
