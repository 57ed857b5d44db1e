package launchtemplate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMIMEKeepsPartsByteForByte(t *testing.T) {
	doc := "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"==B==\"\r\n\r\npreamble\r\n" +
		"--==B==\r\nContent-Type: text/x-shellscript\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\necho a=3Db\r\n" +
		"--==B==\r\nContent-Type: text/cloud-config\r\n\r\n#cloud-config\r\nruncmd: []\r\n\r\n" +
		"--==B==--\r\nepilogue\r\n"
	parts, err := ParseMIME(doc)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, "text/x-shellscript", parts[0].ContentType())
	assert.Equal(t, "quoted-printable", parts[0].Header.Get("Content-Transfer-Encoding"), "encodings are kept, not decoded")
	assert.Equal(t, "echo a=3Db", parts[0].Body)
	assert.Equal(t, "#cloud-config\r\nruncmd: []\r\n", parts[1].Body)
}

func TestParseMIMESinglePart(t *testing.T) {
	parts, err := ParseMIME("MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho hi\n")
	require.NoError(t, err)
	require.Len(t, parts, 1)
	assert.Equal(t, "text/x-shellscript", parts[0].ContentType())
	assert.Equal(t, "#!/bin/sh\necho hi\n", parts[0].Body)
	assert.Empty(t, parts[0].Header.Get("Mime-Version"), "only Content-* headers belong to the part")
}

func TestParseMIMEErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"no content type":      "MIME-Version: 1.0\n\nbody",
		"multipart, no bound":  "Content-Type: multipart/mixed\n\n--x\n\nbody\n--x--\n",
		"bad media type":       "Content-Type: ;;;\n\nbody",
		"unterminated headers": "Content-Type: multipart/mixed; boundary=x\nno colon here",
		"part never closed":    "Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/plain\n\nbody",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseMIME(doc)
			assert.Error(t, err)
		})
	}
}

func TestWriteMIMEPicksABoundaryNoPartContains(t *testing.T) {
	parts := []Part{NewPart(ContentTypeShell, "echo '--//nodewright'\necho //nodewright1")}
	doc := WriteMIME(parts)
	assert.Contains(t, doc, `boundary="//nodewright2"`)
	back, err := ParseMIME(doc)
	require.NoError(t, err)
	assert.Equal(t, parts, back)
}

func TestMergeUserData(t *testing.T) {
	ours := NewPart(ContentTypeNodeConfig, "ours")
	tests := []struct {
		name     string
		userData string
		want     []Part
	}{
		{"none", "", []Part{ours}},
		{"blank", " \n\t", []Part{ours}},
		{"shell script", "#!/bin/bash\necho hi\n", []Part{NewPart(ContentTypeShell, "#!/bin/bash\necho hi\n"), ours}},
		{"cloud-config", "#cloud-config\npackages: [jq]\n", []Part{NewPart(ContentTypeCloudInit, "#cloud-config\npackages: [jq]\n"), ours}},
		{"MIME", "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--b--\n",
			[]Part{NewPart("text/plain", "x"), ours}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := MergeUserData(tt.userData, guessScript, ours)
			require.NoError(t, err)
			got, err := ParseMIME(doc)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzMergeUserData checks that no user data makes the merge panic, and that whenever it succeeds the
// result is a MIME document whose last part is exactly Nodewright's, after every part of the user's.
func FuzzMergeUserData(f *testing.F) {
	for _, seed := range []string{
		"", "#!/bin/bash\necho hi", userMIME, userNodeConfig, userShell,
		"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//nodewright\"\n\n--//nodewright\n\nx\n--//nodewright--\n",
		"Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/plain\n\n--x--",
		"Content-Type: text/plain\n\nbody --//nodewright",
		"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"a\"\n\n--a\nX: \xff\n\n\r\n--a--",
		"Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: multipart/mixed; boundary=y\n\n--y\n\ninner\n--y--\n--x--\n",
		"MIME-Version:", "Content-Type: multipart/mixed; boundary=\"\"\n\n", "content-type: text/x-shellscript\n\n\n",
	} {
		f.Add(seed)
	}
	ours := NewPart(ContentTypeNodeConfig, "# ours\napiVersion: node.eks.aws/v1alpha1\n")
	f.Fuzz(func(t *testing.T, userData string) {
		doc, err := MergeUserData(userData, guessAL2023, ours)
		if err != nil {
			return
		}
		parts, err := ParseMIME(doc)
		require.NoError(t, err, "merged document must parse:\n%s", doc)
		require.NotEmpty(t, parts)
		assert.Equal(t, ours, parts[len(parts)-1])
		if IsMIME(userData) {
			user, err := ParseMIME(userData)
			require.NoError(t, err)
			assert.Equal(t, len(user)+1, len(parts))
		} else if strings.TrimSpace(userData) != "" {
			assert.Len(t, parts, 2)
			assert.Equal(t, userData, parts[0].Body)
		}
	})
}
