package platformnrps

import "strings"

// NextLink returns the target of the first link whose relation types
// include "next" in Link header values (RFC 8288 §3): several values,
// several links in each, parameters in any case with quoted or bare
// values, relation types compared without case. The target is returned
// exactly as written between < and >.
func NextLink(values []string) (string, bool) {
	for _, v := range values {
		for s := v; ; {
			target, params, rest, ok := nextLinkValue(s)
			if !ok {
				break
			}
			if rel, ok := params["rel"]; ok {
				for _, t := range strings.Fields(rel) {
					if strings.EqualFold(t, "next") {
						return target, true
					}
				}
			}
			s = rest
		}
	}
	return "", false
}

// nextLinkValue reads one link-value from s, after any separating commas
// and spaces: its target, its parameters (names lower-cased; the first of
// a repeated name counts, §3.3) and what follows it.
func nextLinkValue(s string) (target string, params map[string]string, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t,")
	if !strings.HasPrefix(s, "<") {
		return "", nil, "", false
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return "", nil, "", false
	}
	target, s = s[1:end], s[end+1:]
	params = map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ";") {
			// The end, or the comma before the next link-value; anything
			// else is not a link-value, and ends the header's reading.
			if s != "" && s[0] != ',' {
				return target, params, "", true
			}
			return target, params, s, true
		}
		s = strings.TrimLeft(s[1:], " \t")
		i := strings.IndexAny(s, "=;, \t")
		if i < 0 {
			i = len(s)
		}
		name := strings.ToLower(s[:i])
		s = strings.TrimLeft(s[i:], " \t")
		value := ""
		if strings.HasPrefix(s, "=") {
			value, s = paramValue(strings.TrimLeft(s[1:], " \t"))
		}
		if _, seen := params[name]; !seen && name != "" {
			params[name] = value
		}
	}
}

// paramValue reads a token or a quoted-string (with its backslash escapes)
// from the start of s.
func paramValue(s string) (value, rest string) {
	if !strings.HasPrefix(s, `"`) {
		i := strings.IndexAny(s, ";, \t")
		if i < 0 {
			return s, ""
		}
		return s[:i], s[i:]
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), "" // an unterminated quote runs to the end
}
