package nodeclass

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"
)

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// notFound reports whether EC2 or SSM answered that a named thing does not exist: a selector that matches
// nothing, not a failure.
func notFound(err error) bool {
	code := apiCode(err)
	return code == "ParameterNotFound" || strings.HasSuffix(code, ".NotFound") || strings.HasSuffix(code, ".Malformed")
}
