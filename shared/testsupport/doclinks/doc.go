// Package doclinks checks the repository's Markdown documentation: every relative link in every README
// (and every other .md file kept in git) must name a file or folder that exists and, when it names a
// heading (file.md#heading, or #heading in the same file), a heading that file has, spelled as GitHub
// turns headings into anchors. The documentation lives beside the code it describes, so a move or a
// renamed section must not leave a dead link behind; the package's test walks the repository.
package doclinks
