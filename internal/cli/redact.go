package cli

import (
	"strings"
)

// secretHeader reports whether a header name carries credentials.
func secretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// redactHeaderArg redacts the value of a K=V header argument when K carries credentials.
func redactHeaderArg(h string) string {
	k, _, ok := strings.Cut(h, "=")
	if ok && secretHeader(k) {
		return k + "=REDACTED"
	}
	return h
}

func redactHeaders(hs []string) []string {
	if hs == nil {
		return nil
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = redactHeaderArg(h)
	}
	return out
}

// redactArgs returns the command line with secrets replaced: the value of --api-key and of
// credential-bearing --header arguments, in both "--flag value" and "--flag=value" forms.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--api-key" && i+1 < len(out):
			out[i+1] = "REDACTED"
			i++
		case strings.HasPrefix(a, "--api-key="):
			out[i] = "--api-key=REDACTED"
		case a == "--header" && i+1 < len(out):
			out[i+1] = redactHeaderArg(out[i+1])
			i++
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redactHeaderArg(strings.TrimPrefix(a, "--header="))
		}
	}
	return out
}

// redactSecret removes every occurrence of secret from s (error messages from servers or
// libraries may echo a key back).
func redactSecret(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "REDACTED")
}
