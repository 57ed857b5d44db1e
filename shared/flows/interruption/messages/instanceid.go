package messages

import "strconv"

// IsInstanceID reports whether s has the shape of an EC2 instance id: "i-" and 8 or 17 lowercase hex
// digits.
func IsInstanceID(s string) bool {
	if len(s) != len("i-")+8 && len(s) != len("i-")+17 {
		return false
	}
	if s[0] != 'i' || s[1] != '-' {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// RequireInstanceID returns a *MalformedError naming field when id is empty or not an instance id.
func RequireInstanceID(env Envelope, field, id string) error {
	if id == "" {
		return Malformed(env, field, "missing")
	}
	if !IsInstanceID(id) {
		return Malformed(env, field, "not an EC2 instance id: "+quoteShort(id))
	}
	return nil
}

// quoteShort quotes s for an error message, cut to a length a log line can carry.
func quoteShort(s string) string {
	const limit = 64
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "…"
	}
	return strconv.Quote(s)
}
