package runspec

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces every secret in logs, records and reports.
const Redacted = "REDACTED"

// SecretHeader reports whether a header name carries credentials.
func SecretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// RedactHeaderArg redacts the value of a K=V header argument when K carries credentials.
func RedactHeaderArg(h string) string {
	k, _, ok := strings.Cut(h, "=")
	if ok && SecretHeader(k) {
		return k + "=" + Redacted
	}
	return h
}

// RedactEnv redacts the value of each K=V environment setting whose name carries credentials
// (HF_TOKEN, OPENAI_API_KEY), as a header's.
func RedactEnv(env []string) []string {
	if env == nil {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = RedactHeaderArg(kv)
	}
	return out
}

// RedactHeaders redacts every credential-bearing K=V header argument.
func RedactHeaders(hs []string) []string {
	if hs == nil {
		return nil
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = RedactHeaderArg(h)
	}
	return out
}

// RedactURL removes the user information (user:password@) of a URL: both parts can be
// credentials. A string that does not parse as a URL is returned with anything before an "@"
// in its authority removed all the same.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		if u.User == nil {
			return raw
		}
		u.User = url.User(Redacted)
		return u.String()
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	auth, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		auth = Redacted + auth[i:]
	}
	if path != "" || strings.Contains(rest, "/") {
		return scheme + "://" + auth + "/" + path
	}
	return scheme + "://" + auth
}

// Secrets are the values that must never be written anywhere: the API key, the values of
// credential-bearing headers, and the URL's password (with its Basic Authorization encoding)
// and user name.
func (s *Spec) Secrets() []string {
	var out []string
	if s.APIKey != "" {
		out = append(out, s.APIKey)
	}
	if u, err := url.Parse(s.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			// the Basic Authorization value Go sends for it, which a server may echo back
			basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + p))
			out = append(out, p, url.QueryEscape(p), basic)
		}
		if n := u.User.Username(); len(n) > 3 {
			out = append(out, n)
		}
	}
	for _, h := range append(slices.Clone(s.Headers), s.ServerEnv...) {
		if k, v, ok := strings.Cut(h, "="); ok && SecretHeader(k) && len(v) > 3 {
			out = append(out, v, strings.TrimPrefix(v, "Bearer "))
		}
	}
	return out
}

// Redact removes every secret of s from msg (error messages from servers or libraries may echo
// a key back).
func (s *Spec) Redact(msg string) string {
	msg = RedactSecrets(msg, s.Secrets()...)
	return msg
}

// RedactSecrets removes every occurrence of each secret from msg.
func RedactSecrets(msg string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, Redacted)
		}
	}
	return msg
}

// RedactArgs returns a command line with secrets replaced: the value of --api-key, of
// credential-bearing --header arguments and the user information of --url and --scrape, in both
// "--flag value" and "--flag=value" forms.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--api-key" && i+1 < len(out):
			out[i+1] = Redacted
			i++
		case strings.HasPrefix(a, "--api-key="):
			out[i] = "--api-key=" + Redacted
		case a == "--header" && i+1 < len(out):
			out[i+1] = RedactHeaderArg(out[i+1])
			i++
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + RedactHeaderArg(strings.TrimPrefix(a, "--header="))
		case a == "--scrape" && i+1 < len(out):
			out[i+1] = RedactURL(out[i+1])
			i++
		case strings.HasPrefix(a, "--scrape="):
			out[i] = "--scrape=" + RedactURL(strings.TrimPrefix(a, "--scrape="))
		case a == "--url" && i+1 < len(out):
			out[i+1] = RedactURL(out[i+1])
			i++
		case strings.HasPrefix(a, "--url="):
			out[i] = "--url=" + RedactURL(strings.TrimPrefix(a, "--url="))
		}
	}
	return out
}
